package model_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"gorm.io/gorm"

	"tollgate/model"
)

// stmtCacheOn: batches of logs written in transactions, as the writer does, come to run through prepared
// statements (prepared in the background after their first, unprepared use — on SQLite the transaction holds
// the only connection, so preparing inside it would wait for itself), and every row arrives once.
func stmtCacheOn(t *testing.T, s *model.Store) {
	t.Helper()
	ctx := context.Background()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	rows := 0
	write := func(n int) {
		t.Helper()
		batch := make([]model.UsageLog, n)
		for i := range batch {
			batch[i] = model.UsageLog{RequestID: fmt.Sprintf("p-%d", rows), CreatedAt: at.Add(time.Duration(rows) * time.Second),
				UserID: 1, TokenID: 1, ChannelID: 1, Model: "m", Status: "success", Cost: 7}
			rows++
		}
		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if err := s.AddLogs(wctx, batch); err != nil {
			t.Fatalf("write %d rows: %v", n, err)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for model.PreparedExecs(s) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no write ran through a prepared statement")
		}
		write(25)
		time.Sleep(5 * time.Millisecond)
	}
	// Each batch of 25 rows (one key, channel and model, one day): its inserts (chunks of 10 on SQLite, one
	// statement on MySQL) and one upsert into each daily table, all prepared once their background prepares
	// have landed (the daily sums' texts are met in the same batches).
	inserts := int64(1)
	if s.Kind == "sqlite" {
		inserts = 3
	}
	for {
		b := model.PreparedExecs(s)
		write(25)
		if model.PreparedExecs(s)-b >= inserts+2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a batch's inserts and daily upserts never all ran prepared")
		}
		time.Sleep(5 * time.Millisecond)
	}
	before := model.PreparedExecs(s)
	for range 20 {
		write(25)
	}
	if got := model.PreparedExecs(s) - before; got < 20*(inserts+2) {
		t.Fatalf("%d prepared executions over 20 batches, want %d a batch (inserts and both daily upserts)", got, inserts+2)
	}
	var n int64
	if err := s.LogStore().DB.Model(&model.UsageLog{}).Count(&n).Error; err != nil || n != int64(rows) {
		t.Fatalf("rows = %d (%v), want %d", n, err, rows)
	}
	// A replayed batch writes nothing (its prepared insert counts fewer rows than the batch, and the batch is rolled back to the savepoint).
	rows -= 25
	write(25)
	if err := s.LogStore().DB.Model(&model.UsageLog{}).Count(&n).Error; err != nil || n != int64(rows) {
		t.Fatalf("rows after a replayed batch = %d (%v), want %d", n, err, rows)
	}
}

func TestStmtCache_LogBatchesRunPreparedOnSQLite(t *testing.T) {
	stmtCacheOn(t, open(t, "", filepath.Join(t.TempDir(), "stmt.db")))
}

func TestStmtCache_LogBatchesRunPreparedOnMySQL(t *testing.T) {
	stmtCacheOn(t, open(t, freshMySQL(t), ""))
}

// The writer's balance updates run prepared too, and do what they say: a user's quota, used quota and request
// count; a limited key's remain and used quota (an unlimited key's remain untouched) and its last use.
func balanceUpdatesOn(t *testing.T, s *model.Store) {
	t.Helper()
	ctx := context.Background()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	u := &model.User{Username: "bal", Quota: 1000}
	if err := s.DB.Create(u).Error; err != nil {
		t.Fatal(err)
	}
	limited := &model.Token{UserID: u.ID, Name: "l", KeyHash: "h-l", RemainQuota: 500}
	unlimited := &model.Token{UserID: u.ID, Name: "u", KeyHash: "h-u", RemainQuota: 500, Unlimited: true}
	for _, tk := range []*model.Token{limited, unlimited} {
		if err := s.DB.Create(tk).Error; err != nil {
			t.Fatal(err)
		}
	}
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	apply := func() {
		t.Helper()
		err := s.Transact(ctx, func(tx *gorm.DB) error {
			if err := s.AddUserUsage(ctx, tx, u.ID, 7, 2); err != nil {
				return err
			}
			if err := s.AddTokenUsage(ctx, tx, limited.ID, 5, at); err != nil {
				return err
			}
			return s.AddTokenUsage(ctx, tx, unlimited.ID, 2, at)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	apply()
	deadline := time.Now().Add(20 * time.Second)
	for before := model.PreparedExecs(s); model.PreparedExecs(s)-before < 3; {
		if time.Now().After(deadline) {
			t.Fatal("the balance updates never ran through prepared statements")
		}
		time.Sleep(10 * time.Millisecond)
		before = model.PreparedExecs(s)
		apply()
	}
	var got model.User
	if err := s.DB.First(&got, u.ID).Error; err != nil {
		t.Fatal(err)
	}
	var l, un model.Token
	if err := s.DB.First(&l, limited.ID).Error; err != nil {
		t.Fatal(err)
	}
	if err := s.DB.First(&un, unlimited.ID).Error; err != nil {
		t.Fatal(err)
	}
	n := (1000 - got.Quota) / 7 // how many times apply ran
	if n < 2 || got.UsedQuota != 7*n || got.RequestCount != 2*n {
		t.Fatalf("user after %d applies: quota %d used %d requests %d", n, got.Quota, got.UsedQuota, got.RequestCount)
	}
	if l.RemainQuota != 500-5*n || l.UsedQuota != 5*n || l.LastUsedAt == nil || !l.LastUsedAt.Equal(at) {
		t.Fatalf("limited key: remain %d used %d last %v", l.RemainQuota, l.UsedQuota, l.LastUsedAt)
	}
	if un.RemainQuota != 500 || un.UsedQuota != 2*n {
		t.Fatalf("unlimited key: remain %d used %d", un.RemainQuota, un.UsedQuota)
	}
}

func TestBalanceUpdates_PreparedOnSQLite(t *testing.T) {
	balanceUpdatesOn(t, open(t, "", filepath.Join(t.TempDir(), "bal.db")))
}

func TestBalanceUpdates_PreparedOnMySQL(t *testing.T) {
	balanceUpdatesOn(t, open(t, freshMySQL(t), ""))
}

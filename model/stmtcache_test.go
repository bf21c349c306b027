package model_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

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
	before := model.PreparedExecs(s)
	for range 20 {
		write(25)
	}
	if got := model.PreparedExecs(s) - before; got < 20 {
		t.Fatalf("%d prepared executions over 20 batches, want at least one per batch", got)
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

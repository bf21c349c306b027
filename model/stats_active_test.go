package model_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"tollgate/model"
)

// activeOn: users and keys are counted once however many days and edges they appear on; a whole day is read
// from the daily sums (its raw rows deleted, as retention would); channel tests and rows outside the window
// are left out.
func activeOn(t *testing.T, s *model.Store) {
	t.Helper()
	ctx := context.Background()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	day0 := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	var rows []model.UsageLog
	add := func(at time.Time, user, token int64, test bool) {
		rows = append(rows, model.UsageLog{RequestID: fmt.Sprintf("a-%d", len(rows)), CreatedAt: at, UserID: user, TokenID: token,
			ChannelID: 7, Model: "m1", Status: "success", IsTest: test, Cost: 5})
	}
	add(day0.Add(20*time.Hour), 1, 11, false) // partial start day
	add(day0.Add(21*time.Hour), 1, 11, false) // same key again
	add(day0.Add(30*time.Hour), 1, 11, false) // whole day: same key
	add(day0.Add(31*time.Hour), 2, 21, false) // whole day
	add(day0.Add(32*time.Hour), 2, 22, false) // whole day, bob's second key
	add(day0.Add(50*time.Hour), 3, 31, false) // partial end day
	add(day0.Add(33*time.Hour), 9, 0, true)   // a channel test: no user, no key
	add(day0.Add(51*time.Hour), 9, 0, true)   // a channel test on an edge
	add(day0.Add(-time.Hour), 4, 41, false)   // before the window
	add(day0.Add(70*time.Hour), 5, 51, false) // after it
	if err := s.AddLogs(ctx, rows); err != nil {
		t.Fatal(err)
	}
	if r := s.LogStore().DB.Where("created_at >= ? AND created_at < ?", day0.Add(24*time.Hour), day0.Add(48*time.Hour)).
		Delete(&model.UsageLog{}); r.Error != nil || r.RowsAffected != 4 {
		t.Fatalf("delete the whole day's rows: %v %d", r.Error, r.RowsAffected)
	}
	got, err := s.ActiveUsersAndKeys(ctx, day0.Add(18*time.Hour), day0.Add(60*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if got != (model.ActiveCounts{Users: 3, Keys: 4}) {
		t.Fatalf("whole + partial days = %+v, want 3 users 4 keys", got)
	}
	// A window inside one day reads raw rows only.
	got, err = s.ActiveUsersAndKeys(ctx, day0.Add(19*time.Hour), day0.Add(22*time.Hour))
	if err != nil || got != (model.ActiveCounts{Users: 1, Keys: 1}) {
		t.Fatalf("partial day = %+v, %v", got, err)
	}
	got, err = s.ActiveUsersAndKeys(ctx, day0.Add(80*time.Hour), day0.Add(90*time.Hour))
	if err != nil || got != (model.ActiveCounts{}) {
		t.Fatalf("empty window = %+v, %v", got, err)
	}
}

func TestActiveUsersAndKeys_CountsOnceAcrossDaysOnSQLite(t *testing.T) {
	activeOn(t, open(t, "", filepath.Join(t.TempDir(), "active.db")))
}

func TestActiveUsersAndKeys_CountsOnceAcrossDaysOnMySQL(t *testing.T) {
	activeOn(t, open(t, freshMySQL(t), ""))
}

package stats

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"tollgate/model"
	"tollgate/service/fleet"
)

// fakeFleet answers fixed rollups and remembers the window it was asked for.
type fakeFleet struct {
	rows     []fleet.Stats
	from, to time.Time
}

func (f *fakeFleet) Range(_ context.Context, from, to time.Time) ([]fleet.Stats, error) {
	f.from, f.to = from, to
	return f.rows, nil
}

func (f *fakeFleet) RangeByDay(context.Context, time.Time, time.Time) (map[string]fleet.Stats, error) {
	return nil, nil
}

func TestOverview_ActiveUsersKeysAndErrorsByClass(t *testing.T) {
	ctx := context.Background()
	st, err := model.Open("", filepath.Join(t.TempDir(), "overview.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 5, 3, 12, 0, 0, 0, time.UTC)
	var rows []model.UsageLog
	for i, u := range []struct{ user, token int64 }{{1, 11}, {1, 12}, {2, 21}, {2, 21}} {
		rows = append(rows, model.UsageLog{RequestID: fmt.Sprintf("o-%d", i), CreatedAt: now.Add(-time.Duration(i+1) * time.Hour),
			UserID: u.user, TokenID: u.token, ChannelID: 1, Model: "m", Status: "success"})
	}
	rows = append(rows, model.UsageLog{RequestID: "o-test", CreatedAt: now.Add(-time.Hour), UserID: 7, ChannelID: 1, Model: "m", Status: "success", IsTest: true})
	if err := st.AddLogs(ctx, rows); err != nil {
		t.Fatal(err)
	}
	ff := &fakeFleet{rows: []fleet.Stats{
		{ChannelID: 1, Model: "m", Classes: map[string]int64{"": 40, "server": 2, "timeout": 1}},
		{ChannelID: 2, Model: "m", Classes: map[string]int64{"server": 3, "rate_limited": 5, "auth": 0}},
	}}
	s := &Service{store: st, now: func() time.Time { return now }, Fleet: ff}
	got, err := s.Overview(ctx, time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if got.ActiveUsers != 2 || got.ActiveKeys != 3 {
		t.Fatalf("active = %d users %d keys, want 2 and 3 (the test row left out)", got.ActiveUsers, got.ActiveKeys)
	}
	want := []ClassCount{{"rate_limited", 5}, {"server", 5}, {"timeout", 1}}
	if fmt.Sprint(got.Errors) != fmt.Sprint(want) {
		t.Fatalf("errors = %v, want %v (successes and zero counts left out, most first)", got.Errors, want)
	}
	if !ff.to.Equal(now) || !ff.from.Equal(now.Add(-DefaultSpan)) {
		t.Fatalf("fleet asked for [%v, %v)", ff.from, ff.to)
	}
	if _, err := s.Overview(ctx, now, now.Add(-time.Hour)); err == nil {
		t.Fatal("a window ending before it starts was accepted")
	}
	s.Fleet = nil
	if got, err := s.Overview(ctx, time.Time{}, time.Time{}); err != nil || got.Errors == nil || len(got.Errors) != 0 {
		t.Fatalf("without a fleet = %+v, %v (want an empty list)", got, err)
	}
}

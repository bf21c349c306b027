package model_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"tollgate/model"
)

// usageStatsOn checks UsageStats' sums, exclusions and nearest-rank percentiles on one database.
func usageStatsOn(t *testing.T, s *model.Store) {
	t.Helper()
	ctx := context.Background()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	day1 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	day2 := day1.Add(24 * time.Hour)
	var rows []model.UsageLog
	add := func(l model.UsageLog) {
		l.RequestID = fmt.Sprintf("req-%d", len(rows))
		if l.Model == "" {
			l.Model = "m1"
		}
		if l.Status == "" {
			l.Status = "success"
		}
		rows = append(rows, l)
	}
	// Channel 7, user 1: 100 successes taking 1 … 100 ms (first byte half of it) on day 1, 10 slow errors.
	for i := 1; i <= 100; i++ {
		add(model.UsageLog{CreatedAt: day1, UserID: 1, Username: "ann", ChannelID: 7, ChannelName: "seven", ElapsedMs: int64(i),
			FirstByteMs: int64(i) * 2, Cost: 750, UpstreamCost: 500, PromptTokens: 1000, CompletionTokens: 1000})
	}
	for range 10 {
		add(model.UsageLog{CreatedAt: day2, UserID: 2, Username: "bob", ChannelID: 7, ChannelName: "seven", Status: "error", ElapsedMs: 90_000})
	}
	// Channel 8, model m2, user 2 on day 2: 3 calls, one with a loss.
	for _, c := range []int64{100, 100, 10} {
		add(model.UsageLog{CreatedAt: day2, UserID: 2, Username: "bob", ChannelID: 8, ChannelName: "eight", Model: "m2", ElapsedMs: 5, Cost: c, UpstreamCost: 40})
	}
	// Left out: a refusal no channel served (by channel only), a channel test, rows outside the window.
	add(model.UsageLog{CreatedAt: day2, UserID: 3, Username: "cy", Status: "error", Model: "m3"})
	add(model.UsageLog{CreatedAt: day1, ChannelID: 7, IsTest: true, Cost: 1_000_000, UpstreamCost: 1_000_000})
	add(model.UsageLog{CreatedAt: day1.Add(-48 * time.Hour), UserID: 1, ChannelID: 7, Cost: 1_000_000})
	add(model.UsageLog{CreatedAt: day2.Add(48 * time.Hour), UserID: 1, ChannelID: 7, Cost: 1_000_000})
	if err := s.DB.CreateInBatches(rows, 50).Error; err != nil {
		t.Fatal(err)
	}
	from, to := day1.Add(-time.Hour), day2.Add(time.Hour)

	ch, err := s.UsageStats(ctx, model.StatsByChannel, from, to, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch) != 2 {
		t.Fatalf("channels = %+v", ch)
	}
	want7 := model.StatsRow{Key: "7", Name: "seven", Requests: 110, Successes: 100, PromptTokens: 100_000, CompletionTokens: 100_000,
		Revenue: 75_000, UpstreamCost: 50_000, P50Ms: 50, P95Ms: 95, FirstByteP50Ms: 100}
	if ch[0] != want7 {
		t.Fatalf("channel 7 = %+v, want %+v", ch[0], want7)
	}
	want8 := model.StatsRow{Key: "8", Name: "eight", Requests: 3, Successes: 3, Revenue: 210, UpstreamCost: 120, P50Ms: 5, P95Ms: 5}
	if ch[1] != want8 {
		t.Fatalf("channel 8 = %+v, want %+v", ch[1], want8)
	}

	ms, err := s.UsageStats(ctx, model.StatsByModel, from, to, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 3 || ms[0].Key != "m1" || ms[0].Requests != 110 || ms[1].Key != "m2" || ms[2].Key != "m3" || ms[2].Requests != 1 || ms[2].P50Ms != 0 {
		t.Fatalf("models = %+v", ms)
	}

	days, err := s.UsageStats(ctx, model.StatsByDay, from, to, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(days) != 2 || days[0].Key != "2026-03-01" || days[0].Requests != 100 || days[0].Revenue != 75_000 ||
		days[1].Key != "2026-03-02" || days[1].Requests != 14 || days[1].Revenue != 210 || days[1].P50Ms != 5 {
		t.Fatalf("days = %+v", days)
	}

	users, err := s.UsageStats(ctx, model.StatsByUser, from, to, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 1 || users[0].Key != "1" || users[0].Name != "ann" || users[0].Revenue != 75_000 || users[0].P95Ms != 95 {
		t.Fatalf("top user = %+v", users)
	}
	empty, err := s.UsageStats(ctx, model.StatsByChannel, to, to.Add(time.Hour), 0)
	if err != nil || len(empty) != 0 {
		t.Fatalf("empty window = %+v, %v", empty, err)
	}
}

func TestUsageStats_SumsAndPercentilesOnSQLite(t *testing.T) {
	usageStatsOn(t, open(t, "", filepath.Join(t.TempDir(), "stats.db")))
}

func TestUsageStats_SumsAndPercentilesOnMySQL(t *testing.T) {
	usageStatsOn(t, open(t, freshMySQL(t), ""))
}

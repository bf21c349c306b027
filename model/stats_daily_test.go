package model_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"tollgate/model"
)

// dailyStatsOn: a window with whole days reads them from the daily sums — the raw rows of the middle day are
// deleted (as retention would) and still count — and the partial days at the ends from the raw rows; channel
// tests are left out; users are named from the users table; the sums equal what the rows held.
func dailyStatsOn(t *testing.T, s *model.Store) {
	t.Helper()
	ctx := context.Background()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for _, u := range []model.User{{ID: 1, Username: "ann"}, {ID: 2, Username: "bob"}} {
		u.Status = model.StatusEnabled
		if err := s.DB.Create(&u).Error; err != nil {
			t.Fatal(err)
		}
	}
	day0 := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	var rows []model.UsageLog
	add := func(at time.Time, user, ch int64, cost, up int64, test bool, status string) {
		rows = append(rows, model.UsageLog{RequestID: fmt.Sprintf("d-%d", len(rows)), CreatedAt: at, UserID: user, TokenID: user * 10,
			ChannelID: ch, Model: "m1", Cost: cost, UpstreamCost: up, IsTest: test, Status: status, PromptTokens: 100, CompletionTokens: 10})
	}
	for i := range 30 { // day 0 evening (a partial day at the start), day 1 (whole), day 2 morning (partial at the end)
		add(day0.Add(20*time.Hour+time.Duration(i)*time.Minute), 1, 7, 100, 60, false, "success")
		add(day0.Add(36*time.Hour+time.Duration(i)*time.Minute), 2, 7, 200, 50, false, []string{"success", "error"}[i%2])
		add(day0.Add(50*time.Hour+time.Duration(i)*time.Minute), 1, 8, 10, 5, false, "success")
	}
	add(day0.Add(37*time.Hour), 0, 7, 0, 0, true, "success") // a channel test on the whole day
	if err := s.AddLogs(ctx, rows); err != nil {
		t.Fatal(err)
	}
	whole := s.LogStore().DB.Where("created_at >= ? AND created_at < ?", day0.Add(24*time.Hour), day0.Add(48*time.Hour)).Delete(&model.UsageLog{})
	if whole.Error != nil || whole.RowsAffected != 31 {
		t.Fatalf("delete the whole day's rows: %v, %d", whole.Error, whole.RowsAffected)
	}
	from, to := day0.Add(18*time.Hour), day0.Add(60*time.Hour)
	ch, err := s.UsageStats(ctx, model.StatsByChannel, from, to, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch) != 2 || ch[0].Key != "7" || ch[0].Requests != 60 || ch[0].Successes != 45 || ch[0].Revenue != 9_000 ||
		ch[0].UpstreamCost != 3_300 || ch[0].PromptTokens != 6_000 || ch[1].Key != "8" || ch[1].Revenue != 300 {
		t.Fatalf("channels = %+v", ch)
	}
	days, err := s.UsageStats(ctx, model.StatsByDay, from, to, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(days) != 3 || days[1].Key != "2026-04-02" || days[1].Requests != 30 || days[1].Revenue != 6_000 || days[2].Revenue != 300 {
		t.Fatalf("days = %+v", days)
	}
	users, err := s.UsageStats(ctx, model.StatsByUser, from, to, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 1 || users[0].Key != "2" || users[0].Name != "bob" || users[0].Revenue != 6_000 {
		t.Fatalf("top user = %+v", users)
	}
}

func TestUsageStats_WholeDaysFromDailySumsOnSQLite(t *testing.T) {
	dailyStatsOn(t, open(t, "", filepath.Join(t.TempDir(), "daily.db")))
}

func TestUsageStats_WholeDaysFromDailySumsOnMySQL(t *testing.T) {
	dailyStatsOn(t, open(t, freshMySQL(t), ""))
}

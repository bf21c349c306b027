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

// writeLogsReportsOn: WriteLogs says exactly which rows of a batch it wrote — not the ones already stored nor
// a repeat within the batch — and the daily sums count only those, in the same transaction; a batch of new
// rows after it is all written.
func writeLogsReportsOn(t *testing.T, s *model.Store) {
	t.Helper()
	ctx := context.Background()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	row := func(id string, cost int64) model.UsageLog {
		return model.UsageLog{RequestID: id, CreatedAt: at, UserID: 1, TokenID: 1, ChannelID: 1, Model: "m", Status: "success", Cost: cost}
	}
	write := func(batch []model.UsageLog) []bool {
		t.Helper()
		var written []bool
		if err := s.LogStore().Transact(ctx, func(tx *gorm.DB) (err error) {
			written, err = s.WriteLogs(ctx, tx, batch)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return written
	}
	if got := fmt.Sprint(write([]model.UsageLog{row("a", 1), row("b", 2)})); got != "[true true]" {
		t.Fatalf("new batch: written %s", got)
	}
	got := fmt.Sprint(write([]model.UsageLog{row("c", 4), row("a", 1), row("d", 8), row("c", 4), row("b", 2), row("e", 16)}))
	if got != "[true false true false false true]" {
		t.Fatalf("mixed batch: written %s, want [true false true false false true]", got)
	}
	if got := fmt.Sprint(write([]model.UsageLog{row("f", 32)})); got != "[true]" {
		t.Fatalf("batch after the mixed one: written %s", got)
	}
	if _, err := s.WriteLogs(ctx, s.LogStore().DB, []model.UsageLog{row("g", 64)}); err == nil {
		t.Fatal("WriteLogs outside a transaction: no error")
	}
	var n, cost int64
	if err := s.LogStore().DB.Model(&model.UsageLog{}).Count(&n).Error; err != nil || n != 6 {
		t.Fatalf("rows = %d (%v), want 6", n, err)
	}
	var daily model.UsageDailyKey
	if err := s.LogStore().DB.Where("day = ? AND user_id = 1", "2026-06-01").First(&daily).Error; err != nil {
		t.Fatal(err)
	}
	if err := s.LogStore().DB.Model(&model.UsageLog{}).Select("SUM(cost)").Scan(&cost).Error; err != nil {
		t.Fatal(err)
	}
	if daily.Requests != 6 || daily.Cost != 63 || cost != 63 {
		t.Fatalf("daily sums %d rows, cost %d; rows' cost %d; want 6, 63, 63", daily.Requests, daily.Cost, cost)
	}
}

func TestWriteLogs_ReportsWhichRowsItWroteOnSQLite(t *testing.T) {
	writeLogsReportsOn(t, open(t, "", filepath.Join(t.TempDir(), "w.db")))
}

func TestWriteLogs_ReportsWhichRowsItWroteOnMySQL(t *testing.T) {
	writeLogsReportsOn(t, open(t, freshMySQL(t), ""))
}

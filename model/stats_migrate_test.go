package model_test

import (
	"context"
	"testing"
	"time"

	"gorm.io/gorm"

	"tollgate/model"
)

// TestMigrate_AddsUpstreamCostColumns starts from channels and usage_logs tables as they were before upstream
// cost existed, with a row in each, and checks that Migrate adds the columns, that old rows read as "no cost
// terms" and 0, and that the batched insert writes upstream_cost (on this pass's shape).
func TestMigrate_AddsUpstreamCostColumns(t *testing.T) {
	s := storeForPass(t)
	ctx := context.Background()
	m := s.DB.Migrator()
	for _, col := range []string{"cost_price", "cost_ratio", "cost_prices"} {
		if err := m.DropColumn(&model.Channel{}, col); err != nil {
			t.Fatalf("drop channels.%s: %v", col, err)
		}
	}
	if err := m.DropColumn(&model.UsageLog{}, "upstream_cost"); err != nil {
		t.Fatalf("drop usage_logs.upstream_cost: %v", err)
	}
	now := time.Now().UTC()
	if err := s.DB.Exec("INSERT INTO channels (type, name, base_url, created_at, updated_at) VALUES ('openai', 'old', 'https://x', ?, ?)", now, now).Error; err != nil {
		t.Fatalf("insert an old channel: %v", err)
	}
	if err := s.DB.Exec("INSERT INTO usage_logs (request_id, created_at, user_id, token_id, channel_id, model, status, cost) VALUES ('old-row', ?, 1, 1, 1, 'm', 'success', 750)", now).Error; err != nil {
		t.Fatalf("insert an old row: %v", err)
	}

	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	chs, err := s.AllChannels(ctx)
	if err != nil || len(chs) != 1 {
		t.Fatalf("channels = %v, %v", chs, err)
	}
	if c := chs[0]; c.CostPrice.V != nil || c.CostRatio.Valid || len(c.CostPrices.V) != 0 {
		t.Fatalf("old channel cost terms = %+v %+v %+v", c.CostPrice.V, c.CostRatio, c.CostPrices.V)
	}
	rows := []model.UsageLog{{RequestID: "new-row", CreatedAt: now, UserID: 1, ChannelID: 1, Model: "m", Status: "success", Cost: 750, UpstreamCost: 500}}
	if err := s.DB.Transaction(func(tx *gorm.DB) error { return s.InsertLogs(ctx, tx, rows) }); err != nil {
		t.Fatalf("insert logs: %v", err)
	}
	st, err := s.UsageStats(ctx, model.StatsByChannel, now.Add(-time.Minute), now.Add(time.Minute), 0)
	if err != nil || len(st) != 1 || st[0].Requests != 2 || st[0].Revenue != 1500 || st[0].UpstreamCost != 500 {
		t.Fatalf("stats after migrate = %+v, %v", st, err)
	}
}

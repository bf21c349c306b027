package model_test

import (
	"context"
	"testing"
	"time"

	"gorm.io/gorm"

	"tollgate/model"
)

// TestMigrate_AddsClientRequestIDAndErrorCodeToExistingLogs starts from a usage_logs table as it was before
// the gateway owned request ids (no client_request_id, error_code, error_shown), with a row in it, and checks
// that Migrate adds the columns with their defaults and the index, on this pass's shape (SQLite, or MariaDB).
func TestMigrate_AddsClientRequestIDAndErrorCodeToExistingLogs(t *testing.T) {
	s := storeForPass(t)
	ctx := context.Background()
	m := s.DB.Migrator()
	if err := m.DropIndex(&model.UsageLog{}, "idx_logs_client_request"); err != nil {
		t.Fatalf("drop index: %v", err)
	}
	for _, col := range []string{"client_request_id", "error_code", "error_shown"} {
		if err := m.DropColumn(&model.UsageLog{}, col); err != nil {
			t.Fatalf("drop %s: %v", col, err)
		}
	}
	if err := s.DB.Exec("INSERT INTO usage_logs (request_id, created_at, user_id, token_id, channel_id, model, status, error_class, error) VALUES (?, ?, 1, 1, 1, 'm', 'error', 'server', '500 upstream text')",
		"old-row", time.Now().UTC()).Error; err != nil {
		t.Fatalf("insert an old row: %v", err)
	}

	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	for _, col := range []string{"client_request_id", "error_code", "error_shown"} {
		if !m.HasColumn(&model.UsageLog{}, col) {
			t.Fatalf("column %s missing after migrate", col)
		}
	}
	if !m.HasIndex(&model.UsageLog{}, "idx_logs_client_request") {
		t.Fatal("index idx_logs_client_request missing after migrate")
	}
	var old model.UsageLog
	if err := s.DB.Where("request_id = ?", "old-row").First(&old).Error; err != nil {
		t.Fatalf("old row: %v", err)
	}
	if old.ClientRequestID != "" || old.ErrorCode != "" || old.ErrorShown {
		t.Fatalf("old row defaults = %q %q %v", old.ClientRequestID, old.ErrorCode, old.ErrorShown)
	}

	// The batched insert writes the new columns; two rows may share a client id, and both filters find them.
	rows := []model.UsageLog{
		{RequestID: "gw-1", ClientRequestID: "same", CreatedAt: time.Now().UTC(), UserID: 1, Model: "m", Status: "success"},
		{RequestID: "gw-2", ClientRequestID: "same", CreatedAt: time.Now().UTC(), UserID: 1, Model: "m", Status: "error",
			ErrorCode: "upstream_client", ErrorShown: true},
	}
	if err := s.DB.Transaction(func(tx *gorm.DB) error { return s.InsertLogs(ctx, tx, rows) }); err != nil {
		t.Fatalf("insert logs: %v", err)
	}
	got, err := s.ListLogs(ctx, model.LogFilter{ClientRequestID: "same"}, 0, 10)
	if err != nil || len(got) != 2 || got[0].RequestID != "gw-2" || got[0].ErrorCode != "upstream_client" || !got[0].ErrorShown {
		t.Fatalf("by client_request_id: %+v, %v", got, err)
	}
	if got, err := s.ListLogs(ctx, model.LogFilter{RequestID: "gw-1"}, 0, 10); err != nil || len(got) != 1 || got[0].ClientRequestID != "same" {
		t.Fatalf("by request_id: %+v, %v", got, err)
	}
}

package model

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Attempt is one upstream try inside a relayed request.
type Attempt struct {
	ChannelID int64  `json:"channel_id"`
	KeyIndex  int    `json:"key_index"`
	Class     string `json:"class"`
	Status    int    `json:"status"`
	LatencyMs int64  `json:"latency_ms"`
}

// PriceBreakdown is the unit price applied to a request (USD per 1M tokens / per call, as decimal strings).
type PriceBreakdown struct {
	Input      string `json:"input"`
	Output     string `json:"output"`
	CacheRead  string `json:"cache_read"`
	CacheWrite string `json:"cache_write"`
	PerCall    string `json:"per_call"`
}

// UsageLog is one relayed request, written once by the batched log writer.
type UsageLog struct {
	ID               int64                `gorm:"primaryKey" json:"id"`
	RequestID        string               `gorm:"type:varchar(64);not null;uniqueIndex" json:"request_id"`
	CreatedAt        time.Time            `gorm:"not null;index" json:"created_at"`
	UserID           int64                `gorm:"not null;index:idx_logs_user_id,priority:1" json:"user_id"`
	TokenID          int64                `gorm:"not null;index:idx_logs_token_id,priority:1" json:"token_id"`
	ChannelID        int64                `gorm:"not null;index:idx_logs_channel_id,priority:1" json:"channel_id"`
	Model            string               `gorm:"type:varchar(128);not null;index:idx_logs_model_id,priority:1" json:"model"`
	UpstreamModel    string               `gorm:"type:varchar(128);not null;default:''" json:"upstream_model"`
	Endpoint         string               `gorm:"type:varchar(32);not null;default:''" json:"endpoint"`
	Stream           bool                 `gorm:"not null;default:false" json:"stream"`
	PromptTokens     int64                `gorm:"not null;default:0" json:"prompt_tokens"`
	CompletionTokens int64                `gorm:"not null;default:0" json:"completion_tokens"`
	CacheReadTokens  int64                `gorm:"not null;default:0" json:"cache_read_tokens"`
	CacheWriteTokens int64                `gorm:"not null;default:0" json:"cache_write_tokens"`
	UsageEstimated   bool                 `gorm:"not null;default:false" json:"usage_estimated"`
	Cost             int64                `gorm:"not null;default:0" json:"cost"`
	Price            JSON[PriceBreakdown] `gorm:"type:text" json:"price"`
	GroupRatio       string               `gorm:"type:varchar(40);not null;default:'1'" json:"group_ratio"`
	Status           string               `gorm:"type:varchar(16);not null" json:"status"`
	HTTPStatus       int                  `gorm:"column:http_status;not null;default:0" json:"http_status"`
	ErrorClass       string               `gorm:"type:varchar(32);not null;default:''" json:"error_class"`
	Error            string               `gorm:"type:varchar(512);not null;default:''" json:"error"`
	ElapsedMs        int64                `gorm:"not null;default:0" json:"elapsed_ms"`
	FirstByteMs      int64                `gorm:"not null;default:0" json:"first_byte_ms"`
	ClientIP         string               `gorm:"column:client_ip;type:varchar(64);not null;default:''" json:"client_ip"`
	Attempts         JSON[[]Attempt]      `gorm:"type:text" json:"attempts"`
	Sticky           string               `gorm:"type:varchar(32);not null;default:''" json:"sticky"`
	IsTest           bool                 `gorm:"not null;default:false" json:"is_test"`
	// Denormalised names for display: logs outlive renamed keys and channels.
	Username    string `gorm:"type:varchar(32);not null;default:''" json:"username"`
	TokenName   string `gorm:"type:varchar(64);not null;default:''" json:"token_name"`
	ChannelName string `gorm:"type:varchar(128);not null;default:''" json:"channel_name"`
}

// LogFilter narrows ListLogs and LogStats; zero fields are ignored.
type LogFilter struct {
	UserID, TokenID, ChannelID int64
	Model, Status              string
	From, To                   time.Time
}

func (f LogFilter) apply(q *gorm.DB) *gorm.DB {
	if f.UserID != 0 {
		q = q.Where("user_id = ?", f.UserID)
	}
	if f.TokenID != 0 {
		q = q.Where("token_id = ?", f.TokenID)
	}
	if f.ChannelID != 0 {
		q = q.Where("channel_id = ?", f.ChannelID)
	}
	if f.Model != "" {
		q = q.Where("model = ?", f.Model)
	}
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if !f.From.IsZero() {
		q = q.Where("created_at >= ?", f.From)
	}
	if !f.To.IsZero() {
		q = q.Where("created_at < ?", f.To)
	}
	return q
}

// ListLogs returns up to limit logs with id < before (0 = newest), newest first.
func (s *Store) ListLogs(ctx context.Context, f LogFilter, before int64, limit int) ([]UsageLog, error) {
	q := f.apply(s.DB.WithContext(ctx).Model(&UsageLog{}))
	if before > 0 {
		q = q.Where("id < ?", before)
	}
	var out []UsageLog
	err := q.Order("id DESC").Limit(limit).Find(&out).Error
	return out, err
}

// LogRow is one aggregated row of LogStats.
type LogRow struct {
	Key              string `json:"key"`
	Requests         int64  `json:"requests"`
	Cost             int64  `json:"cost"`
	PromptTokens     int64  `json:"prompt_tokens"`
	CompletionTokens int64  `json:"completion_tokens"`
}

// LogStats sums logs per model, and returns the raw (created_at, cost, tokens) needed for per-day buckets.
func (s *Store) LogStatsByModel(ctx context.Context, f LogFilter) ([]LogRow, error) {
	var out []LogRow
	err := f.apply(s.DB.WithContext(ctx).Model(&UsageLog{})).
		Select("model AS `key`, COUNT(*) AS requests, COALESCE(SUM(cost),0) AS cost, COALESCE(SUM(prompt_tokens),0) AS prompt_tokens, COALESCE(SUM(completion_tokens),0) AS completion_tokens").
		Group("model").Order("cost DESC").Scan(&out).Error
	return out, err
}

// LogStatsByDay sums logs per UTC day.
func (s *Store) LogStatsByDay(ctx context.Context, f LogFilter) ([]LogRow, error) {
	day := "DATE(created_at)"
	if s.Kind == "sqlite" {
		day = "substr(created_at, 1, 10)"
	}
	var out []LogRow
	err := f.apply(s.DB.WithContext(ctx).Model(&UsageLog{})).
		Select(day + " AS `key`, COUNT(*) AS requests, COALESCE(SUM(cost),0) AS cost, COALESCE(SUM(prompt_tokens),0) AS prompt_tokens, COALESCE(SUM(completion_tokens),0) AS completion_tokens").
		Group(day).Order(day).Scan(&out).Error
	return out, err
}

// InsertLogs writes a batch of logs, skipping request ids already written (settlement is idempotent).
func (s *Store) InsertLogs(ctx context.Context, tx *gorm.DB, logs []UsageLog) error {
	if len(logs) == 0 {
		return nil
	}
	return tx.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(logs, 200).Error
}

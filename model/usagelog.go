package model

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
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
	// What was billed beyond tokens, with its unit price (absent when none): images (at the price of their
	// size and quality), seconds of audio in, characters of speech, rerank searches; and the prompt-length
	// tier whose token prices applied.
	Images         int64  `json:"images,omitempty"`
	ImageSize      string `json:"image_size,omitempty"`
	PerImage       string `json:"per_image,omitempty"`
	AudioSeconds   string `json:"audio_seconds,omitempty"`
	PerAudioMinute string `json:"per_audio_minute,omitempty"`
	Chars          int64  `json:"chars,omitempty"`
	Per1MChars     string `json:"per_1m_chars,omitempty"`
	Searches       int64  `json:"searches,omitempty"`
	Per1KSearches  string `json:"per_1k_searches,omitempty"`
	TierAbove      int64  `json:"tier_above_prompt_tokens,omitempty"`
}

// UsageLog is one relayed request, written once by the batched log writer.
type UsageLog struct {
	ID        int64  `gorm:"primaryKey" json:"id"`
	RequestID string `gorm:"type:varchar(64);not null;uniqueIndex" json:"request_id"` // the gateway's own id
	// ClientRequestID is the caller's X-Request-Id (sanitised): a label to search by, not unique.
	ClientRequestID string `gorm:"type:varchar(64);not null;default:'';index:idx_logs_client_request" json:"client_request_id"`
	// One index per lookup path, each ending in the time so range filters and newest-first reads use it.
	CreatedAt        time.Time            `gorm:"not null;index;index:idx_logs_user_time,priority:2;index:idx_logs_token_time,priority:2;index:idx_logs_channel_time,priority:2;index:idx_logs_model_time,priority:2;index:idx_logs_user_model_time,priority:3" json:"created_at"`
	UserID           int64                `gorm:"not null;index:idx_logs_user_time,priority:1;index:idx_logs_user_model_time,priority:1" json:"user_id"`
	TokenID          int64                `gorm:"not null;index:idx_logs_token_time,priority:1" json:"token_id"`
	ChannelID        int64                `gorm:"not null;index:idx_logs_channel_time,priority:1" json:"channel_id"`
	Model            string               `gorm:"type:varchar(128);not null;index:idx_logs_model_time,priority:1;index:idx_logs_user_model_time,priority:2" json:"model"`
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
	// Group is the logical group that served the call (a key's fallback group when its own was down), Route
	// the route inside it; Decision is the routing decision (admins only).
	Group    string                `gorm:"column:log_group;type:varchar(64);not null;default:''" json:"group"`
	Route    string                `gorm:"type:varchar(64);not null;default:''" json:"route"`
	Decision JSON[json.RawMessage] `gorm:"type:text" json:"decision,omitempty"`
	IsTest   bool                  `gorm:"not null;default:false" json:"is_test"`
	// Denormalised names for display: logs outlive renamed keys and channels.
	Username    string `gorm:"type:varchar(32);not null;default:''" json:"username"`
	TokenName   string `gorm:"type:varchar(64);not null;default:''" json:"token_name"`
	ChannelName string `gorm:"type:varchar(128);not null;default:''" json:"channel_name"`
	// ErrorCode is the gateway's i18n code for what the client got; ErrorShown says Error is text the client
	// itself received (an upstream client error passed through), so its owner may read it.
	ErrorCode  string `gorm:"type:varchar(64);not null;default:''" json:"error_code"`
	ErrorShown bool   `gorm:"not null;default:false" json:"error_shown"`
	// ClientProtocol is what the caller spoke, UpstreamProtocol what the channel was sent (they differ when
	// the relay translated the call): openai, responses, anthropic, gemini.
	ClientProtocol   string `gorm:"type:varchar(16);not null;default:''" json:"client_protocol"`
	UpstreamProtocol string `gorm:"type:varchar(16);not null;default:''" json:"upstream_protocol"`
	// UpstreamCost is what the serving channel's upstream charged for the same metered usage (its cost price,
	// or the sell price × its cost ratio), in units: profit = Cost − UpstreamCost. Admins only.
	UpstreamCost int64 `gorm:"not null;default:0" json:"upstream_cost"`
}

// LogKind says which rows a LogFilter keeps: customers' traffic (the zero value), channel tests, or both.
// Channel tests are never customers' traffic: lists, sums and exports leave them out unless asked.
type LogKind string

// The kinds of log rows.
const (
	LogsUsage LogKind = ""     // relayed requests (is_test = false)
	LogsTest  LogKind = "test" // channel tests and probes (is_test = true)
	LogsAll   LogKind = "all"  // both
)

// ParseLogKind reads the API's `type` parameter: "" or "usage", "test", "all"; ok is false for anything else.
func ParseLogKind(v string) (LogKind, bool) {
	switch v {
	case "", "usage":
		return LogsUsage, true
	case "test":
		return LogsTest, true
	case "all":
		return LogsAll, true
	}
	return LogsUsage, false
}

// LogFilter narrows ListLogs and LogStats; zero fields are ignored, except Kind, whose zero value keeps
// customers' traffic only.
type LogFilter struct {
	UserID, TokenID, ChannelID int64
	Model, Status              string
	RequestID, ClientRequestID string
	From, To                   time.Time
	Kind                       LogKind
}

func (f LogFilter) apply(q *gorm.DB) *gorm.DB {
	switch f.Kind {
	case LogsUsage:
		q = q.Where("is_test = ?", false)
	case LogsTest:
		q = q.Where("is_test = ?", true)
	}
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
	if f.RequestID != "" {
		q = q.Where("request_id = ?", f.RequestID)
	}
	if f.ClientRequestID != "" {
		q = q.Where("client_request_id = ?", f.ClientRequestID)
	}
	if !f.From.IsZero() {
		q = q.Where("created_at >= ?", f.From)
	}
	if !f.To.IsZero() {
		q = q.Where("created_at < ?", f.To)
	}
	return q
}

// ListLogs returns up to limit logs after the row before (0 = newest), newest first: a keyset on
// (created_at, id), so every page, however deep, reads only its own rows from a (filter…, created_at) index.
// A cursor row that is gone (retention deleted it) ends the list.
func (s *Store) ListLogs(ctx context.Context, f LogFilter, before int64, limit int) ([]UsageLog, error) {
	db := s.LogStore().DB.WithContext(ctx)
	q := f.apply(db.Model(&UsageLog{}))
	if before > 0 {
		var at struct{ CreatedAt time.Time }
		res := db.Model(&UsageLog{}).Select("created_at").Where("id = ?", before).Limit(1).Scan(&at)
		if res.Error != nil {
			return nil, res.Error
		}
		if res.RowsAffected == 0 {
			return nil, nil
		}
		q = q.Where("(created_at < ? OR (created_at = ? AND id < ?))", at.CreatedAt, at.CreatedAt, before)
	}
	var out []UsageLog
	err := q.Order("created_at DESC, id DESC").Limit(limit).Find(&out).Error
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
	err := f.apply(s.LogStore().DB.WithContext(ctx).Model(&UsageLog{})).
		Select("model AS `key`, COUNT(*) AS requests, COALESCE(SUM(cost),0) AS cost, COALESCE(SUM(prompt_tokens),0) AS prompt_tokens, COALESCE(SUM(completion_tokens),0) AS completion_tokens").
		Group("model").Order("cost DESC").Scan(&out).Error
	return out, err
}

// LogStatsByDay sums logs per UTC day.
func (s *Store) LogStatsByDay(ctx context.Context, f LogFilter) ([]LogRow, error) {
	// DATE() would come back from MySQL as a time (parseTime) and render as "2026-01-02T00:00:00Z": format it.
	ls := s.LogStore()
	day := dayExpr(ls.Kind)
	var out []LogRow
	err := f.apply(ls.DB.WithContext(ctx).Model(&UsageLog{})).
		Select(day + " AS `key`, COUNT(*) AS requests, COALESCE(SUM(cost),0) AS cost, COALESCE(SUM(prompt_tokens),0) AS prompt_tokens, COALESCE(SUM(completion_tokens),0) AS completion_tokens").
		Group(day).Order(day).Scan(&out).Error
	return out, err
}

// logColumns are the usage_logs columns InsertLogs writes, in logValues order.
var logColumns = []string{"request_id", "created_at", "user_id", "token_id", "channel_id", "model", "upstream_model",
	"endpoint", "stream", "prompt_tokens", "completion_tokens", "cache_read_tokens", "cache_write_tokens",
	"usage_estimated", "cost", "upstream_cost", "price", "group_ratio", "status", "http_status", "error_class", "error", "elapsed_ms",
	"first_byte_ms", "client_ip", "attempts", "sticky", "is_test", "username", "token_name", "channel_name",
	"client_request_id", "error_code", "error_shown", "client_protocol", "upstream_protocol", "log_group", "route",
	"decision"}

func logValues(l *UsageLog, out []any) []any {
	price, _ := l.Price.Value()
	attempts, _ := l.Attempts.Value()
	var decision any // NULL without one (a refusal, a test row)
	if len(l.Decision.V) > 0 {
		decision = string(l.Decision.V)
	}
	return append(out, l.RequestID, l.CreatedAt, l.UserID, l.TokenID, l.ChannelID, l.Model, l.UpstreamModel,
		l.Endpoint, l.Stream, l.PromptTokens, l.CompletionTokens, l.CacheReadTokens, l.CacheWriteTokens,
		l.UsageEstimated, l.Cost, l.UpstreamCost, price, l.GroupRatio, l.Status, l.HTTPStatus, l.ErrorClass, l.Error, l.ElapsedMs,
		l.FirstByteMs, l.ClientIP, attempts, l.Sticky, l.IsTest, l.Username, l.TokenName, l.ChannelName,
		l.ClientRequestID, l.ErrorCode, l.ErrorShown, l.ClientProtocol, l.UpstreamProtocol, l.Group, l.Route, decision)
}

// InsertLogs writes a batch of logs inside tx, skipping request ids already written (settlement is
// idempotent). It bypasses gorm's per-row reflection and RETURNING scan, which cost more than the insert.
func (s *Store) InsertLogs(ctx context.Context, tx *gorm.DB, logs []UsageLog) error {
	_, err := s.insertLogs(ctx, tx, logs)
	return err
}

// insertLogs is InsertLogs that also counts the rows it wrote (not those it skipped).
func (s *Store) insertLogs(ctx context.Context, tx *gorm.DB, logs []UsageLog) (int64, error) {
	var n int64
	if len(logs) == 0 {
		return 0, nil
	}
	cols := strings.Join(logColumns, ", ")
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(logColumns)), ", ") + ")"
	db := tx.WithContext(ctx).Statement.ConnPool
	// SQLite: the pure-Go driver re-prepares on every Exec and binds parameters in O(params²); ten rows per
	// statement measured best (one-row statements spent most of the time parsing, 200-row ones binding).
	batch := 200
	if s.Kind == "sqlite" {
		batch = 10
	}
	verb := s.insertIgnore()
	for start := 0; start < len(logs); start += batch {
		end := min(start+batch, len(logs))
		args := make([]any, 0, (end-start)*len(logColumns))
		for i := start; i < end; i++ {
			args = logValues(&logs[i], args)
		}
		q := verb + " usage_logs (" + cols + ") VALUES " + strings.TrimSuffix(strings.Repeat(one+", ", end-start), ", ")
		res, err := s.stmts.exec(ctx, db, q, args...)
		if err != nil {
			return n, err
		}
		k, err := res.RowsAffected()
		if err != nil { // WriteLogs decides by this count which rows are new: no count, no batch
			return n, fmt.Errorf("count inserted usage logs: %w", err)
		}
		n += k
	}
	return n, nil
}

package model

import (
	"context"
	"time"
)

// AlertLog is one alert delivery: an event sent to one target (a webhook URL or an e-mail address) over one
// channel ("webhook" or "email"), whether it went out, after how many attempts, and the last error.
type AlertLog struct {
	ID        int64     `gorm:"primaryKey" json:"id"`
	Event     string    `gorm:"type:varchar(32);not null;index" json:"event"`
	EventKey  string    `gorm:"type:varchar(191);not null;default:''" json:"event_key"`
	Target    string    `gorm:"type:varchar(512);not null;default:''" json:"target"`
	Channel   string    `gorm:"type:varchar(8);not null" json:"channel"`
	Status    string    `gorm:"type:varchar(8);not null" json:"status"` // sent, failed, skipped
	Attempts  int       `gorm:"not null;default:0" json:"attempts"`
	Error     string    `gorm:"type:varchar(500);not null;default:''" json:"error"`
	Subject   string    `gorm:"type:varchar(255);not null;default:''" json:"subject"`
	CreatedAt time.Time `gorm:"index" json:"created_at"`
}

// Alert delivery statuses.
const (
	AlertSent    = "sent"
	AlertFailed  = "failed"
	AlertSkipped = "skipped"
)

// AlertFilter narrows ListAlertLogs.
type AlertFilter struct {
	Event, Channel, Status string
}

// CreateAlertLog inserts one delivery row.
func (s *Store) CreateAlertLog(ctx context.Context, l *AlertLog) error {
	return translate(s.DB.WithContext(ctx).Create(l).Error)
}

// ListAlertLogs returns up to limit rows older than before (0 = newest), newest first (keyset on id).
func (s *Store) ListAlertLogs(ctx context.Context, f AlertFilter, before int64, limit int) ([]AlertLog, error) {
	q := s.DB.WithContext(ctx).Model(&AlertLog{})
	if f.Event != "" {
		q = q.Where("event = ?", f.Event)
	}
	if f.Channel != "" {
		q = q.Where("channel = ?", f.Channel)
	}
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if before > 0 {
		q = q.Where("id < ?", before)
	}
	var out []AlertLog
	err := q.Order("id DESC").Limit(limit).Find(&out).Error
	return out, err
}

// DaySummary is what the daily alert summary reports for [From, To).
type DaySummary struct {
	Requests int64 `json:"requests"`
	Errors   int64 `json:"errors"`
	Revenue  int64 `json:"revenue"`
	Users    int64 `json:"users"`
}

// SummarizeLogs sums usage logs created in [from, to) (off the relay path: the daily summary).
func (s *Store) SummarizeLogs(ctx context.Context, from, to time.Time) (DaySummary, error) {
	var d DaySummary
	err := s.DB.WithContext(ctx).Model(&UsageLog{}).Where("created_at >= ? AND created_at < ?", from, to).
		Select("COUNT(*) AS requests, COALESCE(SUM(CASE WHEN status = 'error' THEN 1 ELSE 0 END),0) AS errors, " +
			"COALESCE(SUM(cost),0) AS revenue, COUNT(DISTINCT user_id) AS users").Scan(&d).Error
	return d, err
}

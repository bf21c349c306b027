package model

import (
	"context"
	"time"

	"github.com/shopspring/decimal"
)

// BodyOverride edits fields of the upstream request body (gjson/sjson paths).
type BodyOverride struct {
	Set    map[string]any `json:"set,omitempty"`
	Delete []string       `json:"delete,omitempty"`
}

// Timeouts bound one upstream call; zero means the global default.
type Timeouts struct {
	ConnectMs   int `json:"connect_ms"`
	FirstByteMs int `json:"first_byte_ms"`
	IdleMs      int `json:"idle_ms"`
	TotalMs     int `json:"total_ms"`
}

// BreakerOverrides are a channel's own circuit-breaker thresholds; zero fields keep the global defaults.
type BreakerOverrides struct {
	MinRequests      int     `json:"min_requests,omitempty"`
	FailureRatio     float64 `json:"failure_ratio,omitempty"`
	ConsecutiveFails int     `json:"consecutive_fails,omitempty"`
	BaseCooldownMs   int     `json:"base_cooldown_ms,omitempty"`
	MaxCooldownMs    int     `json:"max_cooldown_ms,omitempty"`
	HalfOpenProbes   int     `json:"half_open_probes,omitempty"`
	CloseAfter       int     `json:"close_after,omitempty"`
}

// CostPrice is an upstream's price: decimal USD per 1M tokens by kind, or a fixed USD price per call (which
// replaces the token prices), like Price.
type CostPrice struct {
	Input      decimal.Decimal `json:"input"`
	Output     decimal.Decimal `json:"output"`
	CacheRead  decimal.Decimal `json:"cache_read"`
	CacheWrite decimal.Decimal `json:"cache_write"`
	PerCall    decimal.Decimal `json:"per_call"`
}

// Channel is one upstream account: a protocol, a base URL, its keys and what it serves.
type Channel struct {
	ID                int64                   `gorm:"primaryKey"`
	Type              string                  `gorm:"type:varchar(32);not null;index"`
	Name              string                  `gorm:"type:varchar(128);not null"`
	BaseURL           string                  `gorm:"type:varchar(512);not null"`
	KeysCipher        JSON[[]string]          `gorm:"type:text"` // each key AES-GCM encrypted
	KeyStrategy       string                  `gorm:"type:varchar(16);not null;default:'random'"`
	Models            JSON[[]string]          `gorm:"type:text"`
	ModelMapping      JSON[map[string]string] `gorm:"type:text"`
	Groups            JSON[[]string]          `gorm:"type:text"`
	Priority          int64                   `gorm:"not null;default:0"`
	Weight            int                     `gorm:"not null;default:1"`
	Status            string                  `gorm:"type:varchar(16);not null;default:'enabled';index"`
	HeadersSealed     JSON[map[string]string] `gorm:"column:header_override;type:text"` // header_override, values sealed (see channel.SealHeaderOverrides)
	BodyOverride      JSON[BodyOverride]      `gorm:"type:text"`
	StatusCodeMapping JSON[map[string]int]    `gorm:"type:text"`
	TestModel         string                  `gorm:"type:varchar(128);not null;default:''"`
	Timeouts          JSON[Timeouts]          `gorm:"type:text"`
	Tag               string                  `gorm:"type:varchar(64);not null;default:'';index"`
	Breaker           JSON[BreakerOverrides]  `gorm:"type:text"`
	// MaxConcurrency and KeyMaxConcurrency cap the upstream requests in flight per node on the channel and on
	// each of its keys (0 = no cap); a candidate at its cap is skipped for the next one.
	MaxConcurrency    int `gorm:"not null;default:0"`
	KeyMaxConcurrency int `gorm:"not null;default:0"`
	// HeaderPassthrough names the client request headers forwarded to this upstream as they came (e.g.
	// User-Agent, session_id, x-app, originator, which coding-agent upstreams key their caches on).
	HeaderPassthrough JSON[[]string] `gorm:"type:text"`
	// CostPrice is what the upstream charges for every model (USD per 1M tokens by kind, or per call); CostRatio
	// instead prices it as a multiple of the sell price; CostPrices overrides either per (public) model name.
	// Nothing set: the upstream cost is 0. They price usage_logs.upstream_cost (see pricing.UpstreamCost).
	CostPrice  JSON[*CostPrice]           `gorm:"type:text"`
	CostRatio  decimal.NullDecimal        `gorm:"type:varchar(40)"`
	CostPrices JSON[map[string]CostPrice] `gorm:"type:text"`
	// Config holds the type-specific settings (Azure deployments, Vertex project and region, Bedrock region,
	// an OpenAI-compatible preset).
	Config    JSON[ChannelConfig] `gorm:"type:text"`
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ChannelFilter narrows ListChannels.
type ChannelFilter struct {
	Query, Type, Status, Tag string
}

// ListChannels pages through channels (group/model filters are applied by the caller on the snapshot).
func (s *Store) ListChannels(ctx context.Context, f ChannelFilter) ([]Channel, error) {
	q := s.DB.WithContext(ctx).Model(&Channel{})
	if f.Query != "" {
		like := "%" + escapeLike(f.Query) + "%"
		q = q.Where("name LIKE ? ESCAPE '!' OR base_url LIKE ? ESCAPE '!'", like, like)
	}
	if f.Type != "" {
		q = q.Where("type = ?", f.Type)
	}
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if f.Tag != "" {
		q = q.Where("tag = ?", f.Tag)
	}
	var out []Channel
	err := q.Order("priority DESC, id").Find(&out).Error
	return out, err
}

// AllChannels loads every channel (for the routing snapshot).
func (s *Store) AllChannels(ctx context.Context) ([]Channel, error) {
	var out []Channel
	err := s.DB.WithContext(ctx).Order("id").Find(&out).Error
	return out, err
}

// ChannelByID loads one channel.
func (s *Store) ChannelByID(ctx context.Context, id int64) (*Channel, error) {
	var c Channel
	if err := s.DB.WithContext(ctx).First(&c, id).Error; err != nil {
		return nil, translate(err)
	}
	return &c, nil
}

// SaveChannel inserts or updates c.
func (s *Store) SaveChannel(ctx context.Context, c *Channel) error {
	return translate(s.DB.WithContext(ctx).Save(c).Error)
}

// SetChannelStatus changes only the status column.
func (s *Store) SetChannelStatus(ctx context.Context, id int64, status string) error {
	return s.DB.WithContext(ctx).Model(&Channel{}).Where("id = ?", id).Update("status", status).Error
}

// DeleteChannel removes a channel.
func (s *Store) DeleteChannel(ctx context.Context, id int64) error {
	res := s.DB.WithContext(ctx).Delete(&Channel{}, id)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// ReplaceChannelHeaders swaps one channel's header_override column from exactly old to next, so a start-up
// pass never overwrites an admin's concurrent edit (it reports false then). On SQLite the swap erases the
// replaced text from the file: secure_delete zeroes the freed cell and a truncating checkpoint drops the WAL
// frames that still held it.
func (s *Store) ReplaceChannelHeaders(ctx context.Context, id int64, old, next map[string]string) (bool, error) {
	oldV, err := JSON[map[string]string]{V: old}.Value()
	if err != nil {
		return false, err
	}
	nextV, err := JSON[map[string]string]{V: next}.Value()
	if err != nil {
		return false, err
	}
	sqlDB, err := s.DB.DB()
	if err != nil {
		return false, err
	}
	// One connection for the pragma, the swap and the checkpoint (SQLite's pool has a single one anyway).
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	if s.Kind == "sqlite" {
		if _, err := conn.ExecContext(ctx, "PRAGMA secure_delete = ON"); err != nil {
			return false, err
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA secure_delete = OFF") //nolint:errcheck // best effort
	}
	res, err := conn.ExecContext(ctx, "UPDATE channels SET header_override = ?, updated_at = ? WHERE id = ? AND header_override = ?",
		nextV, time.Now().UTC(), id, oldV)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	if err != nil || n != 1 {
		return false, err
	}
	if s.Kind == "sqlite" {
		if _, err := conn.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			return true, err
		}
	}
	return true, nil
}

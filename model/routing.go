package model

import (
	"context"
	"encoding/json"
	"time"
)

// RouteWeights weigh the three inputs of a balanced routing score (each 0–1, normalised by their sum).
type RouteWeights struct {
	Latency float64 `json:"latency"`
	Success float64 `json:"success"`
	Cost    float64 `json:"cost"`
}

// RouteTuning is metric-driven routing's configuration for a logical group × model (or the global defaults,
// group and model "*"). Zero fields take the next level's value (model → global → built-in defaults; see
// service/routing.Tuning).
type RouteTuning struct {
	Strategy         string       `json:"strategy,omitempty"`
	Weights          RouteWeights `json:"weights"`
	MinSamples       int          `json:"min_samples,omitempty"`
	FailureThreshold float64      `json:"failure_threshold,omitempty"` // failure rate above which a channel is demoted
	RecoveryS        int          `json:"recovery_s,omitempty"`        // a demoted channel is explored again after this
	MaxAttempts      int          `json:"max_attempts,omitempty"`      // attempts per request (0: the group's failover)
	TopK             int          `json:"top_k,omitempty"`
	MinShare         float64      `json:"min_share,omitempty"`      // first picks each of the top-k gets at least
	Temperature      float64      `json:"temperature,omitempty"`    // softmax temperature over scores
	Explore          float64      `json:"explore,omitempty"`        // first picks given to channels with too few samples
	LatencyRefMs     float64      `json:"latency_ref_ms,omitempty"` // latency that scores 0.5
	CostRef          float64      `json:"cost_ref,omitempty"`       // USD per 1M that scores 0.5
	LiveWeight       float64      `json:"live_weight,omitempty"`    // share of the node's live EWMA in an input
}

// RoutingConfig is one row of per group × model routing configuration.
type RoutingConfig struct {
	Group     string            `gorm:"column:cfg_group;primaryKey;type:varchar(64)" json:"group"`
	Model     string            `gorm:"primaryKey;type:varchar(128)" json:"model"`
	Tuning    JSON[RouteTuning] `gorm:"type:text" json:"tuning"`
	UpdatedAt time.Time         `json:"updated_at"`
}

// RoutePrefs are a user's (profile), a key's or a request's routing preferences. Prefer and Avoid name
// channels ("channel:<id>") or providers by channel tag ("tag:<tag>"); Require lists capabilities
// (streaming, tools, vision). MaxPrice is USD per 1M tokens of the upstream's price (0: none).
type RoutePrefs struct {
	Strategy   string   `json:"strategy,omitempty"`
	Prefer     []string `json:"prefer,omitempty"`
	Avoid      []string `json:"avoid,omitempty"`
	MaxPrice   float64  `json:"max_price,omitempty"`
	MinSuccess float64  `json:"min_success,omitempty"`
	MaxP95Ms   int      `json:"max_p95_ms,omitempty"`
	Require    []string `json:"require,omitempty"`
}

// Empty says whether p sets nothing.
func (p RoutePrefs) Empty() bool {
	return p.Strategy == "" && len(p.Prefer) == 0 && len(p.Avoid) == 0 && p.MaxPrice == 0 && p.MinSuccess == 0 &&
		p.MaxP95Ms == 0 && len(p.Require) == 0
}

// RoutingDecision is one routed request's decision, kept for routing_decision_retention_days: the strategy, each
// candidate with its score and inputs (or why it was excluded), the choice and how long deciding took.
type RoutingDecision struct {
	ID         int64                 `gorm:"primaryKey" json:"id"`
	RequestID  string                `gorm:"type:varchar(64);not null;index" json:"request_id"`
	CreatedAt  time.Time             `gorm:"not null;index:idx_rdec_created;index:idx_rdec_model,priority:2" json:"created_at"`
	Model      string                `gorm:"type:varchar(128);not null;index:idx_rdec_model,priority:1" json:"model"`
	Group      string                `gorm:"column:dec_group;type:varchar(64);not null;default:''" json:"group"`
	UserID     int64                 `gorm:"not null;default:0" json:"user_id"`
	Strategy   string                `gorm:"type:varchar(16);not null" json:"strategy"`
	ChannelID  int64                 `gorm:"not null;default:0" json:"channel_id"` // the channel that answered (0: none)
	Reason     string                `gorm:"type:varchar(255);not null;default:''" json:"reason"`
	DecisionUs int64                 `gorm:"not null;default:0" json:"decision_us"`
	Candidates JSON[json.RawMessage] `gorm:"type:text" json:"candidates"`
}

// ListRoutingConfigs loads every routing configuration row.
func (s *Store) ListRoutingConfigs(ctx context.Context) ([]RoutingConfig, error) {
	var out []RoutingConfig
	err := s.DB.WithContext(ctx).Order("cfg_group, model").Find(&out).Error
	return out, err
}

// SaveRoutingConfig inserts or replaces one row.
func (s *Store) SaveRoutingConfig(ctx context.Context, c *RoutingConfig) error {
	return translate(s.DB.WithContext(ctx).Save(c).Error)
}

// DeleteRoutingConfig removes one row.
func (s *Store) DeleteRoutingConfig(ctx context.Context, group, model string) error {
	return s.DB.WithContext(ctx).Where("cfg_group = ? AND model = ?", group, model).Delete(&RoutingConfig{}).Error
}

// InsertRoutingDecisions writes decision rows (with the usage logs: LOG_SQL_DSN's database when set).
func (s *Store) InsertRoutingDecisions(ctx context.Context, rows []RoutingDecision) error {
	if len(rows) == 0 {
		return nil
	}
	return s.LogStore().DB.WithContext(ctx).CreateInBatches(rows, 200).Error
}

// DecisionFilter narrows RoutingDecisions; Before is a keyset cursor (rows with a smaller id).
type DecisionFilter struct {
	RequestID string
	Model     string
	From      time.Time
	Before    int64
	Limit     int
}

// RoutingDecisions lists decision rows, newest first.
func (s *Store) RoutingDecisions(ctx context.Context, f DecisionFilter) ([]RoutingDecision, error) {
	q := s.LogStore().DB.WithContext(ctx).Model(&RoutingDecision{})
	if f.RequestID != "" {
		q = q.Where("request_id = ?", f.RequestID)
	}
	if f.Model != "" {
		q = q.Where("model = ?", f.Model)
	}
	if !f.From.IsZero() {
		q = q.Where("created_at >= ?", f.From.UTC())
	}
	if f.Before > 0 {
		q = q.Where("id < ?", f.Before)
	}
	limit := f.Limit
	if limit <= 0 || limit > 200 {
		limit = 50
	}
	var out []RoutingDecision
	err := q.Order("id DESC").Limit(limit).Find(&out).Error
	return out, err
}

// DeleteRoutingDecisionsBefore deletes up to limit rows older than cutoff (oldest ids first) and says how many.
func (s *Store) DeleteRoutingDecisionsBefore(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
	db := s.LogStore().DB.WithContext(ctx)
	var ids []int64
	if err := db.Model(&RoutingDecision{}).Where("created_at < ?", cutoff.UTC()).Order("id").Limit(limit).Pluck("id", &ids).Error; err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, nil
	}
	res := db.Where("id IN ?", ids).Delete(&RoutingDecision{})
	return res.RowsAffected, res.Error
}

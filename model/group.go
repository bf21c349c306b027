package model

import (
	"context"
	"time"

	"github.com/shopspring/decimal"
)

// Group is a logical group: what a key buys (its models, its price ratio) and how its requests are routed
// (routes over channels, sticky and failover policy). A user's tier multiplies the group's price again.
type Group struct {
	Name        string          `gorm:"primaryKey;type:varchar(64)" json:"name"`
	DisplayName string          `gorm:"type:varchar(128);not null;default:''" json:"display_name"`
	Description string          `gorm:"type:varchar(255);not null;default:''" json:"description"`
	Status      string          `gorm:"type:varchar(16);not null;default:'enabled'" json:"status"`
	Ratio       decimal.Decimal `gorm:"type:varchar(40);not null" json:"ratio"`
	// Selectable is the old "any user may put it on a key" flag; it mirrors Access.All.
	Selectable       bool                 `gorm:"not null;default:false" json:"selectable"`
	Models           JSON[[]string]       `gorm:"type:text" json:"models"`
	Access           JSON[GroupAccess]    `gorm:"type:text" json:"access"`
	Sticky           JSON[StickyPolicy]   `gorm:"type:text" json:"sticky"`
	Failover         JSON[FailoverPolicy] `gorm:"type:text" json:"failover"`
	ReturnToPrimaryS int                  `gorm:"column:return_to_primary_s;not null;default:0" json:"return_to_primary_s"`
	Routes           JSON[[]Route]        `gorm:"type:text" json:"routes"`
	CreatedAt        time.Time            `json:"created_at"`
	UpdatedAt        time.Time            `json:"updated_at"`
}

// GroupAccess says who may use a group besides the users whose own group it is.
type GroupAccess struct {
	All   bool     `json:"all"`
	Tiers []string `json:"tiers"`
	Users []int64  `json:"users"`
}

// StickyPolicy is a group's session stickiness: which identifier kinds bind and for how long (seconds per
// kind). Empty fields take the defaults.
type StickyPolicy struct {
	Levels []string       `json:"levels"`
	TTLs   map[string]int `json:"ttl_s"`
}

// FailoverPolicy is a group's failover: consecutive retryable failures before a route cools, for how long,
// how many attempts a request gets, and its deadline. Zero fields take the defaults.
type FailoverPolicy struct {
	ConsecutiveFailures int `json:"consecutive_failures"`
	CooldownS           int `json:"cooldown_s"`
	MaxAttempts         int `json:"max_attempts"`
	DeadlineS           int `json:"deadline_s"`
}

// Route is a named pool of channels inside a group; higher priority is tried first, weight shares traffic
// among routes of equal priority.
type Route struct {
	Name     string  `json:"name"`
	Priority int64   `json:"priority"`
	Weight   int     `json:"weight"`
	Channels []int64 `json:"channels"`
}

// ListGroups returns every group by name.
func (s *Store) ListGroups(ctx context.Context) ([]Group, error) {
	var out []Group
	err := s.DB.WithContext(ctx).Order("name").Find(&out).Error
	return out, err
}

// GroupByName loads one group.
func (s *Store) GroupByName(ctx context.Context, name string) (*Group, error) {
	var g Group
	if err := s.DB.WithContext(ctx).Where("name = ?", name).First(&g).Error; err != nil {
		return nil, translate(err)
	}
	return &g, nil
}

// CreateGroup inserts g; ErrDuplicate if the name exists.
func (s *Store) CreateGroup(ctx context.Context, g *Group) error {
	return translate(s.DB.WithContext(ctx).Create(g).Error)
}

// SaveGroup writes every column of g.
func (s *Store) SaveGroup(ctx context.Context, g *Group) error {
	return translate(s.DB.WithContext(ctx).Save(g).Error)
}

// DeleteGroup removes a group.
func (s *Store) DeleteGroup(ctx context.Context, name string) error {
	res := s.DB.WithContext(ctx).Where("name = ?", name).Delete(&Group{})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// EnsureDefaultGroup creates the "default" group with ratio 1 if it is missing (safe on concurrent starts).
func (s *Store) EnsureDefaultGroup(ctx context.Context) error {
	g := Group{Name: "default", Description: "Default group", Status: "enabled", Ratio: decimal.NewFromInt(1),
		Selectable: true, Access: JSON[GroupAccess]{GroupAccess{All: true}}}
	err := s.CreateGroup(ctx, &g)
	if err == ErrDuplicate {
		return nil
	}
	return err
}

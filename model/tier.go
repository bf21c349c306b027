package model

import (
	"context"
	"errors"
	"time"

	"github.com/shopspring/decimal"
)

// ErrTierInUse is returned when a tier still has users.
var ErrTierInUse = errors.New("tier in use")

// DefaultTier is the tier every user starts in (ratio 1); it cannot be deleted.
const DefaultTier = "default"

// Tier is a price tier: its ratio multiplies every price for the users in it, on top of the group's ratio.
// Unlike a group it does not choose where requests are routed.
type Tier struct {
	Name        string          `gorm:"primaryKey;type:varchar(64)" json:"name"`
	Description string          `gorm:"type:varchar(255);not null;default:''" json:"description"`
	Ratio       decimal.Decimal `gorm:"type:varchar(40);not null" json:"ratio"`
	CreatedAt   time.Time       `json:"created_at"`
	UpdatedAt   time.Time       `json:"updated_at"`
}

// ListTiers returns every tier by name.
func (s *Store) ListTiers(ctx context.Context) ([]Tier, error) {
	var out []Tier
	err := s.DB.WithContext(ctx).Order("name").Find(&out).Error
	return out, err
}

// TierByName loads one tier.
func (s *Store) TierByName(ctx context.Context, name string) (*Tier, error) {
	var t Tier
	if err := s.DB.WithContext(ctx).Where("name = ?", name).First(&t).Error; err != nil {
		return nil, translate(err)
	}
	return &t, nil
}

// CreateTier inserts t; ErrDuplicate if the name exists.
func (s *Store) CreateTier(ctx context.Context, t *Tier) error {
	return translate(s.DB.WithContext(ctx).Create(t).Error)
}

// UpdateTier writes the description and ratio of an existing tier; ErrNotFound if it is gone.
func (s *Store) UpdateTier(ctx context.Context, t *Tier) error {
	res := s.DB.WithContext(ctx).Model(&Tier{}).Where("name = ?", t.Name).
		Updates(map[string]any{"description": t.Description, "ratio": t.Ratio, "updated_at": time.Now()})
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// DeleteUnusedTier removes a tier in one statement that also checks no user is in it, so that a user moved
// into the tier concurrently cannot be left pointing at a deleted tier. ErrNotFound: no such tier;
// ErrTierInUse: users are still in it.
func (s *Store) DeleteUnusedTier(ctx context.Context, name string) error {
	db := s.DB.WithContext(ctx)
	res := db.Exec("DELETE FROM tiers WHERE name = ? AND NOT EXISTS (SELECT 1 FROM users WHERE user_tier = ?)", name, name)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 1 {
		return nil
	}
	if _, err := s.TierByName(ctx, name); err != nil {
		return err
	}
	return ErrTierInUse
}

// CountUsersByTier returns how many users each tier has (tiers without users are absent).
func (s *Store) CountUsersByTier(ctx context.Context) (map[string]int64, error) {
	var rows []struct {
		UserTier string
		N        int64
	}
	err := s.DB.WithContext(ctx).Model(&User{}).Select("user_tier, COUNT(*) AS n").Group("user_tier").Scan(&rows).Error
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.UserTier] = r.N
	}
	return out, nil
}

// EnsureDefaultTier creates the "default" tier with ratio 1 if it is missing (safe on concurrent starts).
func (s *Store) EnsureDefaultTier(ctx context.Context) error {
	t := Tier{Name: DefaultTier, Description: "Default tier", Ratio: decimal.NewFromInt(1)}
	err := s.CreateTier(ctx, &t)
	if err == ErrDuplicate {
		return nil
	}
	return err
}

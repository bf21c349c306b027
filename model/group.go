package model

import (
	"context"
	"time"

	"github.com/shopspring/decimal"
)

// Group is a pricing group: its ratio multiplies every price for its members.
type Group struct {
	Name        string          `gorm:"primaryKey;type:varchar(64)" json:"name"`
	Description string          `gorm:"type:varchar(255);not null;default:''" json:"description"`
	Ratio       decimal.Decimal `gorm:"type:varchar(40);not null" json:"ratio"`
	Selectable  bool            `gorm:"not null;default:false" json:"selectable"`
	CreatedAt   time.Time       `json:"created_at"`
	UpdatedAt   time.Time       `json:"updated_at"`
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
	g := Group{Name: "default", Description: "Default group", Ratio: decimal.NewFromInt(1), Selectable: true}
	err := s.CreateGroup(ctx, &g)
	if err == ErrDuplicate {
		return nil
	}
	return err
}

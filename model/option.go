package model

import (
	"context"
	"time"

	"gorm.io/gorm/clause"
)

// Option is one site setting (key → JSON value).
type Option struct {
	Key       string `gorm:"primaryKey;type:varchar(64)"`
	Value     string `gorm:"type:text;not null"`
	UpdatedAt time.Time
}

// ListOptions returns every stored setting.
func (s *Store) ListOptions(ctx context.Context) ([]Option, error) {
	var out []Option
	err := s.DB.WithContext(ctx).Find(&out).Error
	return out, err
}

// UpsertOptions writes settings in one transaction.
func (s *Store) UpsertOptions(ctx context.Context, opts []Option) error {
	if len(opts) == 0 {
		return nil
	}
	return s.DB.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "key"}},
		DoUpdates: clause.AssignmentColumns([]string{"value", "updated_at"}),
	}).Create(&opts).Error
}

package model

import (
	"context"
	"time"

	"github.com/shopspring/decimal"
	"gorm.io/gorm"
)

// Price is one model's price: USD per 1M tokens by kind, or a fixed USD price per call.
type Price struct {
	Model      string          `gorm:"primaryKey;type:varchar(128)" json:"model"`
	Input      decimal.Decimal `gorm:"type:varchar(40);not null" json:"input"`
	Output     decimal.Decimal `gorm:"type:varchar(40);not null" json:"output"`
	CacheRead  decimal.Decimal `gorm:"type:varchar(40);not null" json:"cache_read"`
	CacheWrite decimal.Decimal `gorm:"type:varchar(40);not null" json:"cache_write"`
	PerCall    decimal.Decimal `gorm:"type:varchar(40);not null" json:"per_call"`
	UpdatedAt  time.Time       `json:"-"`
}

// ListPrices returns every price row.
func (s *Store) ListPrices(ctx context.Context) ([]Price, error) {
	var out []Price
	err := s.DB.WithContext(ctx).Order("model").Find(&out).Error
	return out, err
}

// ReplacePrices swaps the whole price table in one transaction.
func (s *Store) ReplacePrices(ctx context.Context, rows []Price) error {
	return s.Transact(ctx, func(tx *gorm.DB) error {
		if err := tx.Where("1 = 1").Delete(&Price{}).Error; err != nil {
			return err
		}
		if len(rows) == 0 {
			return nil
		}
		return tx.CreateInBatches(rows, 200).Error
	})
}

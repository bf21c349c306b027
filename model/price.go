package model

import (
	"context"
	"time"

	"github.com/shopspring/decimal"
	"gorm.io/gorm"
)

// Price is one model's price: USD per 1M tokens by kind, or a fixed USD price per call; plus the prices of
// what is not tokens (images, audio minutes, speech characters, rerank searches) and token tiers by prompt
// length. Zero terms cost nothing.
type Price struct {
	Model      string          `gorm:"primaryKey;type:varchar(128)" json:"model"`
	Input      decimal.Decimal `gorm:"type:varchar(40);not null" json:"input"`
	Output     decimal.Decimal `gorm:"type:varchar(40);not null" json:"output"`
	CacheRead  decimal.Decimal `gorm:"type:varchar(40);not null" json:"cache_read"`
	CacheWrite decimal.Decimal `gorm:"type:varchar(40);not null" json:"cache_write"`
	PerCall    decimal.Decimal `gorm:"type:varchar(40);not null" json:"per_call"`
	// PerImage is USD per generated image; PerImageBySize overrides it for a size ("1024x1024") or a size and
	// quality ("1024x1024/hd"), the more specific key first.
	PerImage       decimal.Decimal                  `gorm:"type:varchar(40);not null;default:'0'" json:"per_image"`
	PerImageBySize JSON[map[string]decimal.Decimal] `gorm:"type:text" json:"per_image_by_size"`
	PerAudioMinute decimal.Decimal                  `gorm:"type:varchar(40);not null;default:'0'" json:"per_audio_minute"` // USD per minute of audio in
	Per1MChars     decimal.Decimal                  `gorm:"type:varchar(40);not null;default:'0'" json:"per_1m_chars"`     // USD per 1M characters of speech input
	Per1KSearches  decimal.Decimal                  `gorm:"type:varchar(40);not null;default:'0'" json:"per_1k_searches"`  // USD per 1,000 rerank searches
	// Tiers replace Input and Output for requests whose prompt is longer than a tier's AbovePromptTokens
	// (the highest such tier), sorted ascending.
	Tiers     JSON[[]PriceTier] `gorm:"type:text" json:"tiers"`
	UpdatedAt time.Time         `json:"-"`
}

// PriceTier is a token price for long prompts: above AbovePromptTokens prompt tokens, Input and Output (USD per
// 1M tokens) apply instead of the row's.
type PriceTier struct {
	AbovePromptTokens int64           `json:"above_prompt_tokens"`
	Input             decimal.Decimal `json:"input"`
	Output            decimal.Decimal `json:"output"`
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

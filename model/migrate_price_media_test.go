package model_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"tollgate/model"
)

// prePriceMedia is the prices table as it was before prices beyond tokens.
type prePriceMedia struct {
	Model      string          `gorm:"primaryKey;type:varchar(128)"`
	Input      decimal.Decimal `gorm:"type:varchar(40);not null"`
	Output     decimal.Decimal `gorm:"type:varchar(40);not null"`
	CacheRead  decimal.Decimal `gorm:"type:varchar(40);not null"`
	CacheWrite decimal.Decimal `gorm:"type:varchar(40);not null"`
	PerCall    decimal.Decimal `gorm:"type:varchar(40);not null"`
	UpdatedAt  time.Time
}

func (prePriceMedia) TableName() string { return "prices" }

// Price rows made before per-image, audio, character and search prices and tiers keep their token prices and
// get none of the new ones (0, no sizes, no tiers); the new fields then save and load.
func upgradeKeepsPricesAndAddsMediaTerms(t *testing.T, s *model.Store) {
	ctx := context.Background()
	if err := s.DB.AutoMigrate(&prePriceMedia{}); err != nil {
		t.Fatal(err)
	}
	if err := s.DB.Create(&prePriceMedia{Model: "old", Input: decimal.NewFromInt(1), Output: decimal.NewFromInt(2)}).Error; err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	ps, err := s.ListPrices(ctx)
	if err != nil || len(ps) != 1 || ps[0].Input.String() != "1" || !ps[0].PerImage.IsZero() || !ps[0].Per1KSearches.IsZero() ||
		len(ps[0].Tiers.V) != 0 || len(ps[0].PerImageBySize.V) != 0 {
		t.Fatalf("after migrate: %+v, %v", ps, err)
	}
	p := model.Price{Model: "img", PerImage: decimal.RequireFromString("0.04"), Per1MChars: decimal.NewFromInt(15)}
	p.PerImageBySize.V = map[string]decimal.Decimal{"1024x1024/hd": decimal.RequireFromString("0.08")}
	p.Tiers.V = []model.PriceTier{{AbovePromptTokens: 200000, Input: decimal.NewFromInt(3), Output: decimal.NewFromInt(4)}}
	if err := s.ReplacePrices(ctx, []model.Price{p}); err != nil {
		t.Fatal(err)
	}
	ps, err = s.ListPrices(ctx)
	if err != nil || len(ps) != 1 || ps[0].PerImage.String() != "0.04" || ps[0].PerImageBySize.V["1024x1024/hd"].String() != "0.08" ||
		ps[0].Tiers.V[0].AbovePromptTokens != 200000 || ps[0].Per1MChars.String() != "15" {
		t.Fatalf("saved media prices: %+v, %v", ps, err)
	}
}

func TestMigrate_PricesGainMediaTermsOnSQLite(t *testing.T) {
	upgradeKeepsPricesAndAddsMediaTerms(t, open(t, "", filepath.Join(t.TempDir(), "preprice.db")))
}

func TestMigrate_PricesGainMediaTermsOnMySQL(t *testing.T) {
	upgradeKeepsPricesAndAddsMediaTerms(t, open(t, freshMySQL(t), ""))
}

package model_test

import (
	"context"
	"path/filepath"
	"testing"

	"tollgate/model"
)

// preCreditsUser is the users table as it was before credits were recorded.
type preCreditsUser struct {
	ID            int64  `gorm:"primaryKey"`
	Username      string `gorm:"type:varchar(32);not null;uniqueIndex"`
	UsernameLower string `gorm:"type:varchar(64);not null;default:''"`
	PasswordHash  string `gorm:"type:varchar(100);not null"`
	Quota         int64  `gorm:"not null;default:0"`
	UsedQuota     int64  `gorm:"not null;default:0"`
}

func (preCreditsUser) TableName() string { return "users" }

// A database made before the credits table gets one opening credit per user of quota + used_quota, so the
// books (Σ credits − Σ spend = balance) hold for balances granted before; a second migrate adds nothing.
func upgradeOpensCredits(t *testing.T, s *model.Store) {
	ctx := context.Background()
	db := s.DB.WithContext(ctx)
	if s.Kind == "mysql" {
		db = db.Set("gorm:table_options", "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin")
	}
	if err := db.AutoMigrate(&preCreditsUser{}); err != nil {
		t.Fatal(err)
	}
	rows := []preCreditsUser{{Username: "a", UsernameLower: "a", Quota: 700, UsedQuota: 300},
		{Username: "b", UsernameLower: "b"}, {Username: "c", UsernameLower: "c", Quota: 0, UsedQuota: 50}}
	for i := range rows {
		rows[i].PasswordHash = "x"
		if err := s.DB.Create(&rows[i]).Error; err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if err := s.Migrate(ctx); err != nil {
			t.Fatalf("migrate: %v", err)
		}
	}
	for _, r := range rows {
		got, err := s.SumCredits(ctx, r.ID)
		if err != nil || got != r.Quota+r.UsedQuota {
			t.Fatalf("credits of %s = %d, %v; want %d", r.Username, got, err, r.Quota+r.UsedQuota)
		}
	}
	var n int64
	s.DB.Model(&model.Credit{}).Count(&n)
	if n != 2 {
		t.Fatalf("%d opening credits, want 2 (none for a user with nothing)", n)
	}
}

func TestMigrate_OpeningCreditsOnSQLite(t *testing.T) {
	upgradeOpensCredits(t, open(t, "", filepath.Join(t.TempDir(), "pre.db")))
}

func TestMigrate_OpeningCreditsOnMySQL(t *testing.T) {
	upgradeOpensCredits(t, open(t, freshMySQL(t), ""))
}

package model_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"tollgate/model"
)

// preTOTPUser and preUASession are the users and sessions tables as they were before two-factor sign-in and
// the session list (no totp_* columns, no user_agent).
type preTOTPUser struct {
	ID            int64  `gorm:"primaryKey"`
	Username      string `gorm:"type:varchar(32);not null;uniqueIndex"`
	UsernameLower string `gorm:"type:varchar(64);not null;default:'';uniqueIndex:idx_users_username_lower"`
	PasswordHash  string `gorm:"type:varchar(100);not null"`
}

func (preTOTPUser) TableName() string { return "users" }

type preUASession struct {
	ID        int64     `gorm:"primaryKey"`
	UserID    int64     `gorm:"not null;index"`
	Hash      string    `gorm:"type:char(64);not null;uniqueIndex"`
	ExpiresAt time.Time `gorm:"not null"`
	Family    string    `gorm:"type:varchar(32);not null;default:'';index"`
	CreatedAt time.Time
}

func (preUASession) TableName() string { return "sessions" }

// Existing users get 2FA off and existing sessions an empty User-Agent; both stay usable, and a code's step
// is claimed once.
func upgradeAddsTwoFactorColumns(t *testing.T, s *model.Store) {
	ctx := context.Background()
	db := s.DB.WithContext(ctx)
	if s.Kind == "mysql" {
		db = db.Set("gorm:table_options", "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin")
	}
	if err := db.AutoMigrate(&preTOTPUser{}, &preUASession{}); err != nil {
		t.Fatal(err)
	}
	u := preTOTPUser{Username: "a", UsernameLower: "a", PasswordHash: "x"}
	if err := s.DB.Create(&u).Error; err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	if err := s.DB.Create(&preUASession{UserID: u.ID, Hash: "h1", ExpiresAt: now.Add(time.Hour), Family: "f1", CreatedAt: now}).Error; err != nil {
		t.Fatal(err)
	}
	if s.DB.Migrator().HasColumn(&model.User{}, "TOTPEnabled") || s.DB.Migrator().HasColumn(&model.Session{}, "UserAgent") {
		t.Fatal("the legacy tables already have the new columns; the test would prove nothing")
	}
	for range 2 {
		if err := s.Migrate(ctx); err != nil {
			t.Fatalf("migrate: %v", err)
		}
	}
	got, err := s.UserByID(ctx, u.ID)
	if err != nil || got.TOTPEnabled || got.TOTPSecret != "" || got.TOTPLastStep != 0 {
		t.Fatalf("user after migrate = %+v, %v", got, err)
	}
	live, err := s.LiveSessions(ctx, u.ID, now)
	if err != nil || len(live) != 1 || live[0].UserAgent != "" || !live[0].StartedAt.Equal(now) {
		t.Fatalf("sessions after migrate = %+v, %v", live, err)
	}
	for i, want := range []bool{true, false} {
		if ok, err := s.ClaimTOTPStep(ctx, u.ID, 100); err != nil || ok != want {
			t.Fatalf("claim %d = %v, %v; want %v", i, ok, err, want)
		}
	}
	if err := s.ReplaceBackupCodes(ctx, u.ID, []string{"s$h1", "s$h2"}); err != nil {
		t.Fatal(err)
	}
	codes, _ := s.UnusedBackupCodes(ctx, u.ID)
	for i, want := range []bool{true, false} {
		if ok, err := s.UseBackupCode(ctx, codes[0].ID, now); err != nil || ok != want {
			t.Fatalf("use %d = %v, %v; want %v", i, ok, err, want)
		}
	}
	if left, _ := s.UnusedBackupCodes(ctx, u.ID); len(left) != 1 {
		t.Fatalf("unused backup codes = %d, want 1", len(left))
	}
}

func TestMigrate_TwoFactorColumnsOnSQLite(t *testing.T) {
	upgradeAddsTwoFactorColumns(t, open(t, "", filepath.Join(t.TempDir(), "pretotp.db")))
}

func TestMigrate_TwoFactorColumnsOnMySQL(t *testing.T) {
	upgradeAddsTwoFactorColumns(t, open(t, freshMySQL(t), ""))
}

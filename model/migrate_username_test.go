package model_test

import (
	"context"
	"path/filepath"
	"testing"

	"tollgate/model"
)

// legacyUser is the users table as it was before usernames became case-insensitive (no username_lower).
type legacyUser struct {
	ID           int64  `gorm:"primaryKey"`
	Username     string `gorm:"type:varchar(32);not null;uniqueIndex"`
	PasswordHash string `gorm:"type:varchar(100);not null"`
}

func (legacyUser) TableName() string { return "users" }

// An old database where "Alice" and "alice" already coexist migrates: both keep signing in by their exact
// name, a case variant finds the older one, and no new case variant can be created.
func upgradeKeepsLegacyCaseTwins(t *testing.T, s *model.Store) {
	ctx := context.Background()
	db := s.DB.WithContext(ctx)
	if s.Kind == "mysql" {
		db = db.Set("gorm:table_options", "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin")
	}
	if err := db.AutoMigrate(&legacyUser{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Alice", "alice", "bob"} {
		if err := s.DB.Create(&legacyUser{Username: name, PasswordHash: "x"}).Error; err != nil {
			t.Fatalf("legacy insert %s: %v", name, err)
		}
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate a legacy database: %v", err)
	}
	if !s.DB.Migrator().HasIndex(&model.User{}, "idx_users_username_lower") {
		t.Fatal("unique index on username_lower is missing")
	}
	for name, want := range map[string]string{"Alice": "Alice", "alice": "alice", "ALICE": "Alice", "BOB": "bob"} {
		u, err := s.UserByUsername(ctx, name)
		if err != nil || u.Username != want {
			t.Fatalf("UserByUsername(%q) = %+v, %v; want %s", name, u, err, want)
		}
	}
	if err := s.CreateUser(ctx, &model.User{Username: "ALICE", PasswordHash: "y"}); err != model.ErrDuplicate {
		t.Fatalf("create ALICE: %v, want ErrDuplicate", err)
	}
	if err := s.CreateUser(ctx, &model.User{Username: "Bob", PasswordHash: "y"}); err != model.ErrDuplicate {
		t.Fatalf("create Bob: %v, want ErrDuplicate", err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("second migrate: %v", err)
	}
}

func TestMigrate_UsernamesBecomeCaseInsensitiveOnSQLite(t *testing.T) {
	upgradeKeepsLegacyCaseTwins(t, open(t, "", filepath.Join(t.TempDir(), "legacy.db")))
}

func TestMigrate_UsernamesBecomeCaseInsensitiveOnMySQL(t *testing.T) {
	upgradeKeepsLegacyCaseTwins(t, open(t, freshMySQL(t), ""))
}

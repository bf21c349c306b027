package model_test

import (
	"context"
	"path/filepath"
	"testing"

	"tollgate/model"
)

// preTierUser is the users table as it was before price tiers (no user_tier column).
type preTierUser struct {
	ID            int64  `gorm:"primaryKey"`
	Username      string `gorm:"type:varchar(32);not null;uniqueIndex"`
	UsernameLower string `gorm:"type:varchar(64);not null;default:'';uniqueIndex:idx_users_username_lower"`
	PasswordHash  string `gorm:"type:varchar(100);not null"`
	Group         string `gorm:"column:user_group;type:varchar(64);not null;default:'default';index"`
	Quota         int64  `gorm:"not null;default:0"`
}

func (preTierUser) TableName() string { return "users" }

// A database made before tiers gives every existing user the "default" tier, whose ratio is 1, so that no
// one's price changes; their group and balance stay; a second start changes nothing.
func upgradeGivesEveryoneTheDefaultTier(t *testing.T, s *model.Store) {
	ctx := context.Background()
	db := s.DB.WithContext(ctx)
	if s.Kind == "mysql" {
		db = db.Set("gorm:table_options", "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin")
	}
	if err := db.AutoMigrate(&preTierUser{}); err != nil {
		t.Fatal(err)
	}
	rows := []preTierUser{{Username: "a", Group: "default", Quota: 10}, {Username: "b", Group: "vip", Quota: 20}, {Username: "c", Group: "default"}}
	for i := range rows {
		rows[i].UsernameLower, rows[i].PasswordHash = rows[i].Username, "x"
		if err := s.DB.Create(&rows[i]).Error; err != nil {
			t.Fatal(err)
		}
	}
	if s.DB.Migrator().HasColumn(&model.User{}, "Tier") {
		t.Fatal("the legacy table already has user_tier; the test would prove nothing")
	}
	for range 2 {
		if err := s.Migrate(ctx); err != nil {
			t.Fatalf("migrate: %v", err)
		}
		if err := s.EnsureDefaultTier(ctx); err != nil {
			t.Fatalf("EnsureDefaultTier: %v", err)
		}
	}
	var users []model.User
	if err := s.DB.Order("id").Find(&users).Error; err != nil {
		t.Fatal(err)
	}
	if len(users) != len(rows) {
		t.Fatalf("%d users after migrate, want %d", len(users), len(rows))
	}
	for i, u := range users {
		if u.Tier != model.DefaultTier || u.Group != rows[i].Group || u.Quota != rows[i].Quota {
			t.Fatalf("user %s after migrate: tier %q group %q quota %d; want tier default, group %q, quota %d",
				u.Username, u.Tier, u.Group, u.Quota, rows[i].Group, rows[i].Quota)
		}
	}
	var nonDefault int64
	s.DB.Model(&model.User{}).Where("user_tier <> ?", model.DefaultTier).Count(&nonDefault)
	if nonDefault != 0 {
		t.Fatalf("%d users outside the default tier", nonDefault)
	}
	tiers, err := s.ListTiers(ctx)
	if err != nil || len(tiers) != 1 || tiers[0].Name != model.DefaultTier || tiers[0].Ratio.String() != "1" {
		t.Fatalf("tiers after upgrade = %+v, %v; want only default with ratio 1", tiers, err)
	}
	// A user created after the upgrade without naming a tier lands in the default one too.
	u := &model.User{Username: "d", PasswordHash: "x", Role: model.RoleUser, Group: "default", Status: model.StatusEnabled}
	if err := s.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	if got, err := s.UserByID(ctx, u.ID); err != nil || got.Tier != model.DefaultTier {
		t.Fatalf("new user = %+v, %v; want tier default", got, err)
	}
}

func TestMigrate_ExistingUsersGetDefaultTierOnSQLite(t *testing.T) {
	upgradeGivesEveryoneTheDefaultTier(t, open(t, "", filepath.Join(t.TempDir(), "pretier.db")))
}

func TestMigrate_ExistingUsersGetDefaultTierOnMySQL(t *testing.T) {
	upgradeGivesEveryoneTheDefaultTier(t, open(t, freshMySQL(t), ""))
}

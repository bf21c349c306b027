package model_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/shopspring/decimal"

	"tollgate/model"
)

func tierStore(t *testing.T, mysql bool) *model.Store {
	t.Helper()
	var s *model.Store
	if mysql {
		s = open(t, freshMySQL(t), "")
	} else {
		s = open(t, "", filepath.Join(t.TempDir(), "tiers.db"))
	}
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// Many nodes starting at once all succeed and leave exactly one default tier.
func ensureDefaultTierConcurrently(t *testing.T, s *model.Store) {
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = s.EnsureDefaultTier(ctx) }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent EnsureDefaultTier: %v", err)
	}
	ts, err := s.ListTiers(ctx)
	if err != nil || len(ts) != 1 || ts[0].Name != "default" || !ts[0].Ratio.Equal(decimal.NewFromInt(1)) {
		t.Fatalf("tiers = %+v, %v; want one default tier with ratio 1", ts, err)
	}
}

// A tier is refused deletion while a user is in it, and the user counts per tier are right.
func tierStoreCRUD(t *testing.T, s *model.Store) {
	ctx := context.Background()
	if err := s.EnsureDefaultTier(ctx); err != nil {
		t.Fatal(err)
	}
	vip := &model.Tier{Name: "vip", Description: "big spenders", Ratio: decimal.RequireFromString("0.8")}
	if err := s.CreateTier(ctx, vip); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTier(ctx, &model.Tier{Name: "vip", Ratio: decimal.NewFromInt(2)}); err != model.ErrDuplicate {
		t.Fatalf("duplicate tier: %v, want ErrDuplicate", err)
	}
	got, err := s.TierByName(ctx, "vip")
	if err != nil || got.Ratio.String() != "0.8" || got.Description != "big spenders" {
		t.Fatalf("vip = %+v, %v", got, err)
	}
	got.Ratio, got.Description = decimal.RequireFromString("0.75"), "still big"
	if err := s.UpdateTier(ctx, got); err != nil {
		t.Fatal(err)
	}
	if got, _ = s.TierByName(ctx, "vip"); got.Ratio.String() != "0.75" || got.Description != "still big" {
		t.Fatalf("vip after update = %+v", got)
	}
	if err := s.UpdateTier(ctx, &model.Tier{Name: "nope", Ratio: decimal.NewFromInt(1)}); err != model.ErrNotFound {
		t.Fatalf("update missing tier: %v, want ErrNotFound", err)
	}

	for _, name := range []string{"u1", "u2", "u3"} {
		if err := s.CreateUser(ctx, &model.User{Username: name, PasswordHash: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	u1, _ := s.UserByUsername(ctx, "u1")
	if err := s.UpdateUserFields(ctx, u1.ID, map[string]any{"user_tier": "vip"}); err != nil {
		t.Fatal(err)
	}
	counts, err := s.CountUsersByTier(ctx)
	if err != nil || counts["vip"] != 1 || counts["default"] != 2 {
		t.Fatalf("counts = %v, %v; want vip 1, default 2", counts, err)
	}
	if err := s.DeleteUnusedTier(ctx, "vip"); err != model.ErrTierInUse {
		t.Fatalf("delete a tier in use: %v, want ErrTierInUse", err)
	}
	if _, err := s.TierByName(ctx, "vip"); err != nil {
		t.Fatalf("the refused delete removed the tier: %v", err)
	}
	if err := s.UpdateUserFields(ctx, u1.ID, map[string]any{"user_tier": "default"}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteUnusedTier(ctx, "vip"); err != nil {
		t.Fatalf("delete an unused tier: %v", err)
	}
	if err := s.DeleteUnusedTier(ctx, "vip"); err != model.ErrNotFound {
		t.Fatalf("delete a missing tier: %v, want ErrNotFound", err)
	}
}

func TestTiers_EnsureDefaultTierConcurrentlyOnSQLite(t *testing.T) {
	ensureDefaultTierConcurrently(t, tierStore(t, false))
}

func TestTiers_EnsureDefaultTierConcurrentlyOnMySQL(t *testing.T) {
	ensureDefaultTierConcurrently(t, tierStore(t, true))
}

func TestTiers_DeleteRefusedWhileUsersHaveItOnSQLite(t *testing.T) {
	tierStoreCRUD(t, tierStore(t, false))
}

func TestTiers_DeleteRefusedWhileUsersHaveItOnMySQL(t *testing.T) {
	tierStoreCRUD(t, tierStore(t, true))
}

package app_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"tollgate/app/apptest"
)

// eventually polls cond every 10 ms until it holds or within passes, and returns how long it took.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > within {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

func TestTwoNodes_WritesOnOneInvalidateTheOtherWithinASecond(t *testing.T) {
	t.Parallel()
	env := apptest.NewEnv(t)
	if env.Shape != "mysql" {
		t.Skip("two nodes need the shared MariaDB + Redis shape: the in-process bus reaches only its own process")
	}
	a, b := env.Start(t), env.Start(t)
	ctx := context.Background()
	rootA := a.Root(t)
	alice := a.SignUp(t, "alice", "correct-horse-1")
	aliceB := b.Login(t, "alice", "correct-horse-1") // a session opened on node B
	id := userID(t, a, "alice")
	key := createKey(t, alice, map[string]any{"name": "k"})

	// Node B caches the key and the user.
	if c, err := b.App.Tokens.Lookup(ctx, key.Key); err != nil || c.Status != "enabled" {
		t.Fatalf("B Lookup = %+v, %v", c, err)
	}
	if u, err := b.App.Accounts.Cached(ctx, id); err != nil || u.Status != "enabled" {
		t.Fatalf("B Cached = %+v, %v", u, err)
	}
	wantStatus(t, aliceB.Do("GET", "/api/user/self", nil), http.StatusOK)

	t.Run("key disabled on A", func(t *testing.T) {
		wantStatus(t, rootA.Do("PATCH", path("/api/admin/tokens/%d", key.ID), map[string]string{"status": "disabled"}), http.StatusOK)
		eventually(t, time.Second, "node B sees the key disabled", func() bool {
			c, err := b.App.Tokens.Lookup(ctx, key.Key)
			return err == nil && c.Status == "disabled"
		})
	})

	t.Run("key deleted on A", func(t *testing.T) {
		wantStatus(t, alice.Do("DELETE", path("/api/tokens/%d", key.ID), nil), http.StatusNoContent)
		eventually(t, time.Second, "node B forgets the deleted key", func() bool {
			_, err := b.App.Tokens.Lookup(ctx, key.Key)
			return err != nil
		})
	})

	t.Run("group created on A", func(t *testing.T) {
		wantStatus(t, rootA.Do("POST", "/api/admin/groups", map[string]any{"name": "vip", "ratio": "3"}), http.StatusCreated)
		eventually(t, time.Second, "node B knows the new group", func() bool {
			g, ok := b.App.Groups.Get("vip")
			return ok && g.Ratio.String() == "3"
		})
	})

	t.Run("registration closed on A", func(t *testing.T) {
		wantStatus(t, rootA.Do("PUT", "/api/admin/settings", map[string]any{"registration_open": false}), http.StatusOK)
		eventually(t, time.Second, "node B sees registration closed", func() bool { return !b.App.Settings.Get().RegistrationOpen })
		wantError(t, b.Anon(t).Do("POST", "/api/auth/register", map[string]string{"username": "bob", "password": "correct-horse-1"}),
			http.StatusForbidden, "registration_closed")
	})

	t.Run("user disabled on A", func(t *testing.T) {
		wantStatus(t, rootA.Do("PATCH", path("/api/admin/users/%d", id), map[string]string{"status": "disabled"}), http.StatusOK)
		eventually(t, time.Second, "node B sees the user disabled", func() bool {
			u, err := b.App.Accounts.Cached(ctx, id)
			return err == nil && u.Status == "disabled"
		})
		if r := aliceB.Do("GET", "/api/user/self", nil); r.Status != http.StatusUnauthorized && r.Status != http.StatusForbidden {
			t.Fatalf("alice's session on B still works: %d %s", r.Status, r.Body)
		}
	})

	t.Run("balance adjusted on A", func(t *testing.T) {
		wantStatus(t, rootA.Do("POST", path("/api/admin/users/%d/quota", id), map[string]any{"delta": 777, "reason": "gift"}), http.StatusOK)
		var u userView
		b.Root(t).Do("GET", path("/api/admin/users/%d", id), nil).JSON(t, &u)
		if u.Quota != 777 {
			t.Fatalf("balance seen on B = %d, want 777 (live balances are shared)", u.Quota)
		}
	})
}

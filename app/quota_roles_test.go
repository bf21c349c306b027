package app_test

import (
	"net/http"
	"testing"

	"tollgate/app/apptest"
)

// A non-root admin may not move the balance of root or of another admin (draining root's balance, or topping
// up a fellow admin), just as it may not edit them; its own balance and users' balances stay its to adjust.
func TestRoles_AdminCannotMoveAnotherAdminsBalance(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	root := n.Root(t)
	admin := n.SignUp(t, "adam", "correct-horse-1")
	n.SignUp(t, "bob", "correct-horse-1")
	n.SignUp(t, "carol", "correct-horse-1")
	adamID, bobID, carolID := userID(t, n, "adam"), userID(t, n, "bob"), userID(t, n, "carol")
	wantStatus(t, root.Do("PATCH", path("/api/admin/users/%d", adamID), map[string]string{"role": "admin"}), http.StatusOK)
	wantStatus(t, root.Do("PATCH", path("/api/admin/users/%d", carolID), map[string]string{"role": "admin"}), http.StatusOK)
	for _, id := range []int64{1, carolID} {
		wantStatus(t, root.Do("POST", path("/api/admin/users/%d/quota", id), map[string]any{"delta": 1000, "reason": "seed"}), http.StatusOK)
	}
	for _, tc := range []struct {
		name  string
		id    int64
		delta int64
	}{{"drain root", 1, -1000}, {"top up root", 1, 5}, {"drain another admin", carolID, -1000}, {"top up another admin", carolID, 5}} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, admin.Do("POST", path("/api/admin/users/%d/quota", tc.id), map[string]any{"delta": tc.delta, "reason": "x"}),
				http.StatusForbidden, "forbidden")
		})
	}
	for _, id := range []int64{1, carolID} {
		u, err := n.App.Store.UserByID(t.Context(), id)
		if err != nil || u.Quota != 1000 {
			t.Fatalf("user %d balance = %+v (%v), want 1000 untouched", id, u, err)
		}
	}
	wantStatus(t, admin.Do("POST", path("/api/admin/users/%d/quota", bobID), map[string]any{"delta": 7, "reason": "ok"}), http.StatusOK)
	wantStatus(t, admin.Do("POST", path("/api/admin/users/%d/quota", adamID), map[string]any{"delta": 7, "reason": "own"}), http.StatusOK)
}

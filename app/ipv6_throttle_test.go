package app_test

import (
	"fmt"
	"net/http"
	"testing"

	"tollgate/app/apptest"
	"tollgate/model"
)

// Anyone with an IPv6 network (every VPS has a /64) holds 2^64 addresses: counted per address, the per-IP
// sign-up limit (free-credit farming) and the per-IP login limit plus the per-(username, address) delay
// (password guessing) did not hold. Addresses in one /64 count as one.
func TestSignUp_IPv6AddressesOfOneNetworkShareTheLimit(t *testing.T) {
	t.Parallel()
	env := apptest.NewEnv(t)
	behindProxy(env)
	n := env.Start(t)
	wantStatus(t, n.Root(t).Do("PUT", "/api/admin/settings", map[string]any{"signup_rate_limit": 3}), http.StatusOK)
	users := count(t, n, &model.User{})
	for i := 1; i <= 3; i++ {
		wantStatus(t, from(t, n, fmt.Sprintf("2001:db8:1:2::%x", i), "POST", "/api/auth/register",
			map[string]string{"username": fmt.Sprintf("farm%d", i), "password": "correct-horse-1"}), http.StatusCreated)
	}
	wantError(t, from(t, n, "2001:db8:1:2:ffff:1234:5678:9abc", "POST", "/api/auth/register",
		map[string]string{"username": "farm4", "password": "correct-horse-1"}), http.StatusTooManyRequests, "too_many_signups")
	if got := count(t, n, &model.User{}); got != users+3 {
		t.Fatalf("users = %d, want %d", got, users+3)
	}
	// Another /64 is another network.
	wantStatus(t, from(t, n, "2001:db8:1:3::1", "POST", "/api/auth/register",
		map[string]string{"username": "farm5", "password": "correct-horse-1"}), http.StatusCreated)
}

func TestLogin_IPv6AddressesOfOneNetworkShareTheDelay(t *testing.T) {
	t.Parallel()
	env := apptest.NewEnv(t)
	behindProxy(env)
	n := env.Start(t)
	n.SignUp(t, "victim", "correct-horse-1")
	wrong := map[string]string{"username": "victim", "password": "wrong-horse-1"}
	for i := 1; i <= 4; i++ { // three free failures, the fourth imposes a delay on the network
		wantError(t, from(t, n, fmt.Sprintf("2001:db8:9:9::%x", i), "POST", "/api/auth/login", wrong), http.StatusUnauthorized, "invalid_credentials")
	}
	wantError(t, from(t, n, "2001:db8:9:9::99", "POST", "/api/auth/login", wrong), http.StatusTooManyRequests, "login_delayed")
	// The owner elsewhere is not held.
	wantStatus(t, from(t, n, "2001:db8:7:7::1", "POST", "/api/auth/login",
		map[string]string{"username": "victim", "password": "correct-horse-1"}), http.StatusOK)
}

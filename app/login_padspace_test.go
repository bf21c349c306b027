package app_test

import (
	"net/http"
	"testing"

	"tollgate/app/apptest"
)

// MariaDB compares strings PAD SPACE: "victim " (and "victim   ") found the user "victim", while the sign-in
// throttle counts "victim " as another username. A guesser held by victim's delay went on guessing through
// the padded names, each with fresh free failures. A name that no user could have signed up with (usernames
// are 3-32 of A-Z a-z 0-9 _ . -) is an unknown user on every store.
func TestLogin_NamesNoUserCanHaveMatchNobody(t *testing.T) {
	t.Parallel()
	env := apptest.NewEnv(t)
	behindProxy(env)
	n := env.Start(t)
	n.SignUp(t, "victim", "correct-horse-1")
	wrong := map[string]string{"username": "victim", "password": "wrong-horse-1"}
	for range 4 {
		wantError(t, from(t, n, "198.51.100.7", "POST", "/api/auth/login", wrong), http.StatusUnauthorized, "invalid_credentials")
	}
	wantError(t, from(t, n, "198.51.100.7", "POST", "/api/auth/login", wrong), http.StatusTooManyRequests, "login_delayed")
	for _, name := range []string{"victim ", "victim   ", "VICTIM ", "victim\t", " victim", "vİctim"} {
		r := from(t, n, "198.51.100.7", "POST", "/api/auth/login", map[string]string{"username": name, "password": "correct-horse-1"})
		if r.Status == http.StatusOK {
			t.Fatalf("%q signed in as victim while victim's delay was pending: %s", name, r.Body)
		}
	}
	// The real name still works once the delay is over, and from another address at once.
	wantStatus(t, from(t, n, "198.51.100.8", "POST", "/api/auth/login", map[string]string{"username": "Victim", "password": "correct-horse-1"}), http.StatusOK)
}

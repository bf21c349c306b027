package app_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tollgate/app/apptest"
	"tollgate/model"
)

// behindProxy makes the node believe X-Forwarded-For from the test client, so a test can speak from many
// client addresses (documentation ranges only: they are header values, never traffic).
func behindProxy(e *apptest.Env) { e.Cfg.TrustedProxies = []string{"127.0.0.1", "::1"} }

// from sends a console request as if from client address ip (needs behindProxy).
func from(t testing.TB, n *apptest.Node, ip, method, path string, body any, lang ...string) *apptest.Resp {
	t.Helper()
	b, _ := json.Marshal(body)
	req, err := http.NewRequest(method, n.URL+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", ip)
	if len(lang) > 0 {
		req.Header.Set("Accept-Language", lang[0])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return &apptest.Resp{Status: res.StatusCode, Body: out, Header: res.Header}
}

func loginFrom(t testing.TB, n *apptest.Node, ip, user, pw string, lang ...string) *apptest.Resp {
	t.Helper()
	return from(t, n, ip, "POST", "/api/auth/login", map[string]string{"username": user, "password": pw}, lang...)
}

// retryAfter reads a 429's Retry-After in seconds (failing when absent).
func retryAfter(t testing.TB, r *apptest.Resp) int {
	t.Helper()
	s, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || s <= 0 {
		t.Fatalf("429 without a Retry-After (%q): %s", r.Header.Get("Retry-After"), r.Body)
	}
	return s
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// Before: the dummy hash for unknown users was bcrypt.MinCost, so an unknown username answered ~16x faster
// than a known one at cost 8 (and ~16x at the default cost 10 vs 4 too).
func TestLogin_UnknownUserCostsAsMuchAsAKnownOne(t *testing.T) {
	t.Parallel()
	env := apptest.NewEnv(t)
	env.Options.BcryptCost = 9 // a real cost (32x MinCost), cheap enough for a test
	n := env.Start(t)
	const tries = 5
	for i := range tries {
		n.SignUp(t, "known"+strconv.Itoa(i), "correct-horse-1")
	}
	timed := func(user string) time.Duration {
		start := time.Now()
		wantError(t, n.Anon(t).Do("POST", "/api/auth/login", map[string]string{"username": user, "password": "wrong-horse-1"}),
			http.StatusUnauthorized, "invalid_credentials")
		return time.Since(start)
	}
	// Distinct usernames (one failure each stays under the per-username delay), interleaved so that load on
	// the machine hits both series alike; medians ignore a stray slow try.
	var known, unknown []time.Duration
	for i := range tries {
		known = append(known, timed("known"+strconv.Itoa(i)))
		unknown = append(unknown, timed("ghost"+strconv.Itoa(i)))
	}
	k, u := median(known), median(unknown)
	t.Logf("median login: known %s, unknown %s", k, u)
	if u < k/2 {
		t.Fatalf("an unknown username answers in %s, a known one in %s: timing tells which names exist", u, k)
	}
}

// Before: ten failures for a username from anywhere locked its owner out for 5 minutes.
func TestLogin_FailuresDelayTheUsernameInsteadOfLockingTheOwnerOut(t *testing.T) {
	t.Parallel()
	env := apptest.NewEnv(t)
	behindProxy(env)
	n := env.Start(t)
	n.SignUp(t, "alice", "correct-horse-1")

	// 40 wrong passwords for alice, each from another address (a botnet, or one attacker rotating).
	for i := range 40 {
		ip := "203.0.113." + strconv.Itoa(i+1)
		wantError(t, loginFrom(t, n, ip, "alice", "guess-"+strconv.Itoa(i)), http.StatusUnauthorized, "invalid_credentials")
	}
	// The owner, from her own address, gets in at once with the right password.
	wantStatus(t, loginFrom(t, n, "198.51.100.7", "alice", "correct-horse-1"), http.StatusOK)

	t.Run("the failing address waits, even with the right password", func(t *testing.T) {
		n.SignUp(t, "bob", "correct-horse-1")
		ip := "192.0.2.10"
		// Three typos are free; the 4th failure starts a 1 s delay for bob from this address, the 5th a 2 s one.
		for range 4 {
			wantError(t, loginFrom(t, n, ip, "bob", "typo-horse-1"), http.StatusUnauthorized, "invalid_credentials")
		}
		r := loginFrom(t, n, ip, "bob", "correct-horse-1")
		e := wantError(t, r, http.StatusTooManyRequests, "login_delayed")
		first := retryAfter(t, r)
		if first != 1 || !strings.Contains(e.Error.Message, "1") {
			t.Fatalf("first delay = %d s (%q), want 1 s", first, e.Error.Message)
		}
		wantChinese(t, wantError(t, loginFrom(t, n, ip, "bob", "correct-horse-1", "zh-CN"), http.StatusTooManyRequests, "login_delayed"))
		// Refused attempts while waiting are not failures: they do not stretch the delay.
		for range 20 {
			if r := loginFrom(t, n, ip, "bob", "typo-horse-1"); r.Status != http.StatusTooManyRequests || retryAfter(t, r) > 1 {
				t.Fatalf("attempt during the delay = %d (Retry-After %s), want 429 within 1 s", r.Status, r.Header.Get("Retry-After"))
			}
		}
		time.Sleep(1100 * time.Millisecond)
		wantError(t, loginFrom(t, n, ip, "bob", "typo-horse-1"), http.StatusUnauthorized, "invalid_credentials")
		r = loginFrom(t, n, ip, "bob", "correct-horse-1")
		wantError(t, r, http.StatusTooManyRequests, "login_delayed")
		if second := retryAfter(t, r); second != 2 {
			t.Fatalf("second delay = %d s, want 2 s (growing)", second)
		}
		// After the wait the owner gets in from the same address, and her success clears the count.
		time.Sleep(2100 * time.Millisecond)
		wantStatus(t, loginFrom(t, n, ip, "bob", "correct-horse-1"), http.StatusOK)
		wantError(t, loginFrom(t, n, ip, "bob", "typo-horse-1"), http.StatusUnauthorized, "invalid_credentials")
		wantStatus(t, loginFrom(t, n, ip, "bob", "correct-horse-1"), http.StatusOK)
	})

	t.Run("an unknown username is throttled the same way", func(t *testing.T) {
		ip := "192.0.2.20"
		for range 4 {
			wantError(t, loginFrom(t, n, ip, "nobody", "typo-horse-1"), http.StatusUnauthorized, "invalid_credentials")
		}
		wantError(t, loginFrom(t, n, ip, "nobody", "typo-horse-1"), http.StatusTooManyRequests, "login_delayed")
	})

	t.Run("the delay is capped", func(t *testing.T) {
		// Twelve failures from twelve addresses: the next failing address gets the cap, not 2^8 s.
		for i := range 12 {
			wantError(t, loginFrom(t, n, "203.0.113."+strconv.Itoa(100+i), "carl", "typo-horse-1"), http.StatusUnauthorized, "invalid_credentials")
		}
		ip := "192.0.2.30"
		wantError(t, loginFrom(t, n, ip, "carl", "typo-horse-1"), http.StatusUnauthorized, "invalid_credentials")
		r := loginFrom(t, n, ip, "carl", "typo-horse-1")
		wantError(t, r, http.StatusTooManyRequests, "login_delayed")
		if s := retryAfter(t, r); s > 30 || s < 16 {
			t.Fatalf("delay = %d s, want the 30 s cap", s)
		}
		// A flood while the delay is pending is refused at once: nothing sleeps, no bcrypt runs.
		var wg sync.WaitGroup
		var refused atomic.Int64
		start := time.Now()
		for range 100 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if loginFrom(t, n, ip, "carl", "another-guess-1").Status == http.StatusTooManyRequests {
					refused.Add(1)
				}
			}()
		}
		wg.Wait()
		if refused.Load() != 100 {
			t.Fatalf("%d of 100 flooded attempts refused, want all", refused.Load())
		}
		t.Logf("100 parallel attempts during a delay answered 429 in %s", time.Since(start))
	})
}

// Before: sign-up had no limit (free-credit farming when new_user_quota > 0).
func TestSignUp_IsRateLimitedPerAddress(t *testing.T) {
	t.Parallel()
	env := apptest.NewEnv(t)
	behindProxy(env)
	n := env.Start(t)
	var other *apptest.Node
	if env.Shape == "mysql" {
		other = env.Start(t) // the counter is in Redis: a second node sees it
	}
	wantStatus(t, n.Root(t).Do("PUT", "/api/admin/settings", map[string]any{"signup_rate_limit": 3}), http.StatusOK)
	reg := func(n *apptest.Node, ip, user string, pw string, lang ...string) *apptest.Resp {
		return from(t, n, ip, "POST", "/api/auth/register", map[string]string{"username": user, "password": pw}, lang...)
	}
	users := count(t, n, &model.User{})
	// A refused sign-up does not use up the address's allowance.
	wantField(t, reg(n, "203.0.113.5", "x", "correct-horse-1"), "username")
	for i := 1; i <= 3; i++ {
		wantStatus(t, reg(n, "203.0.113.5", "farm"+strconv.Itoa(i), "correct-horse-1"), http.StatusCreated)
	}
	r := reg(n, "203.0.113.5", "farm4", "correct-horse-1")
	e := wantError(t, r, http.StatusTooManyRequests, "too_many_signups")
	if s := retryAfter(t, r); s > 3601 || !strings.Contains(e.Error.Message, "3") {
		t.Fatalf("Retry-After %d, message %q", s, e.Error.Message)
	}
	wantChinese(t, wantError(t, reg(n, "203.0.113.5", "farm4", "correct-horse-1", "zh-CN"), http.StatusTooManyRequests, "too_many_signups"), 3)
	if other != nil {
		wantError(t, reg(other, "203.0.113.5", "farm5", "correct-horse-1"), http.StatusTooManyRequests, "too_many_signups")
	}
	if got := count(t, n, &model.User{}); got != users+3 {
		t.Fatalf("users = %d, want %d", got, users+3)
	}
	// Another address is not affected; 0 turns the limit off.
	wantStatus(t, reg(n, "203.0.113.6", "farm6", "correct-horse-1"), http.StatusCreated)
	wantStatus(t, n.Root(t).Do("PUT", "/api/admin/settings", map[string]any{"signup_rate_limit": 0}), http.StatusOK)
	wantStatus(t, reg(n, "203.0.113.5", "farm7", "correct-horse-1"), http.StatusCreated)
}

// Before: "Alice" and "alice" could both sign up (SQLite compares case-sensitively; MySQL tables are utf8mb4_bin).
func TestUsernames_AreUniqueWhateverTheCase(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	n.SignUp(t, "Alice", "correct-horse-1")
	for _, name := range []string{"alice", "ALICE", "aLiCe"} {
		wantError(t, n.Anon(t).Do("POST", "/api/auth/register", map[string]string{"username": name, "password": "correct-horse-2"}),
			http.StatusConflict, "username_taken")
	}
	if c := count(t, n, &model.User{}, "LOWER(username) = ?", "alice"); c != 1 {
		t.Fatalf("%d accounts named alice in any case, want 1", c)
	}
	// Signing in with any case finds the one account, which keeps its own spelling.
	for _, name := range []string{"Alice", "alice", "ALICE"} {
		r := n.Anon(t).Do("POST", "/api/auth/login", map[string]string{"username": name, "password": "correct-horse-1"})
		wantStatus(t, r, http.StatusOK)
		var s struct {
			User userView `json:"user"`
		}
		r.JSON(t, &s)
		if s.User.Username != "Alice" {
			t.Fatalf("login as %q = %+v, want the account Alice", name, s.User)
		}
	}
	wantError(t, n.Anon(t).Do("POST", "/api/auth/login", map[string]string{"username": "ALICE", "password": "correct-horse-2"}),
		http.StatusUnauthorized, "invalid_credentials")
}

// Before: "password1" was accepted, and so was a password made of the username.
func TestPasswordPolicy_RefusesCommonPasswordsAndTheUsername(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	reg := func(user, pw string) *apptest.Resp {
		return n.Anon(t).Do("POST", "/api/auth/register", map[string]string{"username": user, "password": pw})
	}
	users := count(t, n, &model.User{})
	for _, pw := range []string{"password1", "Password1", "PASSWORD1", "passw0rd", "abc12345", "qwerty123", "iloveyou1"} {
		e := wantError(t, reg("carol", pw), http.StatusBadRequest, "weak_password")
		if !strings.Contains(e.Error.Message, "common") {
			t.Fatalf("%q: message %q does not say the password is too common", pw, e.Error.Message)
		}
	}
	for _, pw := range []string{"carol2024!", "my-CAROL-pw-9", "xCaRoL1234"} {
		e := wantError(t, reg("carol", pw), http.StatusBadRequest, "weak_password")
		if !strings.Contains(e.Error.Message, "username") {
			t.Fatalf("%q: message %q does not name the username rule", pw, e.Error.Message)
		}
	}
	wantChinese(t, wantError(t, zh(n.Anon(t)).Do("POST", "/api/auth/register", map[string]string{"username": "carol", "password": "password1"}),
		http.StatusBadRequest, "weak_password"))
	wantError(t, reg("carol", "short1"), http.StatusBadRequest, "weak_password")
	if got := count(t, n, &model.User{}); got != users {
		t.Fatalf("refused sign-ups wrote %d users", got-users)
	}
	// The README's example password passes.
	carol := n.SignUp(t, "carol", "secret123")
	// A password change is held to the same rules.
	for _, pw := range []string{"password1", "carol-new-1"} {
		wantError(t, carol.Do("POST", "/api/user/password", map[string]string{"old_password": "secret123", "new_password": pw}),
			http.StatusBadRequest, "weak_password")
	}
	wantStatus(t, carol.Do("POST", "/api/user/password", map[string]string{"old_password": "secret123", "new_password": "tram-lines-42"}),
		http.StatusNoContent)
}

func loginResp(t testing.TB, n *apptest.Node) (string, *http.Cookie) {
	t.Helper()
	r := n.Anon(t).Do("POST", "/api/auth/login", map[string]string{"username": "alice", "password": "correct-horse-1"})
	wantStatus(t, r, http.StatusOK)
	var s struct {
		Token string `json:"token"`
	}
	r.JSON(t, &s)
	return s.Token, refreshCookie(t, r)
}

func refreshWith(t testing.TB, n *apptest.Node, ck *http.Cookie) (*apptest.Resp, string, *http.Cookie) {
	t.Helper()
	r := withCookie(n.Anon(t), ck).Do("POST", "/api/auth/refresh", nil)
	if r.Status != http.StatusOK {
		return r, "", nil
	}
	var s struct {
		Token string `json:"token"`
	}
	r.JSON(t, &s)
	return r, s.Token, refreshCookie(t, r)
}

// Before: presenting a rotated refresh token again was refused but left the family (the thief's or the
// victim's newer tokens and JWTs) alive.
func TestRefreshReuse_RevokesTheWholeFamilyAndItsJWTs(t *testing.T) {
	t.Parallel()
	n := noRefreshGrace(t)
	n.SignUp(t, "alice", "correct-horse-1")
	other := n.Login(t, "alice", "correct-horse-1") // another login: another family
	jwt1, first := loginResp(t, n)
	_, jwt2, second := refreshWith(t, n, first)
	wantStatus(t, as(n.Anon(t), jwt2).Do("GET", "/api/user/self", nil), http.StatusOK)

	r, _, _ := refreshWith(t, n, first) // the stolen, already rotated token
	wantError(t, r, http.StatusUnauthorized, "invalid_refresh")
	r, _, _ = refreshWith(t, n, second)
	wantError(t, r, http.StatusUnauthorized, "invalid_refresh")
	for _, jwt := range []string{jwt1, jwt2} {
		wantError(t, as(n.Anon(t), jwt).Do("GET", "/api/user/self", nil), http.StatusUnauthorized, "invalid_session")
	}
	// The other login is untouched.
	wantStatus(t, other.Do("GET", "/api/user/self", nil), http.StatusOK)
	r, _, _ = refreshWith(t, n, other.Cookie[0])
	wantStatus(t, r, http.StatusOK)
	if c := count(t, n, &model.AuditLog{}, "action = ?", "user.refresh_reuse"); c != 1 {
		t.Fatalf("refresh_reuse audit rows = %d, want 1", c)
	}
}

// noRefreshGrace starts a node where a rotated refresh token presented again is a theft at once (no grace for
// racing tabs), so reuse tests need not wait out the window.
func noRefreshGrace(t *testing.T) *apptest.Node {
	e := apptest.NewEnv(t)
	e.Options.RefreshGrace = -1
	return e.Start(t)
}

// Two tabs refreshing at once send the same cookie; the loser must not sign the user out everywhere. Within
// the grace window the just-rotated token is refused with refresh_rotated, its cookie kept (the jar holds the
// successor), and the family, its JWTs and the successor stay valid; no theft is recorded.
func TestRefreshRace_TheLosingTabIsRefusedWithoutEndingTheFamily(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	n.SignUp(t, "alice", "correct-horse-1")
	jwt1, first := loginResp(t, n)
	_, jwt2, second := refreshWith(t, n, first)
	r, _, _ := refreshWith(t, n, first) // the other tab, a moment late
	wantError(t, r, http.StatusUnauthorized, "refresh_rotated")
	for _, ck := range r.Header.Values("Set-Cookie") {
		if strings.HasPrefix(ck, "tollgate_refresh=") {
			t.Fatalf("the losing tab's refusal touched the cookie: %s", ck)
		}
	}
	for _, jwt := range []string{jwt1, jwt2} {
		wantStatus(t, as(n.Anon(t), jwt).Do("GET", "/api/user/self", nil), http.StatusOK)
	}
	r, _, _ = refreshWith(t, n, second)
	wantStatus(t, r, http.StatusOK)
	if c := count(t, n, &model.AuditLog{}, "action = ?", "user.refresh_reuse"); c != 0 {
		t.Fatalf("refresh_reuse audit rows = %d, want 0", c)
	}
}

// Before: the access JWT kept working after logout until it expired (15 min).
func TestLogout_EndsTheAccessJWT(t *testing.T) {
	t.Parallel()
	env := apptest.NewEnv(t)
	a := env.Start(t)
	b := a
	if env.Shape == "mysql" {
		b = env.Start(t) // the revocation is in Redis: the other node refuses the JWT too
	}
	a.SignUp(t, "alice", "correct-horse-1")
	other := a.Login(t, "alice", "correct-horse-1")

	t.Run("logout with the cookie and the bearer", func(t *testing.T) {
		jwt, ck := loginResp(t, a)
		wantStatus(t, as(b.Anon(t), jwt).Do("GET", "/api/user/self", nil), http.StatusOK)
		wantStatus(t, as(withCookie(a.Anon(t), ck), jwt).Do("POST", "/api/auth/logout", nil), http.StatusNoContent)
		wantError(t, as(a.Anon(t), jwt).Do("GET", "/api/user/self", nil), http.StatusUnauthorized, "invalid_session")
		wantError(t, as(b.Anon(t), jwt).Do("GET", "/api/user/self", nil), http.StatusUnauthorized, "invalid_session")
		r, _, _ := refreshWith(t, b, ck)
		wantError(t, r, http.StatusUnauthorized, "invalid_refresh")
	})
	t.Run("logout with the cookie only", func(t *testing.T) {
		jwt, ck := loginResp(t, a)
		_, jwt2, ck2 := refreshWith(t, a, ck)
		wantStatus(t, withCookie(a.Anon(t), ck2).Do("POST", "/api/auth/logout", nil), http.StatusNoContent)
		for _, j := range []string{jwt, jwt2} {
			wantError(t, as(b.Anon(t), j).Do("GET", "/api/user/self", nil), http.StatusUnauthorized, "invalid_session")
		}
	})
	t.Run("logout with the bearer only", func(t *testing.T) {
		jwt, ck := loginResp(t, a)
		wantStatus(t, as(a.Anon(t), jwt).Do("POST", "/api/auth/logout", nil), http.StatusNoContent)
		wantError(t, as(b.Anon(t), jwt).Do("GET", "/api/user/self", nil), http.StatusUnauthorized, "invalid_session")
		r, _, _ := refreshWith(t, b, ck)
		wantError(t, r, http.StatusUnauthorized, "invalid_refresh")
	})
	// Other sessions of the same user are untouched by these logouts.
	wantStatus(t, as(b.Anon(t), other.Token).Do("GET", "/api/user/self", nil), http.StatusOK)

	t.Run("password change ends the JWTs on every node", func(t *testing.T) {
		jwt, _ := loginResp(t, a)
		wantStatus(t, as(b.Anon(t), jwt).Do("GET", "/api/user/self", nil), http.StatusOK)
		wantStatus(t, other.Do("POST", "/api/user/password", map[string]string{"old_password": "correct-horse-1", "new_password": "tram-lines-42"}),
			http.StatusNoContent)
		eventually(t, time.Second, "the other node refuses the old JWT", func() bool {
			return as(b.Anon(t), jwt).Do("GET", "/api/user/self", nil).Status == http.StatusUnauthorized
		})
		wantError(t, as(a.Anon(t), jwt).Do("GET", "/api/user/self", nil), http.StatusUnauthorized, "invalid_session")
	})
}

// new_user_quota was built but untested.
func TestNewUserQuota_IsGrantedOnceOnSignUp(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	root := n.Root(t)
	wantStatus(t, root.Do("PUT", "/api/admin/settings", map[string]any{"new_user_quota": 12345}), http.StatusOK)
	dave := n.SignUp(t, "dave", "correct-horse-1")
	id := userID(t, n, "dave")
	balance := func() int64 {
		var u userView
		r := dave.Do("GET", "/api/user/self", nil)
		wantStatus(t, r, http.StatusOK)
		r.JSON(t, &u)
		return u.Quota
	}
	if got := balance(); got != 12345 {
		t.Fatalf("balance after sign-up = %d, want 12345", got)
	}
	// Signing in again, refreshing and a refused second sign-up grant nothing more.
	n.Login(t, "dave", "correct-horse-1")
	r, _, _ := refreshWith(t, n, dave.Cookie[0])
	wantStatus(t, r, http.StatusOK)
	wantError(t, n.Anon(t).Do("POST", "/api/auth/register", map[string]string{"username": "dave", "password": "correct-horse-1"}),
		http.StatusConflict, "username_taken")
	if got := balance(); got != 12345 {
		t.Fatalf("balance = %d, want still 12345", got)
	}
	var admin userView
	root.Do("GET", path("/api/admin/users/%d", id), nil).JSON(t, &admin)
	if admin.Quota != 12345 {
		t.Fatalf("admin view quota = %d", admin.Quota)
	}
	if u, err := n.App.Store.UserByID(t.Context(), id); err != nil || u.Quota != 12345 {
		t.Fatalf("SQL quota = %+v, %v", u, err)
	}
	// One audit row says so.
	var page struct {
		Items []model.AuditLog `json:"items"`
		Total int64            `json:"total"`
	}
	root.Do("GET", "/api/admin/audit?action=user.quota", nil).JSON(t, &page)
	if page.Total != 1 || page.Items[0].Target != "dave" || !strings.Contains(page.Items[0].Detail, `"delta":12345`) ||
		!strings.Contains(page.Items[0].Detail, "new_user_quota") {
		t.Fatalf("audit = %+v", page)
	}
	// With the setting at 0, a new user starts at 0 and no grant is audited.
	wantStatus(t, root.Do("PUT", "/api/admin/settings", map[string]any{"new_user_quota": 0}), http.StatusOK)
	erin := n.SignUp(t, "erin", "correct-horse-1")
	var u userView
	erin.Do("GET", "/api/user/self", nil).JSON(t, &u)
	if u.Quota != 0 || count(t, n, &model.AuditLog{}, "action = ?", "user.quota") != 1 {
		t.Fatalf("erin quota = %d; quota audit rows = %d", u.Quota, count(t, n, &model.AuditLog{}, "action = ?", "user.quota"))
	}
}

package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"tollgate/app/apptest"
	"tollgate/model"
)

func refreshCookie(t testing.TB, r *apptest.Resp) *http.Cookie {
	t.Helper()
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == "tollgate_refresh" {
			return c
		}
	}
	t.Fatalf("no tollgate_refresh cookie in %v", r.Header.Values("Set-Cookie"))
	return nil
}

func withCookie(c *apptest.Client, ck *http.Cookie) *apptest.Client {
	cp := *c
	cp.Cookie = []*http.Cookie{{Name: ck.Name, Value: ck.Value}}
	return &cp
}

func TestRegisterLoginSelf_ReturnsTheContractShapes(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	c := n.Anon(t)

	r := c.Do("POST", "/api/auth/register", map[string]string{"username": "alice", "password": "correct-horse-1", "email": "a@example.com"})
	wantStatus(t, r, http.StatusCreated)
	var reg struct {
		User map[string]any `json:"user"`
	}
	r.JSON(t, &reg)
	for _, k := range []string{"id", "username", "email", "role", "group", "status", "quota", "used_quota", "request_count", "created_at"} {
		if _, ok := reg.User[k]; !ok {
			t.Errorf("register user has no %q: %s", k, r.Body)
		}
	}
	if strings.Contains(string(r.Body), "password") || strings.Contains(string(r.Body), "$2a$") {
		t.Fatalf("register answer leaks the password hash: %s", r.Body)
	}

	r = c.Do("POST", "/api/auth/login", map[string]string{"username": "alice", "password": "correct-horse-1"})
	wantStatus(t, r, http.StatusOK)
	var login struct {
		Token     string   `json:"token"`
		ExpiresAt string   `json:"expires_at"`
		User      userView `json:"user"`
	}
	r.JSON(t, &login)
	if login.Token == "" || login.ExpiresAt == "" || login.User.Username != "alice" {
		t.Fatalf("login = %s", r.Body)
	}
	ck := refreshCookie(t, r)
	if !ck.HttpOnly || ck.Path != "/api/auth" || ck.SameSite != http.SameSiteStrictMode || ck.MaxAge <= 0 {
		t.Fatalf("refresh cookie = %+v, want httpOnly, path /api/auth, SameSite=Strict, persistent", ck)
	}

	r = as(c, login.Token).Do("GET", "/api/user/self", nil)
	wantStatus(t, r, http.StatusOK)
	var self userView
	r.JSON(t, &self)
	want := userView{ID: self.ID, Username: "alice", Email: "a@example.com", Role: "user", Group: "default", Status: "enabled"}
	if self != want || self.ID == 0 {
		t.Fatalf("self = %+v, want %+v", self, want)
	}

	// Wrong password and unknown user answer the same.
	for _, body := range []map[string]string{
		{"username": "alice", "password": "correct-horse-2"},
		{"username": "nobody", "password": "correct-horse-1"},
	} {
		wantError(t, c.Do("POST", "/api/auth/login", body), http.StatusUnauthorized, "invalid_credentials")
	}
}

func TestRefresh_RotatesTheCookieAndRefusesAUsedOne(t *testing.T) {
	t.Parallel()
	n := noRefreshGrace(t)
	n.SignUp(t, "alice", "correct-horse-1")
	c := n.Anon(t)
	r := c.Do("POST", "/api/auth/login", map[string]string{"username": "alice", "password": "correct-horse-1"})
	wantStatus(t, r, http.StatusOK)
	first := refreshCookie(t, r)

	r = withCookie(c, first).Do("POST", "/api/auth/refresh", nil)
	wantStatus(t, r, http.StatusOK)
	second := refreshCookie(t, r)
	if second.Value == first.Value || second.Value == "" {
		t.Fatal("refresh did not rotate the cookie")
	}
	var s struct {
		Token string `json:"token"`
	}
	r.JSON(t, &s)
	wantStatus(t, as(c, s.Token).Do("GET", "/api/user/self", nil), http.StatusOK)

	// The used refresh token is refused, and the refusal clears the cookie.
	r = withCookie(c, first).Do("POST", "/api/auth/refresh", nil)
	wantError(t, r, http.StatusUnauthorized, "invalid_refresh")
	if ck := refreshCookie(t, r); ck.MaxAge >= 0 || ck.Value != "" {
		t.Fatalf("refused refresh left cookie %+v, want it cleared", ck)
	}
	wantChinese(t, wantError(t, zh(withCookie(c, first)).Do("POST", "/api/auth/refresh", nil), http.StatusUnauthorized, "invalid_refresh"))
	wantError(t, c.Do("POST", "/api/auth/refresh", nil), http.StatusUnauthorized, "invalid_refresh")
	wantError(t, withCookie(c, &http.Cookie{Name: "tollgate_refresh", Value: "forged"}).Do("POST", "/api/auth/refresh", nil),
		http.StatusUnauthorized, "invalid_refresh")

	// Reusing the rotated token revoked its whole family, the newer token included
	// (TestRefreshReuse_RevokesTheWholeFamilyAndItsJWTs). A fresh login rotates once more; logout revokes the newest.
	wantError(t, withCookie(c, second).Do("POST", "/api/auth/refresh", nil), http.StatusUnauthorized, "invalid_refresh")
	r = c.Do("POST", "/api/auth/login", map[string]string{"username": "alice", "password": "correct-horse-1"})
	wantStatus(t, r, http.StatusOK)
	r = withCookie(c, refreshCookie(t, r)).Do("POST", "/api/auth/refresh", nil)
	wantStatus(t, r, http.StatusOK)
	third := refreshCookie(t, r)
	r = withCookie(c, third).Do("POST", "/api/auth/logout", nil)
	wantStatus(t, r, http.StatusNoContent)
	if ck := refreshCookie(t, r); ck.MaxAge >= 0 || ck.Value != "" {
		t.Fatalf("logout left cookie %+v, want it cleared", ck)
	}
	wantError(t, withCookie(c, third).Do("POST", "/api/auth/refresh", nil), http.StatusUnauthorized, "invalid_refresh")
	// Logout without a cookie (or twice) is harmless.
	wantStatus(t, c.Do("POST", "/api/auth/logout", nil), http.StatusNoContent)
	wantStatus(t, withCookie(c, third).Do("POST", "/api/auth/logout", nil), http.StatusNoContent)
}

func TestChangePassword_KillsOldSessions(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	alice := n.SignUp(t, "alice", "correct-horse-1")
	other := n.Login(t, "alice", "correct-horse-1") // a second session of the same user

	wantError(t, alice.Do("POST", "/api/user/password", map[string]string{"old_password": "nope12345", "new_password": "correct-horse-2"}),
		http.StatusBadRequest, "wrong_current_password")
	wantError(t, alice.Do("POST", "/api/user/password", map[string]string{"old_password": "correct-horse-1", "new_password": "weak"}),
		http.StatusBadRequest, "weak_password")
	wantField(t, alice.Do("POST", "/api/user/password", `{"old_password": 1}`), "old_password")
	// Refused changes kept the sessions.
	wantStatus(t, alice.Do("GET", "/api/user/self", nil), http.StatusOK)

	wantStatus(t, alice.Do("POST", "/api/user/password", map[string]string{"old_password": "correct-horse-1", "new_password": "correct-horse-2"}),
		http.StatusNoContent)
	for _, c := range []*apptest.Client{alice, other} {
		wantError(t, c.Do("GET", "/api/user/self", nil), http.StatusUnauthorized, "invalid_session")
		wantError(t, withCookie(c, c.Cookie[0]).Do("POST", "/api/auth/refresh", nil), http.StatusUnauthorized, "invalid_refresh")
	}
	wantError(t, n.Anon(t).Do("POST", "/api/auth/login", map[string]string{"username": "alice", "password": "correct-horse-1"}),
		http.StatusUnauthorized, "invalid_credentials")
	wantStatus(t, n.Login(t, "alice", "correct-horse-2").Do("GET", "/api/user/self", nil), http.StatusOK)
}

func TestLogin_IsRateLimitedPerUsernameAndPerIP(t *testing.T) {
	t.Parallel()
	login := func(c *apptest.Client, user, pw string) *apptest.Resp {
		return c.Do("POST", "/api/auth/login", map[string]string{"username": user, "password": pw})
	}
	// untilLimited fails logins until one answers 429 and returns how many were refused with 401 first.
	untilLimited := func(t *testing.T, c *apptest.Client, user func(i int) string) int {
		for i := 0; i < 200; i++ {
			r := login(c, user(i), "wrong-password1")
			if r.Status == http.StatusTooManyRequests {
				return i
			}
			wantError(t, r, http.StatusUnauthorized, "invalid_credentials")
		}
		t.Fatal("200 failed logins were never rate limited")
		return 0
	}

	// Per-username failures delay instead of locking out: hardening_accounts_test.go.
	t.Run("per IP", func(t *testing.T) {
		t.Parallel()
		n := apptest.New(t)
		n.SignUp(t, "alice", "correct-horse-1")
		c := n.Anon(t)
		// A different username each time never reaches the per-username limit.
		fails := untilLimited(t, c, func(i int) string { return fmt.Sprintf("guess%03d", i) })
		if fails < 10 {
			t.Fatalf("IP limited after only %d failures", fails)
		}
		wantError(t, login(c, "alice", "correct-horse-1"), http.StatusTooManyRequests, "too_many_attempts")
		wantChinese(t, wantError(t, login(zh(c), "alice", "correct-horse-1"), http.StatusTooManyRequests, "too_many_attempts"), 300)
	})
}

func TestRegistrationClosed_RefusesSignUpWith403(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	root := n.Root(t)
	users := count(t, n, &model.User{})

	r := root.Do("PUT", "/api/admin/settings", map[string]any{"registration_open": false})
	wantStatus(t, r, http.StatusOK)
	if r.M(t)["registration_open"] != false {
		t.Fatalf("settings after close = %s", r.Body)
	}
	if n.Anon(t).Do("GET", "/api/status", nil).M(t)["registration_open"] != false {
		t.Fatal("/api/status still says registration is open")
	}
	body := map[string]string{"username": "alice", "password": "correct-horse-1"}
	wantError(t, n.Anon(t).Do("POST", "/api/auth/register", body), http.StatusForbidden, "registration_closed")
	wantChinese(t, wantError(t, zh(n.Anon(t)).Do("POST", "/api/auth/register", body), http.StatusForbidden, "registration_closed"))
	if got := count(t, n, &model.User{}); got != users {
		t.Fatalf("users = %d after a refused sign-up, want %d", got, users)
	}

	// Bad settings are refused and change nothing.
	wantField(t, root.Do("PUT", "/api/admin/settings", map[string]any{"no_such_setting": 1}), "no_such_setting")
	wantError(t, root.Do("PUT", "/api/admin/settings", map[string]any{"registration_open": "yes"}), http.StatusBadRequest, "invalid_json")
	wantField(t, root.Do("PUT", "/api/admin/settings", map[string]any{"new_user_quota": -5}), "new_user_quota")
	if root.Do("GET", "/api/admin/settings", nil).M(t)["registration_open"] != false {
		t.Fatal("a refused settings write changed registration_open")
	}

	wantStatus(t, root.Do("PUT", "/api/admin/settings", map[string]any{"registration_open": true}), http.StatusOK)
	wantStatus(t, n.Anon(t).Do("POST", "/api/auth/register", body), http.StatusCreated)
}

// foundationAdminRoutes are the /api/admin routes of the foundation contract, with a body that would change
// something if the call were allowed.
var foundationAdminRoutes = []struct {
	method, path string
	body         any
}{
	{"GET", "/api/admin/users", nil},
	{"GET", "/api/admin/users/:id", nil},
	{"PATCH", "/api/admin/users/:id", map[string]string{"status": "disabled"}},
	{"POST", "/api/admin/users/:id/quota", map[string]any{"delta": 1000, "reason": "gift"}},
	{"GET", "/api/admin/tokens", nil},
	{"PATCH", "/api/admin/tokens/:id", map[string]string{"status": "disabled"}},
	{"GET", "/api/admin/groups", nil},
	{"POST", "/api/admin/groups", map[string]any{"name": "vip", "ratio": "2"}},
	{"PATCH", "/api/admin/groups/:name", map[string]any{"ratio": "5"}},
	{"DELETE", "/api/admin/groups/:name", nil},
	{"GET", "/api/admin/settings", nil},
	{"PUT", "/api/admin/settings", map[string]any{"registration_open": false}},
	{"GET", "/api/admin/audit", nil},
}

// routeLister is what *gin.Engine offers to list its routes.
type routeLister interface{ Routes() gin.RoutesInfo }

func TestAdminRoutes_RefuseUsersAndAnonymous(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	user := n.SignUp(t, "alice", "correct-horse-1")
	createKey(t, user, map[string]any{"name": "k"})
	audit := count(t, n, &model.AuditLog{}, "action <> ?", "user.login")

	// Every /api/admin route the node serves, not only the ones listed here.
	bodies := map[string]any{}
	for _, rt := range foundationAdminRoutes {
		bodies[rt.method+" "+rt.path] = rt.body
	}
	engine, ok := n.App.Handler.(routeLister)
	if !ok {
		t.Fatalf("App.Handler is %T, cannot list routes", n.App.Handler)
	}
	seen := map[string]bool{}
	for _, ri := range engine.Routes() {
		if !strings.HasPrefix(ri.Path, "/api/admin/") {
			continue
		}
		key := ri.Method + " " + ri.Path
		seen[key] = true
		p := strings.NewReplacer(":id", "1", ":name", "default", ":job", "1").Replace(ri.Path)
		body, ok := bodies[key]
		if !ok && ri.Method != "GET" {
			body = map[string]any{}
		}
		t.Run(key, func(t *testing.T) {
			wantError(t, user.Do(ri.Method, p, body), http.StatusForbidden, "forbidden")
			wantChinese(t, wantError(t, zh(user).Do(ri.Method, p, body), http.StatusForbidden, "forbidden"))
			wantError(t, n.Anon(t).Do(ri.Method, p, body), http.StatusUnauthorized, "unauthorized")
		})
	}
	for key := range bodies {
		if !seen[key] {
			t.Errorf("contract route %s is not registered", key)
		}
	}
	// Nothing the refused calls asked for happened.
	root := n.Root(t)
	var self userView
	root.Do("GET", "/api/user/self", nil).JSON(t, &self)
	if self.Status != "enabled" || self.Quota != 0 {
		t.Fatalf("root after refused admin calls = %+v", self)
	}
	if count(t, n, &model.Group{}) != 1 || count(t, n, &model.Token{}, "status = ?", "disabled") != 0 {
		t.Fatal("a refused admin call changed groups or keys")
	}
	if !n.App.Settings.Get().RegistrationOpen {
		t.Fatal("a refused admin call closed registration")
	}
	if got := count(t, n, &model.AuditLog{}, "action <> ?", "user.login"); got != audit {
		t.Fatalf("audit rows = %d, want %d", got, audit)
	}
}

func TestRoles_OnlyRootGrantsAdmin(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	root := n.Root(t)
	admin := n.SignUp(t, "adam", "correct-horse-1")
	n.SignUp(t, "bob", "correct-horse-1")
	n.SignUp(t, "carol", "correct-horse-1")
	adamID, bobID, carolID := userID(t, n, "adam"), userID(t, n, "bob"), userID(t, n, "carol")

	r := root.Do("PATCH", path("/api/admin/users/%d", adamID), map[string]string{"role": "admin"})
	wantStatus(t, r, http.StatusOK)
	// adam's existing session is an admin one at once: the role is read from the user, not the JWT.
	wantStatus(t, admin.Do("GET", "/api/admin/users", nil), http.StatusOK)
	wantStatus(t, root.Do("PATCH", path("/api/admin/users/%d", carolID), map[string]string{"role": "admin"}), http.StatusOK)

	for _, tc := range []struct {
		name   string
		id     int64
		body   map[string]string
		status int
		code   string
	}{
		{"admin grants admin", bobID, map[string]string{"role": "admin"}, 403, "role_not_allowed"},
		{"admin grants root", bobID, map[string]string{"role": "root"}, 403, "role_not_allowed"},
		{"admin edits another admin", carolID, map[string]string{"role": "user"}, 403, "forbidden"},
		{"admin disables another admin", carolID, map[string]string{"status": "disabled"}, 403, "forbidden"},
		{"admin edits root", 1, map[string]string{"status": "disabled"}, 403, "forbidden"},
		{"admin demotes self", adamID, map[string]string{"role": "user"}, 403, "cannot_modify_self"},
		{"unknown role", bobID, map[string]string{"role": "god"}, 400, "validation_failed"},
		{"unknown group", bobID, map[string]string{"group": "nope"}, 400, "group_not_found"},
		{"unknown status", bobID, map[string]string{"status": "paused"}, 400, "validation_failed"},
		{"unknown user", 99999, map[string]string{"status": "disabled"}, 404, "user_not_found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, admin.Do("PATCH", path("/api/admin/users/%d", tc.id), tc.body), tc.status, tc.code)
		})
	}
	wantError(t, root.Do("PATCH", "/api/admin/users/1", map[string]string{"status": "disabled"}), http.StatusForbidden, "cannot_modify_self")
	roles := map[int64]string{1: "root", adamID: "admin", bobID: "user", carolID: "admin"}
	for id, want := range roles {
		u, err := n.App.Store.UserByID(t.Context(), id)
		if err != nil || u.Role != want || u.Status != "enabled" {
			t.Fatalf("user %d = %+v (%v), want role %s and enabled", id, u, err, want)
		}
	}
	// What an admin may do: set a user's group and status.
	r = admin.Do("PATCH", path("/api/admin/users/%d", bobID), map[string]string{"status": "disabled"})
	wantStatus(t, r, http.StatusOK)
	if r.M(t)["status"] != "disabled" {
		t.Fatalf("patch = %s", r.Body)
	}
}

func TestAdminDisablesUser_SessionsEndAtOnce(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	root := n.Root(t)
	alice := n.SignUp(t, "alice", "correct-horse-1")
	id := userID(t, n, "alice")
	wantStatus(t, alice.Do("GET", "/api/user/self", nil), http.StatusOK) // warms the user cache

	wantStatus(t, root.Do("PATCH", path("/api/admin/users/%d", id), map[string]string{"status": "disabled"}), http.StatusOK)
	if r := alice.Do("GET", "/api/user/self", nil); r.Status != http.StatusUnauthorized && r.Status != http.StatusForbidden {
		t.Fatalf("disabled user's JWT still works: %d %s", r.Status, r.Body)
	}
	wantError(t, alice.Do("POST", "/api/tokens", map[string]any{"name": "k"}), http.StatusUnauthorized, "invalid_session")
	wantError(t, withCookie(alice, alice.Cookie[0]).Do("POST", "/api/auth/refresh", nil), http.StatusUnauthorized, "invalid_refresh")
	login := map[string]string{"username": "alice", "password": "correct-horse-1"}
	wantError(t, n.Anon(t).Do("POST", "/api/auth/login", login), http.StatusForbidden, "user_disabled")
	wantChinese(t, wantError(t, zh(n.Anon(t)).Do("POST", "/api/auth/login", login), http.StatusForbidden, "user_disabled"))
	noTokens(t, n)

	wantStatus(t, root.Do("PATCH", path("/api/admin/users/%d", id), map[string]string{"status": "enabled"}), http.StatusOK)
	wantStatus(t, n.Login(t, "alice", "correct-horse-1").Do("GET", "/api/user/self", nil), http.StatusOK)
}

func TestAdminAdjustsBalance_WithReasonAndAudit(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	root := n.Root(t)
	alice := n.SignUp(t, "alice", "correct-horse-1")
	id := userID(t, n, "alice")
	quota := path("/api/admin/users/%d/quota", id)
	auditRows := func() int64 { return count(t, n, &model.AuditLog{}, "action = ?", "user.quota") }
	balance := func() int64 {
		var u userView
		alice.Do("GET", "/api/user/self", nil).JSON(t, &u)
		return u.Quota
	}

	r := root.Do("POST", quota, map[string]any{"delta": 5_000_000, "reason": "bank transfer #42"})
	wantStatus(t, r, http.StatusOK)
	var u userView
	r.JSON(t, &u)
	if u.Quota != 5_000_000 || balance() != 5_000_000 {
		t.Fatalf("after +5000000: answer %d, self %d", u.Quota, balance())
	}
	var stored model.User
	if err := n.App.Store.DB.First(&stored, id).Error; err != nil || stored.Quota != 5_000_000 {
		t.Fatalf("SQL balance = %d (%v), want 5000000", stored.Quota, err)
	}
	if auditRows() != 1 {
		t.Fatalf("audit rows = %d, want 1", auditRows())
	}
	var page struct {
		Items []struct {
			ActorName string `json:"actor_name"`
			Action    string `json:"action"`
			Target    string `json:"target"`
			Detail    string `json:"detail"`
			IP        string `json:"ip"`
		} `json:"items"`
	}
	root.Do("GET", "/api/admin/audit?action=user.quota", nil).JSON(t, &page)
	if len(page.Items) != 1 {
		t.Fatalf("audit list = %+v", page)
	}
	a := page.Items[0]
	var detail struct {
		Delta  int64  `json:"delta"`
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal([]byte(a.Detail), &detail); err != nil || a.ActorName != "root" || a.Target != "alice" ||
		detail.Delta != 5_000_000 || detail.Reason != "bank transfer #42" || a.IP == "" {
		t.Fatalf("audit entry = %+v (%v)", a, err)
	}

	for _, tc := range []struct {
		name   string
		path   string
		body   any
		status int
		code   string
	}{
		{"missing reason", quota, map[string]any{"delta": 1000}, 400, "reason_required"},
		{"blank reason", quota, map[string]any{"delta": 1000, "reason": ""}, 400, "reason_required"},
		{"reason too long", quota, map[string]any{"delta": 1000, "reason": strings.Repeat("r", 256)}, 400, "reason_required"},
		{"underflow", quota, map[string]any{"delta": -5_000_001, "reason": "refund"}, 400, "quota_underflow"},
		{"zero delta", quota, map[string]any{"delta": 0, "reason": "noop"}, 400, "validation_failed"},
		{"delta of wrong type", quota, `{"delta": "lots", "reason": "x"}`, 400, "validation_failed"},
		{"fractional delta", quota, `{"delta": 1.5, "reason": "x"}`, 400, "validation_failed"},
		{"unknown user", "/api/admin/users/99999/quota", map[string]any{"delta": 1, "reason": "x"}, 404, "user_not_found"},
		{"bad id", "/api/admin/users/abc/quota", map[string]any{"delta": 1, "reason": "x"}, 404, "user_not_found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, root.Do("POST", tc.path, tc.body), tc.status, tc.code)
			if b := balance(); b != 5_000_000 {
				t.Fatalf("balance = %d after a refused adjustment, want 5000000", b)
			}
			if auditRows() != 1 {
				t.Fatalf("a refused adjustment wrote an audit row")
			}
		})
	}
	wantChinese(t, wantError(t, zh(root).Do("POST", quota, map[string]any{"delta": 1}), 400, "reason_required"))

	wantStatus(t, root.Do("POST", quota, map[string]any{"delta": -5_000_000, "reason": "refund"}), http.StatusOK)
	if b := balance(); b != 0 || auditRows() != 2 {
		t.Fatalf("after deducting everything: balance %d, audit rows %d", b, auditRows())
	}
}

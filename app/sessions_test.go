package app_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"tollgate/app/apptest"
	"tollgate/model"
)

const (
	uaFirefoxLinux = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
	uaChromeMac    = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"
)

// loginAs signs alice in with a User-Agent; the client carries the JWT and the refresh cookie.
func loginAs(t *testing.T, n *apptest.Node, ua string) *apptest.Client {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"username": "alice", "password": "correct-horse-1"})
	req, _ := http.NewRequest("POST", n.URL+"/api/auth/login", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", ua)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("login: %d %s", res.StatusCode, body)
	}
	var s struct {
		Token string `json:"token"`
	}
	_ = json.Unmarshal(body, &s)
	return &apptest.Client{T: t, Base: n.URL, Token: s.Token, Cookie: res.Cookies()}
}

type sessionView struct {
	ID       int64  `json:"id"`
	Device   string `json:"device"`
	IP       string `json:"ip"`
	Current  bool   `json:"current"`
	Created  string `json:"created_at"`
	LastSeen string `json:"last_seen"`
}

func sessionsOf(t *testing.T, c *apptest.Client, p string) []sessionView {
	t.Helper()
	r := c.Do("GET", p, nil)
	wantStatus(t, r, http.StatusOK)
	var out struct {
		Items []sessionView `json:"items"`
	}
	r.JSON(t, &out)
	return out.Items
}

// refreshes reports whether the client's refresh cookie still mints a session.
func refreshes(t *testing.T, n *apptest.Node, c *apptest.Client) bool {
	t.Helper()
	r := (&apptest.Client{T: t, Base: n.URL, Cookie: c.Cookie}).Do("POST", "/api/auth/refresh", nil)
	return r.Status == http.StatusOK
}

func TestSessions_ListEndOneAndEndOthers(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	n.SignUp(t, "alice", "correct-horse-1") // a first session (Go's User-Agent)
	ff := loginAs(t, n, uaFirefoxLinux)
	cr := loginAs(t, n, uaChromeMac)

	list := sessionsOf(t, ff, "/api/user/sessions")
	if len(list) != 3 {
		t.Fatalf("sessions = %+v, want 3", list)
	}
	var mine, chrome *sessionView
	for i := range list {
		s := &list[i]
		if s.IP == "" || s.Created == "" || s.LastSeen == "" {
			t.Fatalf("session without ip or times: %+v", s)
		}
		switch s.Device {
		case "Firefox on Linux":
			mine = s
		case "Chrome on macOS":
			chrome = s
		}
	}
	if mine == nil || chrome == nil || !mine.Current || chrome.Current {
		t.Fatalf("devices/current wrong: %+v", list)
	}

	// Ending the Chrome session stops its refresh token and its live JWT at once.
	wantStatus(t, ff.Do("DELETE", path("/api/user/sessions/%d", chrome.ID), nil), http.StatusNoContent)
	wantError(t, cr.Do("GET", "/api/user/self", nil), http.StatusUnauthorized, "invalid_session")
	if refreshes(t, n, cr) {
		t.Fatal("the ended session's refresh token still works")
	}
	if got := sessionsOf(t, ff, "/api/user/sessions"); len(got) != 2 {
		t.Fatalf("after ending one: %+v", got)
	}
	wantStatus(t, ff.Do("GET", "/api/user/self", nil), http.StatusOK)

	// Someone else's session id is not found.
	bob := n.SignUp(t, "bob", "correct-horse-1")
	bobs := sessionsOf(t, bob, "/api/user/sessions")
	wantError(t, ff.Do("DELETE", path("/api/user/sessions/%d", bobs[0].ID), nil), http.StatusNotFound, "session_not_found")
	wantStatus(t, bob.Do("GET", "/api/user/self", nil), http.StatusOK)

	// End all others: only the caller's session stays, and its refresh still works.
	other := loginAs(t, n, uaChromeMac)
	r := ff.Do("DELETE", "/api/user/sessions", nil)
	wantStatus(t, r, http.StatusOK)
	if ended := r.M(t)["ended"].(float64); ended != 2 {
		t.Fatalf("ended = %v, want 2", ended)
	}
	wantError(t, other.Do("GET", "/api/user/self", nil), http.StatusUnauthorized, "invalid_session")
	if refreshes(t, n, other) {
		t.Fatal("an ended session's refresh token still works")
	}
	if got := sessionsOf(t, ff, "/api/user/sessions"); len(got) != 1 || !got[0].Current {
		t.Fatalf("after ending others: %+v", got)
	}
	wantStatus(t, ff.Do("GET", "/api/user/self", nil), http.StatusOK)
	if !refreshes(t, n, ff) {
		t.Fatal("the caller's own session was ended")
	}
}

func TestSessions_AdminEndsAUsersSessions(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	root := n.Root(t)
	n.SignUp(t, "alice", "correct-horse-1")
	a1, a2 := loginAs(t, n, uaFirefoxLinux), loginAs(t, n, uaChromeMac)
	id := userID(t, n, "alice")
	list := sessionsOf(t, root, path("/api/admin/users/%d/sessions", id))
	if len(list) != 3 {
		t.Fatalf("admin list = %+v", list)
	}
	for _, s := range list {
		if s.Current {
			t.Fatalf("an admin's view marks alice's session current: %+v", s)
		}
	}
	wantError(t, a1.Do("DELETE", path("/api/admin/users/%d/sessions", userID(t, n, "root")), nil), http.StatusForbidden, "forbidden")
	r := root.Do("DELETE", path("/api/admin/users/%d/sessions", id), nil)
	wantStatus(t, r, http.StatusOK)
	if ended := r.M(t)["ended"].(float64); ended != 3 {
		t.Fatalf("ended = %v, want 3", ended)
	}
	for _, c := range []*apptest.Client{a1, a2} {
		wantError(t, c.Do("GET", "/api/user/self", nil), http.StatusUnauthorized, "invalid_session")
		if refreshes(t, n, c) {
			t.Fatal("a session the admin ended still refreshes")
		}
	}
	wantStatus(t, root.Do("GET", "/api/user/self", nil), http.StatusOK)
	if c := count(t, n, &model.AuditLog{}, "action = ? AND target = ?", "user.sessions_end", "alice"); c != 1 {
		t.Fatalf("audit rows = %d, want 1", c)
	}
	// Alice signs in again afterwards.
	loginAs(t, n, uaFirefoxLinux)
}

// On the MariaDB + Redis shape, a session ended through one node is refused by another at once.
func TestSessions_EndReachesEveryNode(t *testing.T) {
	env := apptest.NewEnv(t)
	if env.Shape != "mysql" {
		t.Skip("two-node revocation needs the shared MariaDB + Redis shape")
	}
	a, b := env.Start(t), env.Start(t)
	a.SignUp(t, "alice", "correct-horse-1")
	victim := loginAs(t, b, uaChromeMac)
	wantStatus(t, victim.Do("GET", "/api/user/self", nil), http.StatusOK) // cached on b
	keeper := loginAs(t, a, uaFirefoxLinux)
	wantStatus(t, keeper.Do("DELETE", "/api/user/sessions", nil), http.StatusOK)
	wantError(t, victim.Do("GET", "/api/user/self", nil), http.StatusUnauthorized, "invalid_session")
	if refreshes(t, b, victim) {
		t.Fatal("refresh on the other node still works")
	}
}

package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"tollgate/app/apptest"
	"tollgate/model"
	"tollgate/service/totp"
)

// tfaClock is the account service's clock in these tests: the time the node started plus an offset the test
// moves. It stands still otherwise, so the 30-second step a test computes a code for is the one the node checks
// it against: on real time a test crossed into the next step now and then between two requests (a used code
// then read as a fresh one).
type tfaClock struct {
	base time.Time
	off  atomic.Int64
}

func (c *tfaClock) Now() time.Time          { return c.base.Add(time.Duration(c.off.Load())) }
func (c *tfaClock) Advance(d time.Duration) { c.off.Add(int64(d)) }

// tfaNode starts a node whose account clock the test moves.
func tfaNode(t *testing.T) (*apptest.Node, *tfaClock) {
	t.Helper()
	clk := &tfaClock{base: time.Now()}
	e := apptest.NewEnv(t)
	e.Options.AccountClock = clk.Now
	return e.Start(t), clk
}

// doWith sends a request like Client.Do with extra headers.
func doWith(t testing.TB, c *apptest.Client, method, p string, body any, hdr map[string]string) *apptest.Resp {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.Base+p, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	for _, ck := range c.Cookie {
		req.AddCookie(ck)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, p, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return &apptest.Resp{Status: res.StatusCode, Body: b, Header: res.Header}
}

// enrol turns 2FA on for c through the API and returns the secret's key and the backup codes.
func enrol(t *testing.T, c *apptest.Client, clk *tfaClock) ([]byte, []string) {
	t.Helper()
	r := c.Do("POST", "/api/user/2fa/setup", nil)
	wantStatus(t, r, http.StatusOK)
	var setup struct {
		Secret     string `json:"secret"`
		OtpauthURL string `json:"otpauth_url"`
	}
	r.JSON(t, &setup)
	if !strings.HasPrefix(setup.OtpauthURL, "otpauth://totp/") || !strings.Contains(setup.OtpauthURL, "secret="+setup.Secret) {
		t.Fatalf("setup = %+v", setup)
	}
	key, err := totp.Decode(setup.Secret)
	if err != nil {
		t.Fatalf("secret %q: %v", setup.Secret, err)
	}
	r = c.Do("POST", "/api/user/2fa/enable", map[string]string{"code": code(key, clk)})
	wantStatus(t, r, http.StatusOK)
	var out struct {
		BackupCodes []string `json:"backup_codes"`
	}
	r.JSON(t, &out)
	return key, out.BackupCodes
}

// code is the TOTP code of key at the node's current time.
func code(key []byte, clk *tfaClock) string { return totp.Code(key, totp.Step(clk.Now())) }

// wrongCodes are n six-digit codes valid in no step the node accepts now (the current one ± totp.Skew): a fixed
// "000000" is the right code for a random key 3 times in a million.
func wrongCodes(key []byte, clk *tfaClock, n int) []string {
	valid := map[string]bool{}
	for d := int64(-totp.Skew); d <= totp.Skew; d++ {
		valid[totp.Code(key, totp.Step(clk.Now())+d)] = true
	}
	var out []string
	for i := 0; len(out) < n; i++ {
		if c := fmt.Sprintf("%06d", i); !valid[c] {
			out = append(out, c)
		}
	}
	return out
}

// wrongCode is one code valid in no step the node accepts now.
func wrongCode(key []byte, clk *tfaClock) string { return wrongCodes(key, clk, 1)[0] }

// nextCode moves the clock to the next step (a step's code is accepted once) and returns its code.
func nextCode(key []byte, clk *tfaClock) string {
	clk.Advance(totp.Period)
	return code(key, clk)
}

func login(t testing.TB, n *apptest.Node, user, pass, code string) *apptest.Resp {
	t.Helper()
	return n.Anon(t).Do("POST", "/api/auth/login", map[string]string{"username": user, "password": pass, "totp": code})
}

func sessionToken(t testing.TB, r *apptest.Resp) string {
	t.Helper()
	wantStatus(t, r, http.StatusOK)
	var s struct {
		Token string `json:"token"`
	}
	r.JSON(t, &s)
	if s.Token == "" {
		t.Fatalf("no token in %s", r.Body)
	}
	return s.Token
}

func TestTOTP_EnrolmentLoginAndBackupCodes(t *testing.T) {
	t.Parallel()
	n, clk := tfaNode(t)
	alice := n.SignUp(t, "alice", "correct-horse-1")
	var st struct {
		Enabled bool `json:"enabled"`
		Left    int  `json:"backup_codes_left"`
	}
	alice.Do("GET", "/api/user/2fa", nil).JSON(t, &st)
	if st.Enabled {
		t.Fatal("2fa on before enrolment")
	}
	wantError(t, alice.Do("POST", "/api/user/2fa/enable", map[string]string{"code": "123456"}), http.StatusBadRequest, "totp_not_setup")

	// A wrong code does not enable it; the code the test computes from the secret does.
	r := alice.Do("POST", "/api/user/2fa/setup", nil)
	wantStatus(t, r, http.StatusOK)
	var setup struct {
		Secret string `json:"secret"`
	}
	r.JSON(t, &setup)
	key, _ := totp.Decode(setup.Secret)
	wrong := totp.Code(key, totp.Step(clk.Now())+5)
	wantError(t, alice.Do("POST", "/api/user/2fa/enable", map[string]string{"code": wrong}), http.StatusBadRequest, "totp_invalid")
	wantStatus(t, login(t, n, "alice", "correct-horse-1", ""), http.StatusOK) // still off
	key, backups := enrol(t, alice, clk)
	if len(backups) != 10 {
		t.Fatalf("backup codes = %v", backups)
	}
	seen := map[string]bool{}
	for _, b := range backups {
		if seen[b] || len(b) < 10 {
			t.Fatalf("backup codes not distinct or too short: %v", backups)
		}
		seen[b] = true
	}
	alice.Do("GET", "/api/user/2fa", nil).JSON(t, &st)
	if !st.Enabled || st.Left != 10 {
		t.Fatalf("status = %+v", st)
	}

	// At rest: the secret sealed, the backup codes hashed.
	u, _ := n.App.Store.UserByUsername(context.Background(), "alice")
	if u.TOTPSecret == "" || strings.Contains(u.TOTPSecret, strings.TrimRight(totpB32(key), "=")) {
		t.Fatalf("secret stored in clear: %q", u.TOTPSecret)
	}
	var rows []model.BackupCode
	n.App.Store.DB.Where("user_id = ?", u.ID).Find(&rows)
	for _, row := range rows {
		for _, b := range backups {
			if strings.Contains(row.Hash, strings.ReplaceAll(b, "-", "")) || strings.Contains(row.Hash, b) {
				t.Fatalf("backup code stored in clear: %s", row.Hash)
			}
		}
	}

	// The password alone is not enough; a wrong password is still a wrong password.
	wantError(t, login(t, n, "alice", "wrong-horse-1", ""), http.StatusUnauthorized, "invalid_credentials")
	wantError(t, login(t, n, "alice", "correct-horse-1", ""), http.StatusUnauthorized, "totp_required")
	wantError(t, login(t, n, "alice", "correct-horse-1", wrongCode(key, clk)), http.StatusUnauthorized, "totp_invalid")
	// The code that enabled 2FA was used (the node recorded its step): that step's code is refused, the next
	// step's accepted once.
	if u.TOTPLastStep != totp.Step(clk.Now()) {
		t.Fatalf("step recorded at enrolment = %d, want the current one %d", u.TOTPLastStep, totp.Step(clk.Now()))
	}
	wantError(t, login(t, n, "alice", "correct-horse-1", code(key, clk)), http.StatusUnauthorized, "totp_invalid")
	c := nextCode(key, clk)
	tok := sessionToken(t, login(t, n, "alice", "correct-horse-1", c))
	wantStatus(t, as(n.Anon(t), tok).Do("GET", "/api/user/self", nil), http.StatusOK)
	wantError(t, login(t, n, "alice", "correct-horse-1", c), http.StatusUnauthorized, "totp_invalid")

	// The two-step path: the password gives a ticket, the ticket and a code give a session, once.
	r = login(t, n, "alice", "correct-horse-1", "")
	var pending struct {
		Ticket string `json:"ticket"`
	}
	r.JSON(t, &pending)
	if pending.Ticket == "" {
		t.Fatalf("no ticket: %s", r.Body)
	}
	c = nextCode(key, clk)
	sessionToken(t, n.Anon(t).Do("POST", "/api/auth/login/totp", map[string]string{"ticket": pending.Ticket, "totp": c}))
	wantError(t, n.Anon(t).Do("POST", "/api/auth/login/totp", map[string]string{"ticket": pending.Ticket, "totp": nextCode(key, clk)}),
		http.StatusUnauthorized, "totp_ticket_invalid")
	wantError(t, n.Anon(t).Do("POST", "/api/auth/login/totp", map[string]string{"ticket": "forged", "totp": code(key, clk)}),
		http.StatusUnauthorized, "totp_ticket_invalid")

	// A backup code works once, in any letter case.
	sessionToken(t, login(t, n, "alice", "correct-horse-1", strings.ToUpper(backups[3])))
	wantError(t, login(t, n, "alice", "correct-horse-1", backups[3]), http.StatusUnauthorized, "totp_invalid")
	alice.Do("GET", "/api/user/2fa", nil).JSON(t, &st)
	if st.Left != 9 {
		t.Fatalf("backup codes left = %d, want 9", st.Left)
	}

	// Disabling needs a code too; then the password alone signs in again.
	wantError(t, alice.Do("POST", "/api/user/2fa/disable", map[string]string{"code": wrongCode(key, clk)}), http.StatusBadRequest, "totp_invalid")
	wantStatus(t, alice.Do("POST", "/api/user/2fa/disable", map[string]string{"code": nextCode(key, clk)}), http.StatusNoContent)
	sessionToken(t, login(t, n, "alice", "correct-horse-1", ""))
	if c := count(t, n, &model.BackupCode{}, "user_id = ?", u.ID); c != 0 {
		t.Fatalf("%d backup codes left after disable", c)
	}
}

func totpB32(key []byte) string {
	const alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	var b strings.Builder
	var buf, bits uint
	for _, k := range key {
		buf = buf<<8 | uint(k)
		bits += 8
		for bits >= 5 {
			b.WriteByte(alpha[(buf>>(bits-5))&31])
			bits -= 5
		}
	}
	return b.String()
}

// Five wrong codes in a row slow further attempts for that user: a 429 totp_delayed with Retry-After, even
// with the right code, until the delay has passed.
func TestTOTP_FiveWrongCodesSlowFurtherAttempts(t *testing.T) {
	t.Parallel()
	n, clk := tfaNode(t)
	alice := n.SignUp(t, "alice", "correct-horse-1")
	key, _ := enrol(t, alice, clk)
	clk.Advance(totp.Period) // a step whose code has not been used
	for _, wrong := range wrongCodes(key, clk, 5) {
		wantError(t, login(t, n, "alice", "correct-horse-1", wrong), http.StatusUnauthorized, "totp_invalid")
	}
	r := login(t, n, "alice", "correct-horse-1", code(key, clk)) // the right code, held back
	wantError(t, r, http.StatusTooManyRequests, "totp_delayed")
	ra, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || ra <= 0 || ra > 30 {
		t.Fatalf("Retry-After = %q", r.Header.Get("Retry-After"))
	}
	// The delay also holds the two-step path and step-up (it is the user's, not the request's).
	wantError(t, doWith(t, alice, "POST", "/api/user/password", map[string]string{"old_password": "correct-horse-1", "new_password": "correct-horse-2"},
		map[string]string{"X-Tollgate-TOTP": code(key, clk)}), http.StatusTooManyRequests, "totp_delayed")

	clk.Advance(time.Duration(ra) * time.Second)
	sessionToken(t, login(t, n, "alice", "correct-horse-1", nextCode(key, clk)))
	// A success forgets the failures: one more wrong code is not delayed.
	wantError(t, login(t, n, "alice", "correct-horse-1", wrongCode(key, clk)), http.StatusUnauthorized, "totp_invalid")
	sessionToken(t, login(t, n, "alice", "correct-horse-1", nextCode(key, clk)))
}

// Revealing a key, changing the password or the e-mail, and an admin changing channel keys need a fresh code
// when the user has 2FA on.
func TestTOTP_StepUpForSensitiveActions(t *testing.T) {
	t.Parallel()
	n, clk := tfaNode(t)
	alice := n.SignUp(t, "alice", "correct-horse-1")
	k := createKey(t, alice, map[string]any{"name": "k"})
	reveal := path("/api/tokens/%d/reveal", k.ID)
	wantStatus(t, alice.Do("POST", reveal, nil), http.StatusOK) // no 2FA: no step-up

	key, _ := enrol(t, alice, clk)
	wantError(t, alice.Do("POST", reveal, nil), http.StatusForbidden, "totp_required")
	wantError(t, doWith(t, alice, "POST", reveal, nil, map[string]string{"X-Tollgate-TOTP": wrongCode(key, clk)}), http.StatusForbidden, "totp_invalid")
	r := doWith(t, alice, "POST", reveal, nil, map[string]string{"X-Tollgate-TOTP": nextCode(key, clk)})
	wantStatus(t, r, http.StatusOK)
	if !strings.HasPrefix(r.M(t)["key"].(string), "sk-") {
		t.Fatalf("reveal = %s", r.Body)
	}

	pw := map[string]string{"old_password": "correct-horse-1", "new_password": "correct-horse-2"}
	wantError(t, alice.Do("POST", "/api/user/password", pw), http.StatusForbidden, "totp_required")
	// Applying a new e-mail address asks for the code before the e-mailed code is even looked at.
	change := map[string]any{"email": "a@example.com", "code": "123456"}
	wantError(t, alice.Do("POST", "/api/user/email/change", change), http.StatusForbidden, "totp_required")
	wantStatus(t, alice.Do("PATCH", "/api/user/self", map[string]any{"language": "en"}), http.StatusOK) // not sensitive
	if r := doWith(t, alice, "POST", "/api/user/email/change", change, map[string]string{"X-Tollgate-TOTP": nextCode(key, clk)}); r.Status == http.StatusForbidden {
		t.Fatalf("a fresh code did not pass the step-up: %d %s", r.Status, r.Body)
	}
	wantStatus(t, doWith(t, alice, "POST", "/api/user/password", pw, map[string]string{"X-Tollgate-TOTP": nextCode(key, clk)}), http.StatusNoContent)

	// An admin with 2FA: creating a channel or changing its keys needs a code; other edits do not.
	root := n.Root(t)
	rkey, _ := enrol(t, root, clk)
	ch := map[string]any{"type": "openai", "name": "up", "base_url": "http://127.0.0.1:9", "keys": []string{"sk-up-1"}, "models": []string{"m1"}}
	wantError(t, root.Do("POST", "/api/admin/channels", ch), http.StatusForbidden, "totp_required")
	r = doWith(t, root, "POST", "/api/admin/channels", ch, map[string]string{"X-Tollgate-TOTP": nextCode(rkey, clk)})
	wantStatus(t, r, http.StatusCreated)
	var view struct {
		ID   int64    `json:"id"`
		Keys []string `json:"keys"`
	}
	r.JSON(t, &view)
	chPath := path("/api/admin/channels/%d", view.ID)
	wantStatus(t, root.Do("PATCH", chPath, map[string]any{"name": "up2", "keys": view.Keys}), http.StatusOK) // masked, unchanged
	wantError(t, root.Do("PATCH", chPath, map[string]any{"keys": []string{"sk-up-2"}}), http.StatusForbidden, "totp_required")
	wantStatus(t, doWith(t, root, "PATCH", chPath, map[string]any{"keys": []string{"sk-up-2"}},
		map[string]string{"X-Tollgate-TOTP": nextCode(rkey, clk)}), http.StatusOK)
}

func TestTOTP_RequireForAdmins(t *testing.T) {
	t.Parallel()
	n, clk := tfaNode(t)
	root := n.Root(t)
	alice := n.SignUp(t, "alice", "correct-horse-1")
	wantStatus(t, root.Do("PUT", "/api/admin/settings", map[string]any{"require_2fa_admins": true}), http.StatusOK)
	wantError(t, root.Do("GET", "/api/admin/users", nil), http.StatusForbidden, "2fa_enrolment_required")
	wantChinese(t, wantError(t, zh(root).Do("GET", "/api/admin/settings", nil), http.StatusForbidden, "2fa_enrolment_required"))
	// Users are not held; the admin can still see their profile and enrol.
	wantStatus(t, alice.Do("GET", "/api/user/self", nil), http.StatusOK)
	wantStatus(t, alice.Do("GET", "/api/tokens", nil), http.StatusOK)
	wantStatus(t, root.Do("GET", "/api/user/self", nil), http.StatusOK)
	enrol(t, root, clk)
	wantStatus(t, root.Do("GET", "/api/admin/users", nil), http.StatusOK)
}

func TestTOTP_AdminResetIsAudited(t *testing.T) {
	t.Parallel()
	n, clk := tfaNode(t)
	root := n.Root(t)
	alice := n.SignUp(t, "alice", "correct-horse-1")
	enrol(t, alice, clk)
	wantError(t, login(t, n, "alice", "correct-horse-1", ""), http.StatusUnauthorized, "totp_required")
	id := userID(t, n, "alice")
	wantError(t, alice.Do("DELETE", path("/api/admin/users/%d/2fa", id), nil), http.StatusForbidden, "forbidden")
	wantError(t, root.Do("DELETE", "/api/admin/users/99999/2fa", nil), http.StatusNotFound, "user_not_found")
	wantStatus(t, root.Do("DELETE", path("/api/admin/users/%d/2fa", id), nil), http.StatusNoContent)
	sessionToken(t, login(t, n, "alice", "correct-horse-1", ""))
	var page struct {
		Items []struct {
			ActorName string `json:"actor_name"`
			Action    string `json:"action"`
			Target    string `json:"target"`
		} `json:"items"`
	}
	root.Do("GET", "/api/admin/audit?action=user.2fa_reset", nil).JSON(t, &page)
	if len(page.Items) != 1 || page.Items[0].ActorName != "root" || page.Items[0].Target != "alice" {
		t.Fatalf("audit = %+v", page)
	}
}

// A provider sign-in is a first factor like a password: a user with 2FA on lands on the console's code step
// with a ticket, gets no session cookie, and the ticket with a code opens the session.
func TestTOTP_ProviderSignInAsksForTheCode(t *testing.T) {
	n, clk := tfaNode(t)
	idp := newFakeIdP(t)
	enableOIDC(t, n, idp, nil)
	idp.signIn(idpUser{Sub: "u-200", Email: "dora@example.com", Verified: true, Username: "dora"})
	b := newBrowser(t)
	if _, landed := b.signIn(n, "corp"); landed != "/console" {
		t.Fatalf("first sign-in landed on %q", landed)
	}
	key, _ := enrol(t, b.session(n), clk)

	b2 := newBrowser(t)
	_, landed := b2.signIn(n, "corp")
	u, err := url.Parse(landed)
	if err != nil || u.Path != "/login" || u.Query().Get("ticket") == "" {
		t.Fatalf("sign-in with 2FA on landed on %q, want /login?ticket=…", landed)
	}
	wantError(t, n.Anon(t).Do("POST", "/api/auth/login/totp", map[string]string{"ticket": u.Query().Get("ticket"), "totp": wrongCode(key, clk)}),
		http.StatusUnauthorized, "totp_invalid")
	tok := sessionToken(t, n.Anon(t).Do("POST", "/api/auth/login/totp", map[string]string{"ticket": u.Query().Get("ticket"), "totp": nextCode(key, clk)}))
	var self userView
	as(n.Anon(t), tok).Do("GET", "/api/user/self", nil).JSON(t, &self)
	if self.Username != "dora" {
		t.Fatalf("session is %+v", self)
	}
}

package app_test

import (
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tollgate/app/apptest"
	"tollgate/model"
	"tollgate/service/mail/smtptest"
)

// movableClock is the account service's time in these tests: real time plus an offset the test moves.
type movableClock struct{ off atomic.Int64 }

func (c *movableClock) Now() time.Time      { return time.Now().Add(time.Duration(c.off.Load())) }
func (c *movableClock) Add(d time.Duration) { c.off.Add(int64(d)) }

// mailNode starts a node whose SMTP settings point at a fresh sink, with settings applied on top.
func mailNode(t *testing.T, settings map[string]any) (*apptest.Node, *smtptest.Sink, *movableClock, *apptest.Env) {
	t.Helper()
	sink, err := smtptest.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sink.Close)
	env := apptest.NewEnv(t)
	clk := &movableClock{}
	env.Options.AccountClock = clk.Now
	n := env.Start(t)
	patch := map[string]any{"alerts": map[string]any{"smtp": map[string]any{"host": sink.Host(), "port": sink.Port(),
		"tls": "none", "from": "Tollgate <noreply@example.com>"}}}
	for k, v := range settings {
		patch[k] = v
	}
	wantStatus(t, n.Root(t).Do("PUT", "/api/admin/settings", patch), http.StatusOK)
	return n, sink, clk, env
}

var codeRE = regexp.MustCompile(`\b(\d{6})\b`)

// codeIn reads the 6-digit code of a message, from the plain text and the HTML alike.
func codeIn(t *testing.T, m smtptest.Message) string {
	t.Helper()
	c := codeRE.FindStringSubmatch(m.Text)
	if c == nil || !strings.Contains(m.HTML, c[1]) {
		t.Fatalf("no code in the e-mail (text %q, html %q)", m.Text, m.HTML)
	}
	return c[1]
}

// mailsTo lists the sink's messages to addr.
func mailsTo(sink *smtptest.Sink, addr string) []smtptest.Message {
	var out []smtptest.Message
	for _, m := range sink.Messages() {
		if len(m.To) == 1 && m.To[0] == addr {
			out = append(out, m)
		}
	}
	return out
}

func TestSignupEmail_CodeVerifiesOnceAndTheGiftIsPaidOnce(t *testing.T) {
	t.Parallel()
	n, sink, _, _ := mailNode(t, map[string]any{"email_verification": true, "new_user_quota": 5000})
	anon := n.Anon(t)

	// Without an address there is nothing to verify.
	wantField(t, anon.Do("POST", "/api/auth/register", map[string]string{"username": "alice", "password": "tram-lines-42"}), "email")
	r := anon.Do("POST", "/api/auth/register", map[string]string{"username": "alice", "password": "tram-lines-42",
		"email": "Alice@Example.com", "language": "zh-CN"})
	wantStatus(t, r, http.StatusCreated)
	var reg struct {
		User userView `json:"user"`
	}
	r.JSON(t, &reg)
	if reg.User.Status != model.StatusUnverified || reg.User.Quota != 0 || reg.User.Email != "alice@example.com" {
		t.Fatalf("new user before verification: %+v", reg.User)
	}
	// Another account cannot take the same address.
	wantError(t, anon.Do("POST", "/api/auth/register", map[string]string{"username": "alice2", "password": "tram-lines-42",
		"email": "alice@example.com"}), http.StatusConflict, "email_taken")
	// No sign-in until verified.
	wantError(t, anon.Do("POST", "/api/auth/login", map[string]string{"username": "alice", "password": "tram-lines-42"}),
		http.StatusForbidden, "email_unverified")

	msgs := sink.Wait(1, 5*time.Second)
	if len(msgs) != 1 || msgs[0].To[0] != "alice@example.com" || !hasHan(msgs[0].Subject) || !hasHan(msgs[0].Text) ||
		!strings.Contains(msgs[0].HTML, "<p") {
		t.Fatalf("sign-up e-mail: %+v", msgs)
	}
	code := codeIn(t, msgs[0])
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	wantError(t, anon.Do("POST", "/api/auth/email/verify", map[string]string{"email": "alice@example.com", "code": wrong}),
		http.StatusBadRequest, "invalid_code")

	// The right code, twice at once: exactly one verification wins.
	var wg sync.WaitGroup
	statuses := make([]int, 2)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = n.Anon(t).Do("POST", "/api/auth/email/verify", map[string]string{"email": "ALICE@example.com", "code": code}).Status
		}()
	}
	wg.Wait()
	if (statuses[0] == 200) == (statuses[1] == 200) {
		t.Fatalf("concurrent verifications answered %v, want exactly one 200", statuses)
	}
	// And once more afterwards: the code is spent.
	wantError(t, anon.Do("POST", "/api/auth/email/verify", map[string]string{"email": "alice@example.com", "code": code}),
		http.StatusBadRequest, "invalid_code")
	// Asking for another code for a verified address sends nothing (and says the same as always).
	wantStatus(t, anon.Do("POST", "/api/auth/email/send", map[string]string{"email": "alice@example.com", "purpose": "verify"}), http.StatusAccepted)

	alice := n.Login(t, "alice", "tram-lines-42")
	var self userView
	r = alice.Do("GET", "/api/user/self", nil)
	wantStatus(t, r, http.StatusOK)
	r.JSON(t, &self)
	if self.Status != model.StatusEnabled || self.Quota != 5000 {
		t.Fatalf("after verification: %+v", self)
	}
	if c := count(t, n, &model.Credit{}, "user_id = ? AND source = ?", self.ID, model.CreditSignup); c != 1 {
		t.Fatalf("%d sign-up credits, want 1", c)
	}
	// A second verification path for the same account cannot pay again either: the service itself.
	if _, err := n.App.Accounts.VerifyEmail(t.Context(), "alice@example.com", code, "192.0.2.1"); err == nil {
		t.Fatal("a spent code verified through the service")
	}
	if c := count(t, n, &model.Credit{}, "user_id = ? AND source = ?", self.ID, model.CreditSignup); c != 1 {
		t.Fatalf("%d sign-up credits after a second verification, want 1", c)
	}
	if n := len(sink.Messages()); n != 1 {
		t.Fatalf("sink has %d messages, want only the sign-up code", n)
	}
}

func TestSignupEmail_ResendReplacesTheCodeAndWrongCodesAreLimited(t *testing.T) {
	t.Parallel()
	n, sink, clk, _ := mailNode(t, map[string]any{"email_verification": true})
	anon := n.Anon(t)
	wantStatus(t, anon.Do("POST", "/api/auth/register", map[string]string{"username": "dora", "password": "tram-lines-42",
		"email": "dora@example.com"}), http.StatusCreated)
	first := codeIn(t, sink.Wait(1, 5*time.Second)[0])
	wantStatus(t, anon.Do("POST", "/api/auth/email/send", map[string]string{"email": "dora@example.com", "purpose": "verify"}), http.StatusAccepted)
	msgs := sink.Wait(2, 5*time.Second)
	if len(msgs) != 2 {
		t.Fatalf("resend: %d messages", len(msgs))
	}
	second := codeIn(t, msgs[1])
	wrongSoFar := 0
	if first != second { // the resent code replaced the first
		wantError(t, anon.Do("POST", "/api/auth/email/verify", map[string]string{"email": "dora@example.com", "code": first}),
			http.StatusBadRequest, "invalid_code")
		wrongSoFar++
	}
	// An expired code is refused even when right.
	clk.Add(16 * time.Minute)
	wantError(t, anon.Do("POST", "/api/auth/email/verify", map[string]string{"email": "dora@example.com", "code": second}),
		http.StatusBadRequest, "invalid_code")
	wrongSoFar++
	clk.Add(-16 * time.Minute)
	// Five wrong codes in all lock the address's code checks, even for the right code.
	for range 5 - wrongSoFar {
		wantError(t, anon.Do("POST", "/api/auth/email/verify", map[string]string{"email": "dora@example.com", "code": "12345x"}),
			http.StatusBadRequest, "invalid_code")
	}
	wantError(t, anon.Do("POST", "/api/auth/email/verify", map[string]string{"email": "dora@example.com", "code": second}),
		http.StatusTooManyRequests, "too_many_attempts")
}

func TestPasswordReset_LinkWorksOnceAndEndsEverySession(t *testing.T) {
	t.Parallel()
	n, sink, clk, env := mailNode(t, map[string]any{"password_reset": true})
	anon := n.Anon(t)
	wantStatus(t, anon.Do("POST", "/api/auth/register", map[string]string{"username": "bob", "password": "tram-lines-42",
		"email": "bob@example.com", "language": "en"}), http.StatusCreated)
	bob := n.Login(t, "bob", "tram-lines-42")
	wantStatus(t, bob.Do("GET", "/api/user/self", nil), http.StatusOK)

	ask := func(email string) *apptest.Resp {
		return anon.Do("POST", "/api/auth/email/send", map[string]string{"email": email, "purpose": "reset"})
	}
	known, unknown := ask("bob@example.com"), ask("nobody@example.com")
	wantStatus(t, known, http.StatusAccepted)
	wantStatus(t, unknown, http.StatusAccepted)
	if string(known.Body) != string(unknown.Body) {
		t.Fatalf("answers differ: %s vs %s", known.Body, unknown.Body)
	}
	msgs := sink.Wait(1, 5*time.Second)
	if len(msgs) != 1 || msgs[0].To[0] != "bob@example.com" {
		t.Fatalf("reset mails: %+v", msgs)
	}
	linkRE := regexp.MustCompile(regexp.QuoteMeta(n.URL) + `/reset-password\?token=([A-Za-z0-9_-]{40,})`)
	m := linkRE.FindStringSubmatch(msgs[0].Text)
	if m == nil || !strings.Contains(msgs[0].HTML, m[0]) || !strings.Contains(msgs[0].Text, "bob") {
		t.Fatalf("no reset link in %q", msgs[0].Text)
	}
	token := m[1]

	// A refused password leaves the link usable.
	wantError(t, anon.Do("POST", "/api/auth/password/reset", map[string]string{"token": token, "new_password": "short"}),
		http.StatusBadRequest, "weak_password")
	wantStatus(t, anon.Do("POST", "/api/auth/password/reset", map[string]string{"token": token, "new_password": "quiet-harbor-77"}),
		http.StatusNoContent)
	// Every earlier session ended: the access JWT and the refresh cookie.
	wantStatus(t, bob.Do("GET", "/api/user/self", nil), http.StatusUnauthorized)
	wantStatus(t, bob.Do("POST", "/api/auth/refresh", nil), http.StatusUnauthorized)
	wantError(t, anon.Do("POST", "/api/auth/login", map[string]string{"username": "bob", "password": "tram-lines-42"}),
		http.StatusUnauthorized, "invalid_credentials")
	n.Login(t, "bob", "quiet-harbor-77")
	// Used once: refused the second time.
	wantError(t, anon.Do("POST", "/api/auth/password/reset", map[string]string{"token": token, "new_password": "other-harbor-78"}),
		http.StatusBadRequest, "invalid_reset_token")

	// An expired link is refused.
	wantStatus(t, ask("bob@example.com"), http.StatusAccepted)
	msgs = sink.Wait(2, 5*time.Second)
	if len(msgs) != 2 {
		t.Fatalf("second reset: %d mails", len(msgs))
	}
	token2 := linkRE.FindStringSubmatch(msgs[1].Text)[1]
	clk.Add(31 * time.Minute)
	wantError(t, anon.Do("POST", "/api/auth/password/reset", map[string]string{"token": token2, "new_password": "other-harbor-78"}),
		http.StatusBadRequest, "invalid_reset_token")
	wantError(t, zh(anon).Do("POST", "/api/auth/password/reset", map[string]string{"token": "made-up", "new_password": "other-harbor-78"}),
		http.StatusBadRequest, "invalid_reset_token")
	if got := len(mailsTo(sink, "nobody@example.com")); got != 0 {
		t.Fatalf("%d mails went to an address no account has", got)
	}
	// Only hashes are kept: neither link's token is in the store.
	if place, needle := env.StoreHolds(t, n, token, token2); place != "" {
		t.Fatalf("a reset token is stored in clear in %s (%q)", place, needle)
	}
}

func TestEmailSend_RateLimitedPerAddressTheSameForUnknownAddresses(t *testing.T) {
	t.Parallel()
	n, sink, _, _ := mailNode(t, map[string]any{"password_reset": true})
	anon := n.Anon(t)
	wantStatus(t, anon.Do("POST", "/api/auth/register", map[string]string{"username": "carl", "password": "tram-lines-42",
		"email": "carl@example.com"}), http.StatusCreated)
	for _, addr := range []string{"carl@example.com", "ghost@example.com"} {
		for i := range 5 {
			r := anon.Do("POST", "/api/auth/email/send", map[string]string{"email": addr, "purpose": "reset"})
			if r.Status != http.StatusAccepted {
				t.Fatalf("%s send %d: %d %s", addr, i+1, r.Status, r.Body)
			}
		}
		r := anon.Do("POST", "/api/auth/email/send", map[string]string{"email": addr, "purpose": "reset"})
		wantError(t, r, http.StatusTooManyRequests, "too_many_emails")
		retryAfter(t, r)
	}
	if got := len(sink.Wait(5, 5*time.Second)); got != 5 {
		t.Fatalf("%d mails, want 5 (all to carl)", got)
	}
	if got := len(mailsTo(sink, "ghost@example.com")); got != 0 {
		t.Fatalf("%d mails to an unknown address", got)
	}
	wantField(t, anon.Do("POST", "/api/auth/email/send", map[string]string{"email": "x@example.com", "purpose": "spam"}), "purpose")
}

func TestEmailChange_TakesEffectOnlyWithTheCodeSentToTheNewAddress(t *testing.T) {
	t.Parallel()
	n, sink, _, _ := mailNode(t, nil)
	anon := n.Anon(t)
	wantStatus(t, anon.Do("POST", "/api/auth/register", map[string]string{"username": "erin", "password": "tram-lines-42",
		"email": "erin@example.com"}), http.StatusCreated)
	erin := n.Login(t, "erin", "tram-lines-42")
	// Not straight through the profile.
	wantField(t, erin.Do("PATCH", "/api/user/self", map[string]string{"email": "erin@new.example"}), "email")
	wantStatus(t, erin.Do("POST", "/api/user/email/send", map[string]string{"email": "erin@new.example"}), http.StatusNoContent)
	msgs := sink.Wait(1, 5*time.Second)
	if len(msgs) != 1 || msgs[0].To[0] != "erin@new.example" {
		t.Fatalf("change mail: %+v", msgs)
	}
	code := codeIn(t, msgs[0])
	// Another user cannot use erin's code.
	wantStatus(t, anon.Do("POST", "/api/auth/register", map[string]string{"username": "finn", "password": "tram-lines-42"}), http.StatusCreated)
	finn := n.Login(t, "finn", "tram-lines-42")
	wantError(t, finn.Do("POST", "/api/user/email/change", map[string]string{"email": "erin@new.example", "code": code}),
		http.StatusBadRequest, "invalid_code")
	var self userView
	r := erin.Do("GET", "/api/user/self", nil)
	r.JSON(t, &self)
	if self.Email != "erin@example.com" {
		t.Fatalf("e-mail changed before the code: %q", self.Email)
	}
	r = erin.Do("POST", "/api/user/email/change", map[string]string{"email": "erin@new.example", "code": code})
	wantStatus(t, r, http.StatusOK)
	r.JSON(t, &self)
	if self.Email != "erin@new.example" {
		t.Fatalf("after the code: %q", self.Email)
	}
	wantError(t, finn.Do("POST", "/api/user/email/send", map[string]string{"email": "erin@new.example"}), http.StatusConflict, "email_taken")
}

func TestSMTPTest_SendsToTheAdmin(t *testing.T) {
	t.Parallel()
	n, sink, _, _ := mailNode(t, nil)
	root := n.Root(t)
	wantField(t, root.Do("POST", "/api/admin/settings/smtp/test", nil), "to") // root has no address
	r := zh(root).Do("POST", "/api/admin/settings/smtp/test", map[string]string{"to": "ops@example.com"})
	wantStatus(t, r, http.StatusOK)
	msgs := sink.Wait(1, 5*time.Second)
	if len(msgs) != 1 || msgs[0].To[0] != "ops@example.com" || !hasHan(msgs[0].Subject) || msgs[0].HTML == "" {
		t.Fatalf("test mail: %+v", msgs)
	}
	// A server that is not there: 502 with the reason.
	wantStatus(t, root.Do("PUT", "/api/admin/settings", map[string]any{"alerts": map[string]any{"smtp": map[string]any{"host": "127.0.0.1", "port": 1}}}), http.StatusOK)
	wantError(t, root.Do("POST", "/api/admin/settings/smtp/test", map[string]string{"to": "ops@example.com"}), http.StatusBadGateway, "smtp_failed")
	wantError(t, n.SignUp(t, "gina", "tram-lines-42").Do("POST", "/api/admin/settings/smtp/test", nil), http.StatusForbidden, "forbidden")
}

package relay_test

// Per-minute limits through real HTTP: a key's tpm, a user's rpm and tpm (set by an admin), and the per-IP
// ip_rpm setting on /v1, with X-Forwarded-For from a trusted and from an untrusted proxy. Each refusal is a 429
// in the caller's protocol with Retry-After. The key and user limits run on a frozen clock, so no minute
// boundary falls inside a test.

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"tollgate/app/apptest"
)

// rateRefused checks a 429 in the protocol of the call with code (OpenAI) and a Retry-After of 1 … 120 s.
func rateRefused(t testing.TB, a *answer, anthropic bool, code string) string {
	t.Helper()
	var msg string
	if anthropic {
		msg = anthropicErr(t, a, http.StatusTooManyRequests, "rate_limit_error")
	} else {
		msg = openAIErr(t, a, http.StatusTooManyRequests, code)
	}
	if ra, err := strconv.Atoi(a.header.Get("Retry-After")); err != nil || ra < 1 || ra > 120 {
		t.Fatalf("%s: Retry-After %q", code, a.header.Get("Retry-After"))
	}
	return msg
}

func frozen() *testClock { return &testClock{t: time.Date(2026, 12, 1, 10, 0, 5, 0, time.UTC)} }

func (w *world) patchUser(id int64, body map[string]any) *apptest.Resp {
	w.t.Helper()
	return w.root.Do("PATCH", fmt.Sprintf("/api/admin/users/%d", id), body)
}

func TestRate_KeyTPMRefusesOnceTheMinuteReachedIt(t *testing.T) {
	t.Parallel()
	clock := frozen()
	s := newStandardWith(t, 1_000_000, []func(*apptest.Env){withClock(clock)})
	k := s.world.key(s.alice, map[string]any{"tpm": 20})
	a := s.call("POST", "/v1/chat/completions", k.Key, chatBody("gpt-4o-mini", false))
	if a.status != http.StatusOK {
		t.Fatalf("first call: %d %s", a.status, a.body)
	}
	if l := s.logOf(a.reqID); l.PromptTokens+l.CompletionTokens < 20 {
		t.Fatalf("the fake's usage (%d + %d tokens) must reach the limit of 20", l.PromptTokens, l.CompletionTokens)
	}
	msg := rateRefused(t, s.call("POST", "/v1/chat/completions", k.Key, chatBody("gpt-4o-mini", false)), false, "tpm_exceeded")
	if !strings.Contains(msg, "tokens") {
		t.Fatalf("tpm message %q does not say tokens", msg)
	}
	rateRefused(t, s.call("POST", "/v1/messages", k.Key, messagesBody("claude-sonnet-4-5", false)), true, "")
	// Another key of the same user has its own (no) limit; the next minute the key works again.
	if a := s.call("POST", "/v1/chat/completions", s.key.Key, chatBody("gpt-4o-mini", false)); a.status != http.StatusOK {
		t.Fatalf("other key: %d %s", a.status, a.body)
	}
	clock.Set(clock.Now().Add(time.Minute))
	if a := s.call("POST", "/v1/messages", k.Key, messagesBody("claude-sonnet-4-5", false)); a.status != http.StatusOK {
		t.Fatalf("next minute: %d %s", a.status, a.body)
	}
	s.flush()
	if n := len(s.logs("token_id = ?", k.ID)); n != 2 {
		t.Fatalf("refused calls leave no usage row: %d rows, want 2", n)
	}
}

func TestRate_UserRPMAndTPMCoverEveryKeyOfTheUser(t *testing.T) {
	t.Parallel()
	clock := frozen()
	s := newStandardWith(t, 1_000_000, []func(*apptest.Env){withClock(clock)})
	other := s.world.key(s.alice, nil)
	if r := s.patchUser(s.alice.id, map[string]any{"rpm": 2}); r.Status != http.StatusOK {
		t.Fatalf("set rpm: %d %s", r.Status, r.Body)
	}
	for i, k := range []string{s.key.Key, other.Key} {
		if a := s.call("POST", "/v1/chat/completions", k, chatBody("gpt-4o-mini", false)); a.status != http.StatusOK {
			t.Fatalf("call %d: %d %s", i, a.status, a.body)
		}
	}
	rateRefused(t, s.call("POST", "/v1/chat/completions", s.key.Key, chatBody("gpt-4o-mini", false)), false, "user_rate_limited")
	rateRefused(t, s.call("POST", "/v1/messages", other.Key, messagesBody("claude-sonnet-4-5", false)), true, "")

	// rpm off, tpm on: one call reaches the minute's tokens, then every key of the user is refused.
	clock.Set(clock.Now().Add(time.Minute))
	if r := s.patchUser(s.alice.id, map[string]any{"rpm": 0, "tpm": 10}); r.Status != http.StatusOK {
		t.Fatalf("set tpm: %d %s", r.Status, r.Body)
	}
	a := s.call("POST", "/v1/messages", s.key.Key, messagesBody("claude-sonnet-4-5", false))
	if a.status != http.StatusOK {
		t.Fatalf("first call under tpm: %d %s", a.status, a.body)
	}
	s.logOf(a.reqID) // counted when it finished, before its log row was queued
	rateRefused(t, s.call("POST", "/v1/chat/completions", other.Key, chatBody("gpt-4o-mini", false)), false, "tpm_exceeded")
	rateRefused(t, s.call("POST", "/v1/messages", s.key.Key, messagesBody("claude-sonnet-4-5", false)), true, "")
	var u struct {
		RPM int   `json:"rpm"`
		TPM int64 `json:"tpm"`
	}
	s.root.Do("GET", fmt.Sprintf("/api/admin/users/%d", s.alice.id), nil).JSON(t, &u)
	if u.RPM != 0 || u.TPM != 10 {
		t.Fatalf("user view rpm %d tpm %d, want 0 and 10", u.RPM, u.TPM)
	}
}

func TestRate_UserLimitsBadInputAndWhoMaySetThem(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000)
	for _, body := range []map[string]any{{"rpm": -1}, {"rpm": 2_000_000}, {"tpm": -5}, {"tpm": int64(2_000_000_000)}, {"tpm": "10"}} {
		if r := s.patchUser(s.alice.id, body); r.Status != http.StatusBadRequest {
			t.Fatalf("patch user %v: %d %s", body, r.Status, r.Body)
		}
	}
	// An admin sets limits on users, not on root or fellow admins (User.ManagedBy).
	bob := s.world.user("bob", 0)
	if r := s.patchUser(bob.id, map[string]any{"role": "admin"}); r.Status != http.StatusOK {
		t.Fatalf("make bob admin: %d %s", r.Status, r.Body)
	}
	root, err := s.node.App.Store.UserByUsername(t.Context(), "root")
	if err != nil {
		t.Fatal(err)
	}
	if r := bob.c.Do("PATCH", fmt.Sprintf("/api/admin/users/%d", root.ID), map[string]any{"rpm": 1}); r.Status != http.StatusForbidden {
		t.Fatalf("admin limits root: %d %s", r.Status, r.Body)
	}
	if r := bob.c.Do("PATCH", fmt.Sprintf("/api/admin/users/%d", s.alice.id), map[string]any{"tpm": 1000}); r.Status != http.StatusOK {
		t.Fatalf("admin limits a user: %d %s", r.Status, r.Body)
	}
	if r := s.alice.c.Do("PATCH", fmt.Sprintf("/api/admin/users/%d", s.alice.id), map[string]any{"rpm": 0}); r.Status != http.StatusForbidden {
		t.Fatalf("a user lifts their own limit: %d %s", r.Status, r.Body)
	}
}

func TestRate_IPRPMBehindATrustedProxyCountsTheForwardedClient(t *testing.T) {
	t.Parallel()
	s := newStandardWith(t, 1_000_000, []func(*apptest.Env){func(e *apptest.Env) { e.Cfg.TrustedProxies = []string{"127.0.0.1", "::1"} }})
	for _, v := range []any{-1, 2_000_000, "600"} {
		if r := s.root.Do("PUT", "/api/admin/settings", map[string]any{"ip_rpm": v}); r.Status != http.StatusBadRequest {
			t.Fatalf("ip_rpm %v: %d %s", v, r.Status, r.Body)
		}
	}
	s.settings(map[string]any{"ip_rpm": 2})
	from := func(ip, key, path string) *answer {
		body := any(chatBody("gpt-4o-mini", false))
		if path == "/v1/messages" {
			body = messagesBody("claude-sonnet-4-5", false)
		}
		return s.call("POST", path, key, body, "X-Forwarded-For", ip)
	}
	for i := range 2 {
		if a := from("203.0.113.7", s.key.Key, "/v1/chat/completions"); a.status != http.StatusOK {
			t.Fatalf("call %d: %d %s", i, a.status, a.body)
		}
	}
	rateRefused(t, from("203.0.113.7", s.key.Key, "/v1/chat/completions"), false, "ip_rate_limited")
	rateRefused(t, from("203.0.113.7", s.key.Key, "/v1/messages"), true, "")
	// Counted before authentication: a bad key from that address gets the 429, not a 401.
	rateRefused(t, from("203.0.113.7", "sk-bad", "/v1/chat/completions"), false, "ip_rate_limited")
	if a := from("203.0.113.8", s.key.Key, "/v1/chat/completions"); a.status != http.StatusOK {
		t.Fatalf("another client: %d %s", a.status, a.body)
	}
	// An IPv6 client is counted by its /64.
	for _, ip := range []string{"2001:db8:1:2::1", "2001:db8:1:2::2"} {
		if a := from(ip, s.key.Key, "/v1/messages"); a.status != http.StatusOK {
			t.Fatalf("%s: %d %s", ip, a.status, a.body)
		}
	}
	rateRefused(t, from("2001:db8:1:2:ffff::9", s.key.Key, "/v1/chat/completions"), false, "ip_rate_limited")
	if a := from("2001:db8:1:3::1", s.key.Key, "/v1/chat/completions"); a.status != http.StatusOK {
		t.Fatalf("another /64: %d %s", a.status, a.body)
	}
	// 0 turns it off.
	s.settings(map[string]any{"ip_rpm": 0})
	if a := from("203.0.113.7", s.key.Key, "/v1/chat/completions"); a.status != http.StatusOK {
		t.Fatalf("ip_rpm 0: %d %s", a.status, a.body)
	}
}

func TestRate_IPRPMIgnoresForwardedForFromAnUntrustedPeer(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000)
	s.settings(map[string]any{"ip_rpm": 3})
	// Forged X-Forwarded-For values do not make fresh clients: all of these are the peer, 127.0.0.1.
	if a := s.call("POST", "/v1/chat/completions", "sk-bad", chatBody("gpt-4o-mini", false), "X-Forwarded-For", "198.51.100.1"); a.status != http.StatusUnauthorized {
		t.Fatalf("bad key: %d %s", a.status, a.body)
	}
	for i := range 2 {
		a := s.call("POST", "/v1/messages", s.key.Key, messagesBody("claude-sonnet-4-5", false), "X-Forwarded-For", fmt.Sprintf("198.51.100.%d", 10+i))
		if a.status != http.StatusOK {
			t.Fatalf("call %d: %d %s", i, a.status, a.body)
		}
	}
	rateRefused(t, s.call("POST", "/v1/messages", s.key.Key, messagesBody("claude-sonnet-4-5", false), "X-Forwarded-For", "198.51.100.99"), true, "")
	rateRefused(t, s.call("POST", "/v1/chat/completions", s.key.Key, chatBody("gpt-4o-mini", false), "X-Forwarded-For", "198.51.100.98"), false, "ip_rate_limited")
	r := s.call("GET", "/v1/models", s.key.Key, nil)
	rateRefused(t, r, false, "ip_rate_limited")
}

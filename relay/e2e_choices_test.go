package relay_test

// n asks an OpenAI upstream for n choices, each up to max_tokens long, and the upstream bills all of them. The
// hold must cover n times the output, and n is range-checked (OpenAI's own limit is 128): otherwise a user with
// a tiny balance sends n=1000 behind a hold for one choice and the output above the hold goes unbilled.

import (
	"net/http"
	"strings"
	"testing"
)

func TestChoices_OutOfRangeNIsRefusedBeforeAnyUpstream(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000)
	for _, path := range []string{"/v1/chat/completions", "/v1/completions"} {
		for _, n := range []any{0, -1, 129, 1000, 1 << 40, "4", 1.5, true} {
			body := chatBody("gpt-4o-mini", false, "n", n)
			if path == "/v1/completions" {
				body = map[string]any{"model": "gpt-4o-mini", "prompt": "hi", "max_tokens": 50, "n": n}
			}
			a := s.call("POST", path, s.key.Key, body)
			if msg := openAIErr(t, a, http.StatusBadRequest, "validation_failed"); !strings.Contains(msg, "n") {
				t.Fatalf("%s n=%v: message %q does not name n", path, n, msg)
			}
		}
	}
	if c := s.oa.Count(); c != 0 {
		t.Fatalf("upstream saw %d calls for refused bodies", c)
	}
	if b := s.liveBalance(s.alice.id); b != 1_000_000 {
		t.Fatalf("balance moved to %d on refused bodies", b)
	}
}

func TestChoices_HoldCoversEveryChoice(t *testing.T) {
	t.Parallel()
	// max_tokens 100 at 2 units per output token: a hold of ~250 units for one choice, ~850 for four.
	s := newStandard(t, 600)
	for _, path := range []string{"/v1/chat/completions", "/v1/completions"} {
		body := func(n int) map[string]any {
			if path == "/v1/completions" {
				return map[string]any{"model": "gpt-4o-mini", "prompt": "hi", "max_tokens": 100, "n": n}
			}
			return chatBody("gpt-4o-mini", false, "max_tokens", 100, "n", n)
		}
		before := s.oa.Count()
		openAIErr(t, s.call("POST", path, s.key.Key, body(4)), http.StatusTooManyRequests, "insufficient_quota")
		if c := s.oa.Count(); c != before {
			t.Fatalf("%s: n=4 beyond the balance reached the upstream", path)
		}
		if a := s.call("POST", path, s.key.Key, body(1)); a.status != http.StatusOK {
			t.Fatalf("%s: n=1 within the balance: %d %s", path, a.status, a.body)
		}
		s.topUp(s.alice.id, 600-s.liveBalance(s.alice.id))
	}
}

// best_of on legacy completions makes the upstream generate (and bill) best_of candidates, of which n are
// returned: the hold covers the larger, and best_of is range-checked as OpenAI does (0 … 20).
func TestChoices_BestOfIsHeldAndRangeChecked(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 600)
	body := func(bestOf any) map[string]any {
		return map[string]any{"model": "gpt-4o-mini", "prompt": "hi", "max_tokens": 100, "best_of": bestOf}
	}
	for _, v := range []any{-1, 21, 1000, "4", 2.5} {
		if msg := openAIErr(t, s.call("POST", "/v1/completions", s.key.Key, body(v)), http.StatusBadRequest, "validation_failed"); !strings.Contains(msg, "best_of") {
			t.Fatalf("best_of=%v: message %q does not name best_of", v, msg)
		}
	}
	openAIErr(t, s.call("POST", "/v1/completions", s.key.Key, body(4)), http.StatusTooManyRequests, "insufficient_quota")
	openAIErr(t, s.call("POST", "/v1/completions", s.key.Key, map[string]any{"model": "gpt-4o-mini", "prompt": "hi",
		"max_tokens": 100, "best_of": 4, "n": 1}), http.StatusTooManyRequests, "insufficient_quota")
	if c := s.oa.Count(); c != 0 {
		t.Fatalf("upstream saw %d calls beyond the balance or out of range", c)
	}
	if a := s.call("POST", "/v1/completions", s.key.Key, body(1)); a.status != http.StatusOK {
		t.Fatalf("best_of=1 within the balance: %d %s", a.status, a.body)
	}
	// On chat, best_of is not an OpenAI field: passed through unread.
	if a := s.call("POST", "/v1/chat/completions", s.key.Key, chatBody("gpt-4o-mini", false, "best_of", 1000)); a.status != http.StatusOK {
		t.Fatalf("chat with best_of: %d %s", a.status, a.body)
	}
}

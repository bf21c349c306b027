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

package relay_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// A body with millions of top-level keys cost the node seconds of CPU and hundreds of MB per request before
// any upstream was chosen; it is refused at once in each protocol, free, and the node keeps serving.
func TestBodyShape_MillionsOfTopLevelKeysAreRefusedCheaply(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000)
	var b strings.Builder
	b.WriteString(`{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[{"role":"user","content":"hi"}]`)
	for i := range 1_000_000 {
		fmt.Fprintf(&b, `,"k%d":0`, i)
	}
	b.WriteString("}")
	body := []byte(b.String())
	oa := []byte(strings.Replace(b.String(), "claude-sonnet-4-5", "gpt-4o-mini", 1))
	if msg := openAIErr(t, s.call("POST", "/v1/chat/completions", s.key.Key, oa), http.StatusBadRequest, "body_too_many_keys"); !strings.Contains(msg, "1024") {
		t.Fatalf("message %q does not name the limit", msg)
	}
	anthropicErr(t, s.call("POST", "/v1/messages", s.key.Key, body), http.StatusBadRequest, "invalid_request_error")
	anthropicErr(t, s.call("POST", "/v1/messages/count_tokens", s.key.Key, body), http.StatusBadRequest, "invalid_request_error")
	if n := s.oa.Count() + s.an.Count(); n != 0 {
		t.Fatalf("upstreams saw %d calls", n)
	}
	if a := s.call("POST", "/v1/chat/completions", s.key.Key, chatBody("gpt-4o-mini", false)); a.status != http.StatusOK {
		t.Fatalf("chat after wide bodies: %d %s", a.status, a.body)
	}
	logs := s.waitLogs(1) // exactly one row: the refused wide bodies leave none
	if b := s.liveBalance(s.alice.id); logs[0].Cost <= 0 || b != 1_000_000-logs[0].Cost {
		t.Fatalf("balance %d, logged cost %d: only the good call is billed", b, logs[0].Cost)
	}
}

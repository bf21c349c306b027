package relay_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// A channel's header pass-through allowlist forwards the named client headers (coding-agent upstreams key
// their caches on them) and nothing else; the caller's own credentials can never be on it.
func TestHeaderPassthrough_ForwardsOnlyTheListAndNeverCredentials(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	up := fake(t)
	spec := map[string]any{"type": "openai", "name": "pt", "base_url": up.URL, "keys": []string{"sk-up-pt"},
		"models": []string{"gpt-4o-mini"}}
	// The channel types are the adaptor registry's: an unknown one is refused naming them all.
	spec["type"] = "watsonx-someday"
	if r := w.root.Do("POST", "/api/admin/channels", spec); r.Status != http.StatusBadRequest ||
		!strings.Contains(string(r.Body), "anthropic, azure, bedrock, gemini, openai, openai-compatible, vertex") {
		t.Fatalf("unknown type: %d %s", r.Status, r.Body)
	}
	spec["type"] = "openai"
	for _, bad := range [][]string{{"Authorization"}, {"x-api-key"}, {"cookie"}, {"bad name"}, {"a:b"}} {
		spec["header_passthrough"] = bad
		if r := w.root.Do("POST", "/api/admin/channels", spec); r.Status != http.StatusBadRequest {
			t.Fatalf("header_passthrough %v: %d %s, want 400", bad, r.Status, r.Body)
		}
	}
	spec["header_passthrough"] = []string{"user-agent", "session_id", "Session_Id", "originator"}
	id := w.postChannel(spec)
	var view struct {
		HeaderPassthrough []string `json:"header_passthrough"`
	}
	w.root.Do("GET", "/api/admin/channels/"+strconv.FormatInt(id, 10), nil).JSON(t, &view)
	if len(view.HeaderPassthrough) != 3 {
		t.Fatalf("stored allowlist %v, want 3 canonical names", view.HeaderPassthrough)
	}
	w.prices()
	k := w.key(w.user("ptuser", 1_000_000), nil)
	a := w.call("POST", "/v1/chat/completions", k.Key, chatBody("gpt-4o-mini", false),
		"User-Agent", "codex_cli_rs/0.50", "session_id", "sess-42", "x-app", "cli", "originator", "codex")
	if a.status != http.StatusOK {
		t.Fatalf("call: %d %s", a.status, a.body)
	}
	last, _ := up.Last()
	if last.Header.Get("User-Agent") != "codex_cli_rs/0.50" || last.Header.Get("Session_id") != "sess-42" ||
		last.Header.Get("Originator") != "codex" {
		t.Fatalf("forwarded headers %v", last.Header)
	}
	if last.Header.Get("X-App") != "" || last.Header.Get("Authorization") != "Bearer sk-up-pt" {
		t.Fatalf("x-app (not listed) or the key leaked: %v", last.Header)
	}
}

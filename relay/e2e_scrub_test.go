package relay_test

// A client error is passed through as the upstream wrote it, and some upstreams (proxies, self-hosted
// OpenAI-compatible servers) echo the request's headers in their 400s: the channel's key and header_override
// secrets must not reach the caller, the caller's logs or the admin's.

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestClientErrorPassThrough_DoesNotCarryTheChannelsSecrets(t *testing.T) {
	t.Parallel()
	const upKey, hdrSecret = "sk-upstream-echo-SECRET-0001", "org-HEADER-SECRET-0002"
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":"Invalid value for 'temperature'. Request headers: Authorization=%s X-Org=%s","type":"invalid_request_error","code":null}}`,
			r.Header.Get("Authorization"), r.Header.Get("X-Org"))
	}))
	t.Cleanup(echo.Close)
	k := newKnobWorld(t)
	spec := chanSpec{Type: "openai", Name: "echo", BaseURL: echo.URL, Keys: []string{upKey}, Models: []string{"gpt-4o-mini"}}
	k.knobChannel(spec, map[string]any{"header_override": map[string]string{"X-Org": hdrSecret}})

	a := k.call("POST", "/v1/chat/completions", k.key.Key, chatBody("gpt-4o-mini", false))
	openAIErr(t, a, http.StatusBadRequest, "")
	if !strings.Contains(string(a.body), "Invalid value for 'temperature'") {
		t.Fatalf("the upstream's own message was not passed through: %s", a.body)
	}
	rows := k.checkBooks(1)
	seen := map[string]string{"answer": string(a.body), "log row": rows[0].Error}
	for _, path := range []string{"/api/logs", "/api/admin/logs"} {
		c := k.p.c
		if strings.Contains(path, "admin") {
			c = k.root
		}
		r := c.Do("GET", path, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", path, r.Status, r.Body)
		}
		seen[path] = string(r.Body)
	}
	for where, text := range seen {
		for _, s := range []string{upKey, hdrSecret} {
			if strings.Contains(text, s) {
				t.Errorf("%s holds %q: %s", where, s, text)
			}
		}
	}
}

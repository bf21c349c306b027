package relay_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// An SSE event whose data spans several lines reaches the client byte for byte: parsing it for usage must
// not write into the buffer that is passed on (it used to turn "data: b" into "\nb" on the wire).
func TestStream_MultiLineDataEventPassesThroughUnchanged(t *testing.T) {
	t.Parallel()
	const events = "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\n" +
		"data: \"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n" +
		"data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}\n\n" +
		"data: [DONE]\n\n"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, events)
	}))
	t.Cleanup(up.Close)
	w := newWorld(t)
	w.channel(chanSpec{Type: "openai", Name: "raw-sse", BaseURL: up.URL, Keys: []string{"sk-upstream-raw"}, Models: []string{"gpt-4o-mini"}})
	w.prices()
	p := w.user("alice", 1_000_000)
	k := w.key(p, nil)
	a := w.call("POST", "/v1/chat/completions", k.Key, chatBody("gpt-4o-mini", true, "stream_options", map[string]any{"include_usage": true}))
	if a.status != http.StatusOK || !bytes.Equal(a.body, []byte(events)) {
		t.Fatalf("client got %d %q, want the upstream's events unchanged %q", a.status, a.body, events)
	}
}

package relay_test

import (
	"bytes"
	"context"
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
	req, _ := w.newRequest(context.Background(), "POST", "/v1/chat/completions", k.Key,
		chatBody("gpt-4o-mini", true, "stream_options", map[string]any{"include_usage": true}))
	res, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	got, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || !bytes.Equal(got, []byte(events)) {
		t.Fatalf("client got %d %q, want the upstream's events unchanged %q", res.StatusCode, got, events)
	}
}

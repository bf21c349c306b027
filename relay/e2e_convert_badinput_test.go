package relay_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"tollgate/relay"
	"tollgate/relay/relaytest"
)

// A request the target protocol cannot express is a 400 naming the caller's field, in the caller's shape,
// and the upstream is never called: never a silently different request.
func TestConvert_UnexpressibleFieldsAre400sNamingTheField(t *testing.T) {
	t.Parallel()
	w := newProtoWorld(t, nil)
	cases := []struct {
		model, field string
		extra        []any
	}{
		{"p-anthropic", "n", []any{"n", 2}},
		{"p-anthropic", "logprobs", []any{"logprobs", true}},
		{"p-gemini", "logit_bias", []any{"logit_bias", map[string]any{"50256": -100}}},
	}
	for _, tc := range cases {
		up := w.fakes[strings.TrimPrefix(tc.model, "p-")]
		before := up.Count()
		a := w.call("POST", "/v1/chat/completions", w.key, chatBody(tc.model, false, tc.extra...))
		msg := openAIErr(t, a, http.StatusBadRequest, "unsupported_field")
		if !strings.Contains(msg, `"`+tc.field+`"`) {
			t.Fatalf("%s on %s: message %q does not name the field", tc.field, tc.model, msg)
		}
		if up.Count() != before {
			t.Fatalf("%s on %s: the upstream was called", tc.field, tc.model)
		}
	}
	// A default value is not refused: n 1 and logprobs false are what every protocol does anyway.
	a := w.call("POST", "/v1/chat/completions", w.key, chatBody("p-anthropic", false, "n", 1, "logprobs", false))
	if a.status != http.StatusOK {
		t.Fatalf("defaults refused: %d %s", a.status, a.body)
	}
	// A malformed body for the caller's own protocol is a 400 naming the field, in the caller's shape.
	a = w.call("POST", "/v1/messages", w.key, map[string]any{"model": "p-openai", "max_tokens": 10,
		"messages": []any{map[string]any{"role": "user", "content": 42}}})
	anthropicErr(t, a, http.StatusBadRequest, "invalid_request_error")
}

// A translated stream the upstream cuts inside a tool call ends well-formed for the caller (what was
// delivered, then an error in the caller's shape, no [DONE]) and is billed for what was delivered.
func TestConvert_StreamCutInsideAToolCall(t *testing.T) {
	t.Parallel()
	const args = `{"city":"Paris","unit":"celsius","days":3}`
	w := newProtoWorld(t, map[string][]relaytest.Option{"anthropic": {relaytest.WithChunks(6),
		relaytest.WithToolCall("get_weather", args), relaytest.Fail(relaytest.Reset(3))}})
	body := chatBody("p-anthropic", true)
	a := w.call("POST", "/v1/chat/completions", w.key, body)
	if a.status != http.StatusOK {
		t.Fatalf("status %d %s", a.status, a.body)
	}
	evs, _ := readSSE(bytes.NewReader(a.body), nil)
	var got strings.Builder
	sawErr := false
	for _, ev := range evs {
		if ev.data == "[DONE]" {
			t.Fatal("a cut stream must not end with [DONE]")
		}
		if gjson.Get(ev.data, "error").IsObject() {
			sawErr = true
			continue
		}
		got.WriteString(gjson.Get(ev.data, "choices.0.delta.tool_calls.0.function.arguments").String())
	}
	if !sawErr || got.Len() == 0 || !strings.HasPrefix(args, got.String()) {
		t.Fatalf("error event %v, delivered arguments %q (of %q)", sawErr, got.String(), args)
	}
	l := w.logOf(a.reqID)
	if l.Status != "error" || l.Cost <= 0 || l.CompletionTokens <= 0 {
		t.Fatalf("cut stream log: status %s cost %d out %d, want an error row billed for what was delivered", l.Status, l.Cost, l.CompletionTokens)
	}
}

// An upstream event whose JSON is broken ends the translated answer with an error in the caller's shape;
// nothing crashes, and the next call is served.
func TestConvert_MalformedUpstreamEventEndsTheStreamCleanly(t *testing.T) {
	t.Parallel()
	w := newProtoWorld(t, map[string][]relaytest.Option{"anthropic": {relaytest.Fail(relaytest.InvalidJSON())}})
	a := w.call("POST", "/v1/chat/completions", w.key, chatBody("p-anthropic", true))
	evs, _ := readSSE(bytes.NewReader(a.body), nil)
	if a.status != http.StatusOK || len(evs) == 0 || !gjson.Get(evs[len(evs)-1].data, "error").IsObject() {
		t.Fatalf("status %d, events %+v", a.status, evs)
	}
	w.fakes["anthropic"].Set(relaytest.Succeed())
	if a = w.call("POST", "/v1/chat/completions", w.key, chatBody("p-anthropic", false)); a.status != http.StatusOK {
		t.Fatalf("next call: %d %s", a.status, a.body)
	}
}

// An upstream whose stream line never ends is cut at relay.EventLimit as a bad reply (and retried elsewhere
// when nothing was sent yet), instead of growing the gateway's memory without bound.
func TestStream_EndlessUpstreamLineIsABadReply(t *testing.T) {
	t.Parallel()
	endless := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		chunk := bytes.Repeat([]byte("x"), 1<<20)
		_, _ = w.Write([]byte("data: "))
		for i := 0; i < relay.EventLimit>>20+4; i++ {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer endless.Close()
	w := newWorld(t)
	w.channel(chanSpec{Type: "openai", Name: "endless", BaseURL: endless.URL, Keys: []string{"k"}, Models: []string{"gpt-4o-mini"}})
	w.prices()
	k := w.key(w.user("endless", 1_000_000), nil)
	a := w.call("POST", "/v1/chat/completions", k.Key, chatBody("gpt-4o-mini", true))
	if a.status != http.StatusBadGateway {
		t.Fatalf("status %d %s, want 502 upstream_bad_reply", a.status, a.body)
	}
	if l := w.logOf(a.reqID); l.ErrorClass != "bad_reply" || l.Cost != 0 {
		t.Fatalf("log class %s cost %d", l.ErrorClass, l.Cost)
	}
}

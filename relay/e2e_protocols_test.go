package relay_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"tollgate/relay/relaytest"
)

// protoWorld has one channel of each upstream type, each on its own fake: model p-<type>.
type protoWorld struct {
	*world
	key        string
	fakes      map[string]*relaytest.Upstream
	channelIDs map[string]int64
}

func newProtoWorld(t *testing.T, opts map[string][]relaytest.Option) *protoWorld {
	w := &protoWorld{world: newWorld(t), fakes: map[string]*relaytest.Upstream{}, channelIDs: map[string]int64{}}
	var rows []price
	for _, typ := range []string{"openai", "anthropic", "gemini"} {
		up := fake(t, opts[typ]...)
		w.fakes[typ] = up
		w.channelIDs[typ] = w.channel(chanSpec{Type: typ, Name: "p-" + typ, BaseURL: up.URL, Keys: []string{"up-" + typ},
			Models: []string{"p-" + typ}})
		rows = append(rows, price{Model: "p-" + typ, Input: "1", Output: "2", CacheRead: "0.5", CacheWrite: "1.25"})
	}
	w.prices(rows...)
	w.key = w.world.key(w.user("proto", 10_000_000), nil).Key
	return w
}

// Done when: Anthropic usage {input 100, cache_read 1000, cache_creation 200, output 10} reaches an OpenAI
// caller as prompt 1300 / cached 1000 / completion 10, and the log row keeps cache_read 1000 and
// cache_write 200; Gemini {prompt 10, candidates 20, thoughts 30} is billed as 50 output tokens.
func TestUsageMapping_CacheAndThinkingTokensSurviveTranslation(t *testing.T) {
	t.Parallel()
	w := newProtoWorld(t, map[string][]relaytest.Option{
		"anthropic": {relaytest.WithTokens(100, 10), relaytest.WithCacheTokens(1000, 200)},
		"gemini":    {relaytest.WithThoughtTokens(30)},
	})
	for _, stream := range []bool{false, true} {
		body := chatBody("p-anthropic", stream)
		if stream {
			body["stream_options"] = map[string]any{"include_usage": true}
		}
		a := w.call("POST", "/v1/chat/completions", w.key, body)
		if a.status != http.StatusOK {
			t.Fatalf("stream=%v: %d %s", stream, a.status, a.body)
		}
		usage := gjson.GetBytes(a.body, "usage")
		if stream {
			evs, _ := readSSE(bytes.NewReader(a.body), nil)
			for _, ev := range evs {
				if u := gjson.Get(ev.data, "usage"); u.IsObject() {
					usage = u
				}
			}
		}
		if usage.Get("prompt_tokens").Int() != 1300 || usage.Get("prompt_tokens_details.cached_tokens").Int() != 1000 ||
			usage.Get("completion_tokens").Int() != 10 || usage.Get("total_tokens").Int() != 1310 {
			t.Fatalf("stream=%v: OpenAI caller told %s", stream, usage.Raw)
		}
		l := w.logOf(a.reqID)
		if l.PromptTokens != 1300 || l.CacheReadTokens != 1000 || l.CacheWriteTokens != 200 || l.CompletionTokens != 10 {
			t.Fatalf("stream=%v: log tokens in %d cache %d/%d out %d", stream, l.PromptTokens, l.CacheReadTokens, l.CacheWriteTokens, l.CompletionTokens)
		}
		// 100×1 + 1000×0.5 + 200×1.25 + 10×2 = 870 units, priced once.
		if l.Cost != 870 {
			t.Fatalf("stream=%v: cost %d, want 870", stream, l.Cost)
		}
	}
	a := w.call("POST", "/v1/chat/completions", w.key, chatBody("p-gemini", false))
	if a.status != http.StatusOK || gjson.GetBytes(a.body, "usage.completion_tokens").Int() != 50 ||
		gjson.GetBytes(a.body, "usage.completion_tokens_details.reasoning_tokens").Int() != 30 {
		t.Fatalf("gemini: %d %s", a.status, a.body)
	}
	if l := w.logOf(a.reqID); l.PromptTokens != 10 || l.CompletionTokens != 50 || l.Cost != 10+100 {
		t.Fatalf("gemini log: in %d out %d cost %d, want 10/50/110", l.PromptTokens, l.CompletionTokens, l.Cost)
	}
}

// Counting tokens works on every channel type: natively where the upstream counts (Anthropic count_tokens,
// Gemini countTokens, translated when the caller speaks the other one), locally where it cannot (OpenAI).
// A count is never billed.
func TestCountTokens_EveryChannelType(t *testing.T) {
	t.Parallel()
	w := newProtoWorld(t, nil)
	msg := map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hello there, how are you?"}}}
	gem := map[string]any{"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "hello there, how are you?"}}}}}
	for _, typ := range []string{"openai", "anthropic", "gemini"} {
		m := "p-" + typ
		before := w.fakes[typ].Count()
		msg["model"] = m
		a := w.call("POST", "/v1/messages/count_tokens", w.key, msg)
		if a.status != http.StatusOK || gjson.GetBytes(a.body, "input_tokens").Int() <= 0 {
			t.Fatalf("anthropic count on %s: %d %s", typ, a.status, a.body)
		}
		b := w.call("POST", "/v1beta/models/"+m+":countTokens", "", gem, "x-goog-api-key", w.key)
		if b.status != http.StatusOK || gjson.GetBytes(b.body, "totalTokens").Int() <= 0 {
			t.Fatalf("gemini count on %s: %d %s", typ, b.status, b.body)
		}
		upstreamCalls := w.fakes[typ].Count() - before
		if typ == "openai" && upstreamCalls != 0 || typ != "openai" && upstreamCalls != 2 {
			t.Fatalf("%s: %d upstream calls for two counts", typ, upstreamCalls)
		}
		if typ != "openai" && (gjson.GetBytes(a.body, "input_tokens").Int() != 10 || gjson.GetBytes(b.body, "totalTokens").Int() != 10) {
			t.Fatalf("%s: counts %s %s, want the upstream's 10", typ, a.body, b.body)
		}
	}
	w.flush()
	for _, l := range w.logs() {
		if l.Cost != 0 {
			t.Fatalf("a count was billed: %+v", l)
		}
	}
}

// A model no channel serves in any protocol is a 404 model_not_found in the caller's own shape, which no
// SDK retries.
func TestModelNotFound_InEveryCallerShape(t *testing.T) {
	t.Parallel()
	w := newProtoWorld(t, nil)
	w.prices(price{Model: "nowhere", Input: "1", Output: "1"})
	a := w.call("POST", "/v1/chat/completions", w.key, chatBody("nowhere", false))
	openAIErr(t, a, http.StatusNotFound, "model_not_found")
	a = w.call("POST", "/v1/messages", w.key, messagesBody("nowhere", false))
	anthropicErr(t, a, http.StatusNotFound, "not_found_error")
	a = w.call("POST", "/v1beta/models/nowhere:generateContent", "", map[string]any{"contents": []any{}}, "x-goog-api-key", w.key)
	if a.status != http.StatusNotFound || gjson.GetBytes(a.body, "error.status").String() != "NOT_FOUND" {
		t.Fatalf("gemini: %d %s", a.status, a.body)
	}
}

// streamGenerateContent without alt=sse is answered as Google does: one JSON array of chunks, from a Gemini
// channel (the request passed through as written, safety settings included) and from any other channel
// (translated).
func TestGeminiArrayStream_FromEveryChannelType(t *testing.T) {
	t.Parallel()
	w := newProtoWorld(t, nil)
	body := map[string]any{"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "hi"}}}},
		"safetySettings": []any{map[string]any{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}}}
	for _, typ := range []string{"gemini", "openai", "anthropic"} {
		a := w.call("POST", "/v1beta/models/p-"+typ+":streamGenerateContent", "", body, "x-goog-api-key", w.key)
		if a.status != http.StatusOK || !strings.HasPrefix(a.header.Get("Content-Type"), "application/json") {
			t.Fatalf("%s: %d %s %s", typ, a.status, a.header.Get("Content-Type"), a.body)
		}
		chunks := gjson.ParseBytes(a.body)
		if !chunks.IsArray() || len(chunks.Array()) < 2 {
			t.Fatalf("%s: not a JSON array of chunks: %s", typ, a.body)
		}
		var text strings.Builder
		for _, c := range chunks.Array() {
			text.WriteString(c.Get("candidates.0.content.parts.0.text").String())
		}
		last := chunks.Array()[len(chunks.Array())-1]
		if !strings.HasPrefix(text.String(), fullText) || last.Get("usageMetadata.totalTokenCount").Int() != 30 {
			t.Fatalf("%s: text %q, last chunk %s", typ, text.String(), last.Raw)
		}
		if l := w.logOf(a.reqID); l.Cost != 50 || l.ClientProtocol != "gemini" || l.UpstreamProtocol != typ {
			t.Fatalf("%s: log cost %d %s→%s", typ, l.Cost, l.ClientProtocol, l.UpstreamProtocol)
		}
	}
	last, _ := w.fakes["gemini"].Last()
	if !last.Get("safetySettings.0.threshold").Exists() || last.Query != "alt=sse" {
		t.Fatalf("the Gemini channel got %s?%s: the request must pass through as written, streamed as SSE", last.Body, last.Query)
	}
}

// A translated answer has one choice: n > 1 (candidateCount, n) to a channel of another protocol is a 400
// naming the field, never a silently single answer.
func TestConvert_SeveralChoicesAreRefusedNotDropped(t *testing.T) {
	t.Parallel()
	w := newProtoWorld(t, nil)
	body := map[string]any{"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "hi"}}}},
		"generationConfig": map[string]any{"candidateCount": 2}}
	a := w.call("POST", "/v1beta/models/p-openai:generateContent", "", body, "x-goog-api-key", w.key)
	if a.status != http.StatusBadRequest || gjson.GetBytes(a.body, "error.status").String() != "INVALID_ARGUMENT" ||
		!strings.Contains(gjson.GetBytes(a.body, "error.message").String(), `"n"`) {
		t.Fatalf("candidateCount 2 to an openai channel: %d %s", a.status, a.body)
	}
	a = w.call("POST", "/v1/chat/completions", w.key, chatBody("p-gemini", false, "n", 2))
	openAIErr(t, a, http.StatusBadRequest, "unsupported_field")
}

// What only tunes sampling (Gemini CLI's topK) or adds a hosted capability (Codex CLI's web_search) is left
// out for a target that has no form for it, and named in X-Tollgate-Dropped: the clients that always send
// them work on every channel type, and the difference is never silent.
func TestConvert_DroppedFieldsAreNamedInAHeader(t *testing.T) {
	t.Parallel()
	w := newProtoWorld(t, nil)
	gem := map[string]any{"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "hi"}}}},
		"generationConfig": map[string]any{"topK": 64, "temperature": 1}}
	a := w.call("POST", "/v1beta/models/p-openai:generateContent", "", gem, "x-goog-api-key", w.key)
	if a.status != http.StatusOK || a.header.Get("X-Tollgate-Dropped") != "top_k" {
		t.Fatalf("topK to an openai channel: %d dropped=%q %s", a.status, a.header.Get("X-Tollgate-Dropped"), a.body)
	}
	if last, _ := w.fakes["openai"].Last(); last.Get("top_k").Exists() || last.Get("temperature").Float() != 1 {
		t.Fatalf("upstream got %s", last.Body)
	}
	a = w.call("POST", "/v1beta/models/p-anthropic:generateContent", "", gem, "x-goog-api-key", w.key)
	if a.status != http.StatusOK || a.header.Get("X-Tollgate-Dropped") != "" {
		t.Fatalf("topK to an anthropic channel (which has top_k): %d dropped=%q", a.status, a.header.Get("X-Tollgate-Dropped"))
	}
	rsp := map[string]any{"model": "p-anthropic", "input": "hi", "tools": []any{
		map[string]any{"type": "namespace", "name": "multi_agent_v1", "tools": []any{
			map[string]any{"type": "function", "name": "spawn_agent", "parameters": map[string]any{"type": "object"}}}},
		map[string]any{"type": "web_search", "external_web_access": false}}}
	a = w.call("POST", "/v1/responses", w.key, rsp)
	if a.status != http.StatusOK || a.header.Get("X-Tollgate-Dropped") != "tools[1]" {
		t.Fatalf("Codex tools to an anthropic channel: %d dropped=%q %s", a.status, a.header.Get("X-Tollgate-Dropped"), a.body)
	}
	if last, _ := w.fakes["anthropic"].Last(); last.Get("tools.#").Int() != 1 || last.Get("tools.0.name").String() != "spawn_agent" {
		t.Fatalf("upstream tools %s", last.Get("tools").Raw)
	}
}

package relay_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"tollgate/relay/relaytest"
)

// Attacks on cross-protocol translation: a hostile caller and a broken upstream.

func gemBody(text string) map[string]any {
	return map[string]any{"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": text}}}}}
}

// rawUpstream adds a channel of type typ serving model on a server that answers every request with h
// (arbitrary upstream bytes), priced like the p- models.
func rawUpstream(t *testing.T, w *protoWorld, typ, model string, h http.HandlerFunc) {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	w.channel(chanSpec{Type: typ, Name: model, BaseURL: srv.URL, Keys: []string{"sk-raw-upstream-secret-" + typ}, Models: []string{model}})
	var rows []price
	for _, m := range []string{"p-openai", "p-anthropic", "p-gemini", model} {
		rows = append(rows, price{Model: m, Input: "1", Output: "2", CacheRead: "0.5", CacheWrite: "1.25"})
	}
	w.prices(rows...)
}

// sseHandler writes body as an SSE stream (flushed once).
func sseHandler(body string) http.HandlerFunc {
	return func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/event-stream")
		rw.WriteHeader(http.StatusOK)
		_, _ = rw.Write([]byte(body))
	}
}

// anthropicStreamOK checks an Anthropic stream as the SDK's accumulator does: message_start first, every delta
// and stop inside an open block, tool_use blocks named, nothing after message_stop, message_stop last.
func anthropicStreamOK(t *testing.T, evs []sseEvent) {
	t.Helper()
	open := map[int64]string{}
	for i, ev := range evs {
		if !json.Valid([]byte(ev.data)) {
			t.Fatalf("event %d %s: invalid JSON %q", i, ev.name, ev.data)
		}
		idx := gjson.Get(ev.data, "index").Int()
		switch ev.name {
		case "content_block_start":
			if _, dup := open[idx]; dup {
				t.Fatalf("event %d: block %d started twice", i, idx)
			}
			cb := gjson.Get(ev.data, "content_block")
			if cb.Get("type").String() == "tool_use" && (cb.Get("name").String() == "" || cb.Get("id").String() == "") {
				t.Fatalf("event %d: a tool_use block without a name or id: %s", i, ev.data)
			}
			open[idx] = cb.Get("type").String()
		case "content_block_delta", "content_block_stop":
			if _, ok := open[idx]; !ok {
				t.Fatalf("event %d: %s for block %d that is not open: %s", i, ev.name, idx, ev.data)
			}
			if ev.name == "content_block_stop" {
				delete(open, idx)
			}
		case "message_stop":
			if i != len(evs)-1 || len(open) > 0 {
				t.Fatalf("message_stop at %d of %d, open blocks %v", i, len(evs), open)
			}
		}
	}
	if len(evs) == 0 || evs[0].name != "message_start" {
		t.Fatalf("stream does not begin with message_start: %+v", evs)
	}
}

// ---- hostile caller ----

// Gemini model names with path tricks, extra colons or an empty model never reach a channel and never 500:
// a 404 in Gemini's shape.
func TestAttack_GeminiModelPathTricks(t *testing.T) {
	t.Parallel()
	w := newProtoWorld(t, nil)
	for _, p := range []string{"p-openai:generateContent:x", ":generateContent", "p-openai%2Fx:generateContent",
		"p-openai:countTokens%3Fkey=x", "p-openai", "%2e%2e:generateContent",
		"p-openai:generateContent%00"} {
		a := w.call("POST", "/v1beta/models/"+p, "", gemBody("hi"), "x-goog-api-key", w.key)
		if a.status >= 500 || a.status == 200 || !gjson.GetBytes(a.body, "error.status").Exists() {
			t.Fatalf("%s: %d %s", p, a.status, a.body)
		}
	}
	for typ, up := range w.fakes {
		if up.Count() != 0 {
			t.Fatalf("a path trick reached the %s channel", typ)
		}
	}
}

// A /v1beta path the router does not know (here "..%2F" cleaned out of the model segment, or a typo'd
// method prefix) is answered by router.NoRoute in the console's shape {"error":{"code":"route_not_found",
// "message":...}}: a string code and no status, which Google's SDKs cannot read as a Gemini error
// (code is an HTTP status number there). Expected: {"error":{"code":404,"message":...,"status":"NOT_FOUND"}}.
func TestAttack_UnroutedGeminiPathAnswersInGeminiShape(t *testing.T) {
	t.Parallel()
	w := newProtoWorld(t, nil)
	for _, p := range []string{"/v1beta/models/..%2Fp-openai:generateContent", "/v1beta/model/p-openai:generateContent"} {
		a := w.call("POST", p, "", gemBody("hi"), "x-goog-api-key", w.key)
		if a.status != http.StatusNotFound || gjson.GetBytes(a.body, "error.code").Int() != 404 ||
			gjson.GetBytes(a.body, "error.status").String() != "NOT_FOUND" {
			t.Fatalf("%s: %d %s", p, a.status, a.body)
		}
	}
}

// Keys on Gemini routes: the header wins over ?key=; a wrong header key is refused even if ?key= is good;
// alt=sse&alt=json takes the first; refusals are in Gemini's shape and never echo a key.
func TestAttack_GeminiKeyInHeaderAndQuery(t *testing.T) {
	t.Parallel()
	w := newProtoWorld(t, nil)
	a := w.call("POST", "/v1beta/models/p-anthropic:generateContent?key=sk-bogus-query-key", "", gemBody("hi"), "x-goog-api-key", w.key)
	if a.status != http.StatusOK {
		t.Fatalf("good header, bad query: %d %s", a.status, a.body)
	}
	a = w.call("POST", "/v1beta/models/p-anthropic:generateContent?key="+w.key, "", gemBody("hi"), "x-goog-api-key", "sk-bogus-header-key")
	if a.status != http.StatusUnauthorized || !gjson.GetBytes(a.body, "error.status").Exists() ||
		bytes.Contains(a.body, []byte("bogus")) || bytes.Contains(a.body, []byte(w.key)) {
		t.Fatalf("bad header, good query: %d %s", a.status, a.body)
	}
	a = w.call("POST", "/v1beta/models/p-anthropic:streamGenerateContent?alt=sse&alt=json&key="+w.key, "", gemBody("hi"))
	if a.status != http.StatusOK || !strings.HasPrefix(a.header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("alt=sse&alt=json: %d %s %s", a.status, a.header.Get("Content-Type"), a.body)
	}
	if l := w.logOf(a.reqID); strings.Contains(fmt.Sprintf("%+v", l), w.key) {
		t.Fatalf("the caller's ?key= is in the log row: %+v", l)
	}
}

// Nulls, numbers and arrays where objects and strings are expected: a 400 in the caller's own shape, never a
// 5xx or a panic, and the upstream is never called.
func TestAttack_WrongTypesAre400sInTheCallersShape(t *testing.T) {
	t.Parallel()
	w := newProtoWorld(t, nil)
	type tc struct{ path, body string }
	var cases []tc
	for _, m := range []string{"p-anthropic", "p-gemini"} {
		for _, b := range []string{`"messages":[null]`, `"messages":null`, `"messages":[{"role":"user","content":[null]}]`,
			`"messages":[{"role":5,"content":"hi"}]`, `"messages":[{"role":"user","content":[{"type":"text","text":5}]}]`,
			`"messages":[{"role":"user","content":"hi"}],"tools":[null]`, `"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":null}]`,
			`"messages":[{"role":"assistant","tool_calls":[{"id":1,"type":"function","function":{"name":{},"arguments":7}}]}]`,
			`"messages":[{"role":"user","content":"hi"}],"tool_choice":{"type":"function","function":null}`,
			`"messages":[{"role":"user","content":"hi"}],"response_format":null,"stop":7`,
			`"messages":[{"role":"user","content":[{"type":"image_url","image_url":null}]}]`} {
			cases = append(cases, tc{"/v1/chat/completions", `{"model":"` + m + `",` + b + `}`})
		}
	}
	for _, m := range []string{"p-openai", "p-gemini"} {
		for _, b := range []string{`"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":null,"content":[null]}]}]`,
			`"messages":[{"role":"user","content":[{"type":"image","source":null}]}]`, `"system":[null],"messages":[]`,
			`"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":"str"}]}]`,
			`"messages":[{"role":"user","content":"hi"}],"thinking":{"type":"enabled","budget_tokens":"many"}`} {
			cases = append(cases, tc{"/v1/messages", `{"model":"` + m + `","max_tokens":10,` + b + `}`})
		}
	}
	for _, b := range []string{`{"contents":[null]}`, `{"contents":[{"role":"user","parts":null}]}`, `{"contents":[{"parts":[{"text":5}]}]}`,
		`{"contents":[{"parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[null]}]}`,
		`{"contents":[{"parts":[{"inlineData":{"mimeType":"image/png","data":7}}]}]}`, `{"contents":{"parts":[]}}`,
		`{"contents":[{"parts":[{"text":"hi"}]}],"systemInstruction":"be brief"}`} {
		cases = append(cases, tc{"/v1beta/models/p-anthropic:generateContent", b}, tc{"/v1beta/models/p-openai:streamGenerateContent?alt=sse", b})
	}
	for _, b := range []string{`"input":[null]`, `"input":[{"type":"function_call_output","call_id":null,"output":{}}]`, `"input":7`,
		`"input":"hi","tools":[{"type":"function","name":null}]`} {
		cases = append(cases, tc{"/v1/responses", `{"model":"p-anthropic",` + b + `}`})
	}
	for _, c := range cases {
		a := w.call("POST", c.path, "", []byte(c.body), "Authorization", "Bearer "+w.key)
		if a.status >= 500 || a.status == 200 && !strings.Contains(c.body, `"content":"hi"`) {
			t.Errorf("%s %s: %d %s", c.path, c.body, a.status, a.body)
			continue
		}
		if a.status != 200 && !strings.HasPrefix(c.path, "/v1beta") && !gjson.GetBytes(a.body, "error.type").Exists() ||
			strings.HasPrefix(c.path, "/v1beta") && a.status != 200 && !gjson.GetBytes(a.body, "error.status").Exists() {
			t.Errorf("%s %s: wrong error shape %d %s", c.path, c.body, a.status, a.body)
		}
	}
}

// Duplicated keys inside generationConfig: the gateway sizes the hold from the first maxOutputTokens
// (gjson), the translation sends the last (encoding/json) to the upstream. bodyshape checks only top-level and
// stream_options keys, so a Gemini caller holds for 1 output token and asks the upstream for a million.
// Expected: a 400 duplicate_key (or the upstream gets the value the gateway validated and held for).
func TestAttack_GeminiDuplicateMaxOutputTokensInsideGenerationConfig(t *testing.T) {
	t.Parallel()
	w := newProtoWorld(t, nil)
	body := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":1,"maxOutputTokens":1000000}}`
	a := w.call("POST", "/v1beta/models/p-anthropic:generateContent", "", []byte(body), "x-goog-api-key", w.key)
	if a.status == http.StatusBadRequest {
		return
	}
	last, _ := w.fakes["anthropic"].Last()
	if got := last.Get("max_tokens").Int(); got != 1 {
		t.Fatalf("status %d: the gateway held for maxOutputTokens 1, the upstream was asked for max_tokens %d", a.status, got)
	}
}

// Two parallel calls of the same function in a Gemini history (no ids, as Gemini sends them), answered in
// order: each result must carry its own call's id upstream. The parser matches a functionResponse to the most
// recent unanswered call of that name, so the first response gets the second call's id: Paris's weather is
// reported as London's (relay/convert/gemini.go gemParser.answer searches from the end).
func TestAttack_GeminiParallelSameNameCallsKeepTheirResults(t *testing.T) {
	t.Parallel()
	w := newProtoWorld(t, nil)
	body := map[string]any{"contents": []any{
		map[string]any{"role": "user", "parts": []any{map[string]any{"text": "weather in Paris and London?"}}},
		map[string]any{"role": "model", "parts": []any{
			map[string]any{"functionCall": map[string]any{"name": "weather", "args": map[string]any{"city": "Paris"}}},
			map[string]any{"functionCall": map[string]any{"name": "weather", "args": map[string]any{"city": "London"}}}}},
		map[string]any{"role": "user", "parts": []any{
			map[string]any{"functionResponse": map[string]any{"name": "weather", "response": map[string]any{"city": "Paris", "t": 20}}},
			map[string]any{"functionResponse": map[string]any{"name": "weather", "response": map[string]any{"city": "London", "t": 10}}}}}}}
	a := w.call("POST", "/v1beta/models/p-anthropic:generateContent", "", body, "x-goog-api-key", w.key)
	last, _ := w.fakes["anthropic"].Last()
	idOf, resOf := map[string]string{}, map[string]string{} // call id -> city asked / its result
	for _, b := range last.Get("messages.1.content").Array() {
		idOf[b.Get("id").String()] = b.Get("input.city").String()
	}
	for _, b := range last.Get("messages.2.content").Array() {
		resOf[b.Get("tool_use_id").String()] = b.Get("content").String()
	}
	if a.status != http.StatusOK || len(idOf) != 2 {
		t.Fatalf("%d: calls %v in %s", a.status, idOf, last.Body)
	}
	for id, city := range idOf {
		if !strings.Contains(resOf[id], city) {
			t.Fatalf("call %s asked for %s, its result upstream is %s", id, city, resOf[id])
		}
	}
}

// 10,000 tool calls and 5 MB of base64 image translated to Anthropic: served, fast, nothing dropped.
func TestAttack_HugeToolHistoryAndImage(t *testing.T) {
	t.Parallel()
	w := newProtoWorld(t, nil)
	calls := make([]any, 10000)
	msgs := []any{map[string]any{"role": "user", "content": "go"}, nil}
	for i := range calls {
		id := fmt.Sprintf("call_%d", i)
		calls[i] = map[string]any{"id": id, "type": "function", "function": map[string]any{"name": "f\u00e9", "arguments": `{"i":` + fmt.Sprint(i) + `}`}}
		msgs = append(msgs, map[string]any{"role": "tool", "tool_call_id": id, "content": "ok"})
	}
	msgs[1] = map[string]any{"role": "assistant", "tool_calls": calls}
	a := w.call("POST", "/v1/chat/completions", w.key, chatBody("p-anthropic", false, "messages", msgs))
	if a.status != http.StatusOK {
		t.Fatalf("10,000 calls: %d %.300s", a.status, a.body)
	}
	last, _ := w.fakes["anthropic"].Last()
	if n := len(last.Get("messages.1.content").Array()); n != 10000 || last.Get("messages.2.content.9999.tool_use_id").String() != "call_9999" {
		t.Fatalf("upstream got %d tool_use blocks", n)
	}
	img := strings.Repeat("A", 5<<20)
	content := []any{map[string]any{"type": "text", "text": "what is it?"},
		map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64," + img}}}
	a = w.call("POST", "/v1/chat/completions", w.key, chatBody("p-anthropic", false, "messages", []any{map[string]any{"role": "user", "content": content}}))
	if a.status == http.StatusOK {
		last, _ = w.fakes["anthropic"].Last()
		if len(last.Get("messages.0.content.1.source.data").String()) != len(img) {
			t.Fatalf("image not passed whole: %d bytes", len(last.Get("messages.0.content.1.source.data").String()))
		}
	} else if a.status >= 500 {
		t.Fatalf("5 MB image: %d %.300s", a.status, a.body)
	}
}

// A Gemini body whose only turns are empty (a null functionCall, an empty text) passes the "contents is
// required" check, and the translation sends Anthropic "messages":[] (which it refuses): a wasted upstream
// call. Expected: a 400 naming contents, the upstream never called (gemCodec.ParseRequest checks the count
// before dropping empty turns).
func TestAttack_GeminiOnlyEmptyTurnsNeverReachTheUpstream(t *testing.T) {
	t.Parallel()
	w := newProtoWorld(t, nil)
	for _, b := range []string{`{"contents":[{"parts":[{"functionCall":null}]}]}`, `{"contents":[{"role":"user","parts":[{"text":""}]}]}`} {
		before := w.fakes["anthropic"].Count()
		a := w.call("POST", "/v1beta/models/p-anthropic:generateContent", "", []byte(b), "x-goog-api-key", w.key)
		if a.status != http.StatusBadRequest || w.fakes["anthropic"].Count() != before {
			last, _ := w.fakes["anthropic"].Last()
			t.Fatalf("%s: %d, upstream got %s", b, a.status, last.Body)
		}
	}
}

// ---- broken upstreams ----

// An OpenAI-compatible upstream stream with CRLF line ends, comments, a 200 KB line, "error":null on every
// chunk, unknown fields and usage reported twice (the second is final): an Anthropic caller gets a well-formed
// stream with all the text, and the log row is billed the final usage once.
func TestAttack_UpstreamStreamFramingOddities(t *testing.T) {
	t.Parallel()
	w := newProtoWorld(t, nil)
	long := strings.Repeat("x", 200<<10)
	var b strings.Builder
	b.WriteString(": keep-alive\r\n\r\n")
	for i, s := range []string{"Hel", "lo ", long} {
		fmt.Fprintf(&b, "data: {\"id\":\"c1\",\"error\":null,\"x_unknown\":{\"a\":[1,2]},\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\r\n\r\n", s)
		if i == 0 {
			b.WriteString(": comment between chunks\r\n\r\n")
		}
	}
	b.WriteString("data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}\r\n\r\n")
	b.WriteString("data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":20}}\r\n\r\n")
	b.WriteString("data: [DONE]\r\n\r\n")
	rawUpstream(t, w, "openai", "raw-oai", sseHandler(b.String()))
	a := w.call("POST", "/v1/messages", w.key, messagesBody("raw-oai", true))
	evs, _ := readSSE(bytes.NewReader(a.body), nil)
	anthropicStreamOK(t, evs)
	var text strings.Builder
	for _, ev := range evs {
		text.WriteString(gjson.Get(ev.data, "delta.text").String())
	}
	if text.String() != "Hello "+long || evs[len(evs)-1].name != "message_stop" {
		t.Fatalf("text %d bytes, last event %s", text.Len(), evs[len(evs)-1].name)
	}
	if l := w.logOf(a.reqID); l.PromptTokens != 10 || l.CompletionTokens != 20 || l.Cost != 50 {
		t.Fatalf("log in %d out %d cost %d, want 10/20/50", l.PromptTokens, l.CompletionTokens, l.Cost)
	}
}

// Parallel tool calls whose argument pieces interleave (call 0 starts, call 1 starts, then arguments for 0,
// then 1: what several OpenAI-compatible servers send): the OpenAI decoder closes call 0's block when call 1
// starts, so 0's later arguments go to a closed block and the Anthropic encoder opens a fresh tool_use block
// with a made-up id and no name. The caller's SDK gets a nameless call and call 0 with {} arguments.
// Expected: two tool_use blocks, named, ids kept, each with its whole arguments (relay/convert/openai_stream.go
// oaiDecoder.toolPiece/startBlock: blocks are strictly sequential).
func TestAttack_InterleavedParallelToolCallsToAnthropic(t *testing.T) {
	t.Parallel()
	w := newProtoWorld(t, nil)
	chunk := func(delta string) string {
		return `data: {"id":"c1","choices":[{"index":0,"delta":` + delta + `}]}` + "\n\n"
	}
	body := chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_A","type":"function","function":{"name":"fa","arguments":""}}]}`) +
		chunk(`{"tool_calls":[{"index":1,"id":"call_B","type":"function","function":{"name":"fb","arguments":""}}]}`) +
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":1}"}}]}`) +
		chunk(`{"tool_calls":[{"index":1,"function":{"arguments":"{\"b\":2}"}}]}`) +
		`data: {"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":20}}` + "\n\n" +
		"data: [DONE]\n\n"
	rawUpstream(t, w, "openai", "raw-oai", sseHandler(body))
	a := w.call("POST", "/v1/messages", w.key, messagesBody("raw-oai", true))
	evs, _ := readSSE(bytes.NewReader(a.body), nil)
	anthropicStreamOK(t, evs)
	args, names := map[int64]string{}, map[int64]string{}
	for _, ev := range evs {
		if ev.name == "content_block_start" {
			names[gjson.Get(ev.data, "index").Int()] = gjson.Get(ev.data, "content_block.id").String() + "/" + gjson.Get(ev.data, "content_block.name").String()
		}
		args[gjson.Get(ev.data, "index").Int()] += gjson.Get(ev.data, "delta.partial_json").String()
	}
	if len(names) != 2 || names[0] != "call_A/fa" || names[1] != "call_B/fb" || args[0] != `{"a":1}` || args[1] != `{"b":2}` {
		t.Fatalf("blocks %v, arguments %v", names, args)
	}
}

// An Anthropic upstream that sends events out of order and unknown ones: a delta before any block start, a
// message_delta before message_start, pings, an unknown event, and events after message_stop. An OpenAI caller
// gets valid chunks, one finish, [DONE] last; a Gemini caller valid chunks.
func TestAttack_AnthropicUpstreamOutOfOrderEvents(t *testing.T) {
	t.Parallel()
	w := newProtoWorld(t, nil)
	ev := func(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }
	body := ev("ping", `{"type":"ping"}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"Hi"}}`) +
		ev("message_start", `{"type":"message_start","message":{"id":"msg_1","model":"m","usage":{"input_tokens":10,"output_tokens":1}}}`) +
		ev("brand_new_event", `{"type":"brand_new_event","x":{}}`) +
		ev("content_block_start", `{"type":"content_block_start","index":3,"content_block":{"type":"text","text":""}}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":" there"}}`) +
		ev("content_block_stop", `{"type":"content_block_stop","index":3}`) +
		ev("content_block_stop", `{"type":"content_block_stop","index":9}`) +
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":20}}`) +
		ev("message_stop", `{"type":"message_stop"}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"AFTER"}}`)
	rawUpstream(t, w, "anthropic", "raw-ant", sseHandler(body))
	for _, path := range []string{"/v1/chat/completions", "/v1beta/models/raw-ant:streamGenerateContent?alt=sse"} {
		req := any(chatBody("raw-ant", true))
		if strings.HasPrefix(path, "/v1beta") {
			req = gemBody("hi")
		}
		a := w.call("POST", path, w.key, req)
		evs, _ := readSSE(bytes.NewReader(a.body), nil)
		var text strings.Builder
		finishes := 0
		for i, e := range evs {
			if e.data == "[DONE]" {
				if i != len(evs)-1 {
					t.Fatalf("%s: [DONE] is not last", path)
				}
				continue
			}
			if !json.Valid([]byte(e.data)) || gjson.Get(e.data, "error").Exists() {
				t.Fatalf("%s: event %d: %s", path, i, e.data)
			}
			text.WriteString(gjson.Get(e.data, "choices.0.delta.content").String() + gjson.Get(e.data, "candidates.0.content.parts.0.text").String())
			if gjson.Get(e.data, "choices.0.finish_reason").String() != "" || gjson.Get(e.data, "candidates.0.finishReason").String() != "" {
				finishes++
			}
		}
		if text.String() != "Hi there" || finishes != 1 {
			t.Fatalf("%s: text %q, %d finishes: %s", path, text.String(), finishes, a.body)
		}
		if l := w.logOf(a.reqID); l.Cost != 50 {
			t.Fatalf("%s: cost %d, want 50", path, l.Cost)
		}
	}
}

// An upstream tool call whose arguments are not JSON, to an Anthropic and a Gemini caller: never a 5xx
// panic; non-stream a 502-class error in the caller's shape or a well-formed answer, never a tool_use whose
// input is not an object; a Gemini stream ends with an error chunk.
func TestAttack_ToolCallWithInvalidJSONArguments(t *testing.T) {
	t.Parallel()
	w := newProtoWorld(t, map[string][]relaytest.Option{"openai": {relaytest.WithToolCall("f", `not json {`)}})
	a := w.call("POST", "/v1/messages", w.key, messagesBody("p-openai", false))
	if a.status == http.StatusOK && !gjson.GetBytes(a.body, "content.#(type==\"tool_use\").input").IsObject() {
		t.Fatalf("anthropic non-stream: %s", a.body)
	}
	if a.status != http.StatusOK && gjson.GetBytes(a.body, "type").String() != "error" {
		t.Fatalf("anthropic non-stream error shape: %d %s", a.status, a.body)
	}
	a = w.call("POST", "/v1beta/models/p-openai:streamGenerateContent?alt=sse", "", gemBody("hi"), "x-goog-api-key", w.key)
	evs, _ := readSSE(bytes.NewReader(a.body), nil)
	if len(evs) == 0 || !gjson.Get(evs[len(evs)-1].data, "error.status").Exists() {
		t.Fatalf("gemini stream: %s", a.body)
	}
	for _, e := range evs {
		if gjson.Get(e.data, "candidates.0.content.parts.0.functionCall").Exists() {
			t.Fatalf("gemini stream sent the broken call: %s", e.data)
		}
	}
}

// An Anthropic upstream that fails mid-stream with an error echoing its key, and reports negative usage
// first: the OpenAI caller gets the text so far, then one error chunk without the key, no [DONE]; the row is
// never negative.
func TestAttack_UpstreamErrorEventAndNegativeUsage(t *testing.T) {
	t.Parallel()
	w := newProtoWorld(t, nil)
	ev := func(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }
	body := ev("message_start", `{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":-1000,"output_tokens":-5}}}`) +
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"partial"}}`) +
		ev("message_delta", `{"type":"message_delta","delta":{},"usage":{"output_tokens":-7}}`) +
		ev("error", `{"type":"error","error":{"type":"overloaded_error","message":"key sk-raw-upstream-secret-anthropic is overloaded"}}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"AFTER"}}`)
	rawUpstream(t, w, "anthropic", "raw-ant", sseHandler(body))
	a := w.call("POST", "/v1/chat/completions", w.key, chatBody("raw-ant", true, "stream_options", map[string]any{"include_usage": true}))
	if bytes.Contains(a.body, []byte("sk-raw-upstream-secret")) || bytes.Contains(a.body, []byte("AFTER")) || bytes.Contains(a.body, []byte("[DONE]")) {
		t.Fatalf("stream: %s", a.body)
	}
	evs, _ := readSSE(bytes.NewReader(a.body), nil)
	if len(evs) < 2 || !gjson.Get(evs[len(evs)-1].data, "error").IsObject() || !strings.Contains(string(a.body), "partial") {
		t.Fatalf("stream: %s", a.body)
	}
	for _, e := range evs {
		if u := gjson.Get(e.data, "usage"); u.Exists() && (u.Get("prompt_tokens").Int() < 0 || u.Get("completion_tokens").Int() < 0) {
			t.Fatalf("negative usage told to the caller: %s", e.data)
		}
	}
	if l := w.logOf(a.reqID); l.Cost < 0 || l.PromptTokens < 0 || l.CompletionTokens < 0 || strings.Contains(l.Error, "upstream-secret") {
		t.Fatalf("log: cost %d in %d out %d msg %q", l.Cost, l.PromptTokens, l.CompletionTokens, l.Error)
	}
}

// Counting is never billed, even with "stream":true in the body or a wrapped generate request with a huge
// maxOutputTokens, on every channel type.
func TestAttack_CountsAreNeverBilled(t *testing.T) {
	t.Parallel()
	w := newProtoWorld(t, nil)
	for _, m := range []string{"p-openai", "p-anthropic", "p-gemini"} {
		a := w.call("POST", "/v1/messages/count_tokens", w.key, messagesBody(m, true))
		b := w.call("POST", "/v1beta/models/"+m+":countTokens?alt=sse", "", map[string]any{"generateContentRequest": map[string]any{
			"contents": gemBody("hi")["contents"], "generationConfig": map[string]any{"maxOutputTokens": 10_000_000}}}, "x-goog-api-key", w.key)
		if a.status != http.StatusOK || b.status != http.StatusOK {
			t.Fatalf("%s: %d %s / %d %s", m, a.status, a.body, b.status, b.body)
		}
	}
	w.flush()
	for _, l := range w.logs() {
		if l.Cost != 0 {
			t.Fatalf("a count was billed: %+v", l)
		}
	}
}

// A Gemini stream cut after a few chunks, to an Anthropic caller: well-formed up to an error event, billed
// for what was delivered. A Gemini caller without alt=sse (one JSON array) whose Anthropic upstream cuts the
// stream still gets one valid JSON array, ending in an error element.
func TestAttack_StreamCutToAnthropicAndGeminiArrayCallers(t *testing.T) {
	t.Parallel()
	cut := []relaytest.Option{relaytest.WithChunks(6), relaytest.Fail(relaytest.Reset(3))}
	w := newProtoWorld(t, map[string][]relaytest.Option{"gemini": cut, "anthropic": cut})
	g := w.call("POST", "/v1beta/models/p-anthropic:streamGenerateContent", "", gemBody("hi"), "x-goog-api-key", w.key)
	if arr := gjson.ParseBytes(g.body); g.status != http.StatusOK || !json.Valid(g.body) || !arr.IsArray() || !arr.Get("@reverse.0.error").IsObject() {
		t.Fatalf("gemini array: %d %s", g.status, g.body)
	}
	a := w.call("POST", "/v1/messages", w.key, messagesBody("p-gemini", true))
	evs, _ := readSSE(bytes.NewReader(a.body), nil)
	anthropicStreamOK(t, evs)
	if len(evs) == 0 || evs[len(evs)-1].name != "error" {
		t.Fatalf("a cut stream must end with an error event: %s", a.body)
	}
	if l := w.logOf(a.reqID); l.Status != "error" || l.Cost <= 0 || l.CompletionTokens <= 0 {
		t.Fatalf("cut stream log: status %s cost %d out %d", l.Status, l.Cost, l.CompletionTokens)
	}
}

// Responses caller ↔ Anthropic channel: the call_id the caller gets is the upstream's tool_use id, and the
// function_call_output sent back with it reaches the upstream as that tool_use_id.
func TestAttack_ResponsesToolCallIDRoundTrip(t *testing.T) {
	t.Parallel()
	w := newProtoWorld(t, map[string][]relaytest.Option{"anthropic": {relaytest.WithToolCall("lookup", `{"q":"x"}`)}})
	a := w.call("POST", "/v1/responses", w.key, map[string]any{"model": "p-anthropic", "input": "find x",
		"tools": []any{map[string]any{"type": "function", "name": "lookup", "parameters": map[string]any{"type": "object"}}}})
	fc := gjson.GetBytes(a.body, `output.#(type=="function_call")`)
	callID := fc.Get("call_id").String()
	if a.status != http.StatusOK || callID == "" || fc.Get("name").String() != "lookup" {
		t.Fatalf("%d %s", a.status, a.body)
	}
	a = w.call("POST", "/v1/responses", w.key, map[string]any{"model": "p-anthropic", "input": []any{
		map[string]any{"role": "user", "content": "find x"},
		map[string]any{"type": "function_call", "id": fc.Get("id").String(), "call_id": callID, "name": "lookup", "arguments": `{"q":"x"}`},
		map[string]any{"type": "function_call_output", "call_id": callID, "output": "found"}}})
	last, _ := w.fakes["anthropic"].Last()
	use, res := last.Get("messages.1.content.0.id").String(), last.Get("messages.2.content.0.tool_use_id").String()
	if a.status != http.StatusOK || use != callID || res != callID {
		t.Fatalf("%d: caller's call_id %s, upstream tool_use %s / tool_result %s", a.status, callID, use, res)
	}
}

// The upstream's terminal event is one the decoder refuses (Gemini's finishReason chunk carrying a
// functionCall whose args is a string): relay.stream computes ended = ad.Terminal(...) before tr.event fails,
// then the loop exits with ended true and writes tr.finish(nil, true) — finish_reason "stop" and [DONE] — and
// logs a success. The tool call is silently dropped and the caller believes the answer complete.
// Expected: the decoder error wins: an error chunk, no [DONE], an error log row (relay/answer.go stream: check
// readErr before ended after the loop, or set ended only after the event translated).
func TestAttack_MalformedTerminalEventIsNotASuccess(t *testing.T) {
	t.Parallel()
	w := newProtoWorld(t, nil)
	rawUpstream(t, w, "gemini", "raw-gem", sseHandler(`data: {"candidates":[{"content":{"parts":[{"text":"a"}]}}]}`+"\n\n"+
		`data: {"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":"oops"}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":20}}`+"\n\n"))
	a := w.call("POST", "/v1/chat/completions", w.key, chatBody("raw-gem", true))
	evs, _ := readSSE(bytes.NewReader(a.body), nil)
	if len(evs) == 0 || evs[len(evs)-1].data == "[DONE]" || !gjson.Get(evs[len(evs)-1].data, "error").IsObject() {
		t.Fatalf("the caller was told the answer ended well:\n%s", a.body)
	}
	if l := w.logOf(a.reqID); l.Status != "error" {
		t.Fatalf("log status %s", l.Status)
	}
}

package relaytest_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"tollgate/relay/relaytest"
)

func TestGemini_GenerateStreamCountModelsAndErrors(t *testing.T) {
	up := relaytest.New(relaytest.WithChunks(3), relaytest.WithThoughtTokens(30))
	defer up.Close()
	c := http.DefaultClient
	body := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`

	r := post(t, c, up.URL+"/v1beta/models/gemini-2.5-flash:generateContent", body, "x-goog-api-key", "k1")
	if r.status != 200 || gjson.GetBytes(r.body, "candidates.0.finishReason").String() != "STOP" ||
		gjson.GetBytes(r.body, "usageMetadata.thoughtsTokenCount").Int() != 30 {
		t.Fatalf("generate: %d %s", r.status, r.body)
	}
	last, _ := up.Last()
	if last.Model != "gemini-2.5-flash" || last.Key != "k1" {
		t.Fatalf("recorded %q with key %q", last.Model, last.Key)
	}

	r = post(t, c, up.URL+"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&key=k2", body)
	if r.status != 200 || len(r.events) != 4 {
		t.Fatalf("stream: %d, %d events: %s", r.status, len(r.events), r.body)
	}
	var text strings.Builder
	for _, e := range r.events {
		text.WriteString(gjson.Get(e.data, "candidates.0.content.parts.0.text").String())
	}
	if !strings.HasPrefix(text.String(), "Hello from") || gjson.Get(r.events[3].data, "usageMetadata.promptTokenCount").Int() != 10 {
		t.Fatalf("stream text %q, last %s", text.String(), r.events[3].data)
	}

	if r = post(t, c, up.URL+"/v1beta/models/m:countTokens", body); gjson.GetBytes(r.body, "totalTokens").Int() != 10 {
		t.Fatalf("count: %s", r.body)
	}
	if r = post(t, c, up.URL+"/v1beta/models", ""); gjson.GetBytes(r.body, "models.0.name").String() != "models/gpt-4o-mini" {
		t.Fatalf("models: %s", r.body)
	}
	up.Set(relaytest.Fail(relaytest.RateLimited(0)))
	r = post(t, c, up.URL+"/v1beta/models/m:generateContent", body)
	if r.status != 429 || gjson.GetBytes(r.body, "error.status").String() != "RESOURCE_EXHAUSTED" {
		t.Fatalf("error: %d %s", r.status, r.body)
	}
}

func TestToolCall_EveryProtocolAnswersOneWholeCall(t *testing.T) {
	const args = `{"city":"Paris","unit":"c"}`
	up := relaytest.New(relaytest.WithChunks(4), relaytest.WithToolCall("get_weather", args))
	defer up.Close()
	c := http.DefaultClient
	join := func(r result, path string) string {
		var b strings.Builder
		for _, e := range r.events {
			b.WriteString(gjson.Get(e.data, path).String())
		}
		return b.String()
	}
	r := post(t, c, up.URL+"/v1/chat/completions", `{"model":"m","stream":true}`)
	if got := join(r, "choices.0.delta.tool_calls.0.function.arguments"); got != args {
		t.Fatalf("chat stream args %q", got)
	}
	r = post(t, c, up.URL+"/v1/chat/completions", `{"model":"m"}`)
	if gjson.GetBytes(r.body, "choices.0.message.tool_calls.0.function.arguments").String() != args ||
		gjson.GetBytes(r.body, "choices.0.finish_reason").String() != "tool_calls" {
		t.Fatalf("chat: %s", r.body)
	}
	r = post(t, c, up.URL+"/v1/messages", `{"model":"m","stream":true}`)
	if got := join(r, "delta.partial_json"); got != args {
		t.Fatalf("messages stream args %q", got)
	}
	r = post(t, c, up.URL+"/v1/messages", `{"model":"m"}`)
	if gjson.GetBytes(r.body, "content.0.input.city").String() != "Paris" || gjson.GetBytes(r.body, "stop_reason").String() != "tool_use" {
		t.Fatalf("messages: %s", r.body)
	}
	r = post(t, c, up.URL+"/v1/responses", `{"model":"m","stream":true}`)
	if got := join(r, "delta"); got != args {
		t.Fatalf("responses stream args %q", got)
	}
	r = post(t, c, up.URL+"/v1beta/models/g:streamGenerateContent?alt=sse", `{}`)
	if len(r.events) != 1 || gjson.Get(r.events[0].data, "candidates.0.content.parts.0.functionCall.args.unit").String() != "c" {
		t.Fatalf("gemini stream: %s", r.body)
	}
}

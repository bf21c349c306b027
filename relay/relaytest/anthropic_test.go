package relaytest_test

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"tollgate/relay/relaytest"
)

func TestMessages_StreamCarriesUsageInStartAndDelta(t *testing.T) {
	up := relaytest.New(relaytest.WithChunks(3), relaytest.WithTokens(25, 15), relaytest.WithCacheTokens(5, 6))
	defer up.Close()
	r := post(t, nil, up.URL+"/v1/messages", `{"model":"claude-x","max_tokens":10,"stream":true,"messages":[]}`,
		"x-api-key", "k1", "anthropic-version", "2023-06-01")
	if r.err != nil || r.status != 200 {
		t.Fatalf("status %d err %v", r.status, r.err)
	}
	want := "message_start,content_block_start,ping,content_block_delta,content_block_delta,content_block_delta,content_block_stop,message_delta,message_stop"
	if got := names(r.events); got != want {
		t.Fatalf("events %s", got)
	}
	start := gjson.Parse(r.events[0].data)
	if start.Get("message.model").String() != "claude-x" || start.Get("message.usage.input_tokens").Int() != 25 ||
		start.Get("message.usage.cache_read_input_tokens").Int() != 5 || start.Get("message.usage.cache_creation_input_tokens").Int() != 6 {
		t.Errorf("message_start %s", r.events[0].data)
	}
	if gjson.Get(r.events[7].data, "usage.output_tokens").Int() != 15 || gjson.Get(r.events[7].data, "delta.stop_reason").String() != "end_turn" {
		t.Errorf("message_delta %s", r.events[7].data)
	}
	var text strings.Builder
	for _, e := range r.events[3:6] {
		text.WriteString(gjson.Get(e.data, "delta.text").String())
	}
	if text.String() != "Hello from the" {
		t.Errorf("text %q", text.String())
	}
}

func TestMessages_NonStreamAndWithoutUsage(t *testing.T) {
	up := relaytest.New()
	defer up.Close()
	r := post(t, nil, up.URL+"/v1/messages", `{"model":"claude-y","max_tokens":10,"messages":[]}`)
	j := gjson.ParseBytes(r.body)
	if r.status != 200 || j.Get("type").String() != "message" || j.Get("model").String() != "claude-y" ||
		j.Get("content.0.type").String() != "text" || j.Get("usage.output_tokens").Int() != 20 || r.header.Get("request-id") == "" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	up.Set(relaytest.WithUsage(false))
	r = post(t, nil, up.URL+"/v1/messages", `{"model":"claude-y","stream":true,"messages":[]}`)
	for _, e := range r.events {
		if strings.Contains(e.data, "usage") {
			t.Errorf("usage with usage off: %s", e.data)
		}
	}
}

func TestCountTokens_ReturnsPromptTokens(t *testing.T) {
	up := relaytest.New(relaytest.WithTokens(42, 1))
	defer up.Close()
	r := post(t, nil, up.URL+"/v1/messages/count_tokens", `{"model":"c","messages":[]}`)
	if r.status != 200 || gjson.GetBytes(r.body, "input_tokens").Int() != 42 {
		t.Fatalf("%d %s", r.status, r.body)
	}
}

func TestResponses_StreamEndsWithCompletedUsage(t *testing.T) {
	up := relaytest.New(relaytest.WithChunks(2))
	defer up.Close()
	r := post(t, nil, up.URL+"/v1/responses", `{"model":"gpt-r","input":"hi","stream":true}`)
	want := "response.created,response.in_progress,response.output_item.added,response.content_part.added," +
		"response.output_text.delta,response.output_text.delta,response.output_text.done,response.content_part.done," +
		"response.output_item.done,response.completed"
	if got := names(r.events); got != want {
		t.Fatalf("events %s", got)
	}
	for i, e := range r.events {
		j := gjson.Parse(e.data)
		if j.Get("type").String() != e.name || j.Get("sequence_number").Int() != int64(i) {
			t.Errorf("event %d %s", i, e.data)
		}
	}
	done := gjson.Parse(r.events[9].data)
	if done.Get("response.usage.input_tokens").Int() != 10 || done.Get("response.usage.output_tokens").Int() != 20 ||
		done.Get("response.model").String() != "gpt-r" || done.Get("response.output.0.content.0.text").String() != "Hello from" {
		t.Errorf("completed %s", r.events[9].data)
	}
	r = post(t, nil, up.URL+"/v1/responses", `{"model":"gpt-r","input":"hi"}`)
	if gjson.GetBytes(r.body, "status").String() != "completed" || gjson.GetBytes(r.body, "usage.total_tokens").Int() != 30 {
		t.Fatalf("non-stream %s", r.body)
	}
}

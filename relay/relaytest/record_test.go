package relaytest_test

import (
	"context"
	"testing"
	"time"

	"tollgate/relay/relaytest"
)

func TestRecord_KeepsWhatTheGatewayForwarded(t *testing.T) {
	up := relaytest.New()
	defer up.Close()
	post(t, nil, up.URL+"/v1/messages?beta=true", `{"model":"claude-z","stream":false,"metadata":{"user_id":"u1"}}`,
		"x-api-key", "sk-ant-1", "anthropic-version", "2023-06-01", "anthropic-beta", "prompt-caching-2024-07-31")
	post(t, nil, up.URL+"/v1/chat/completions", `{"model":"gpt","stream":true,"stream_options":{"include_usage":true}}`,
		"Authorization", "Bearer sk-openai-2")
	if up.Count() != 2 {
		t.Fatalf("count %d", up.Count())
	}
	reqs := up.Requests()
	a := reqs[0]
	if a.Seq != 1 || a.Method != "POST" || a.Path != "/v1/messages" || a.Query != "beta=true" || a.Key != "sk-ant-1" ||
		a.Model != "claude-z" || a.Stream || a.Header.Get("anthropic-version") != "2023-06-01" ||
		a.Header.Get("anthropic-beta") != "prompt-caching-2024-07-31" || a.Get("metadata.user_id").String() != "u1" {
		t.Errorf("anthropic request %+v", a)
	}
	o, ok := up.Last()
	if !ok || o.Key != "sk-openai-2" || !o.Stream || !o.Get("stream_options.include_usage").Bool() ||
		o.Header.Get("Authorization") != "Bearer sk-openai-2" {
		t.Errorf("openai request %+v", o)
	}
	if got := up.RequestsTo("/v1/messages"); len(got) != 1 {
		t.Errorf("RequestsTo %d", len(got))
	}
	up.ClearRequests()
	if up.Count() != 0 || len(up.Requests()) != 0 {
		t.Errorf("after clear: %d", up.Count())
	}
}

func TestRecord_WaitForRequests(t *testing.T) {
	up := relaytest.New()
	defer up.Close()
	go func() {
		time.Sleep(20 * time.Millisecond)
		post(t, nil, up.URL+"/v1/models", "")
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := up.WaitForRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	short, cancel2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel2()
	if err := up.WaitForRequests(short, 5); err == nil {
		t.Fatal("want deadline error")
	}
}

package adaptor_test

import (
	"context"
	"net/http"
	"testing"

	"tollgate/relay/adaptor"
	"tollgate/relay/adaptor/anthropic"
	"tollgate/relay/adaptor/openai"
)

func TestJoinURL_DoesNotDoubleV1(t *testing.T) {
	cases := map[[2]string]string{
		{"https://api.openai.com", "/v1/chat/completions"}:   "https://api.openai.com/v1/chat/completions",
		{"https://api.openai.com/", "/v1/chat/completions"}:  "https://api.openai.com/v1/chat/completions",
		{"https://proxy.example/v1", "/v1/chat/completions"}: "https://proxy.example/v1/chat/completions",
		{"https://proxy.example/v1/", "/v1/messages"}:        "https://proxy.example/v1/messages",
		{"https://proxy.example/openai", "/v1/embeddings"}:   "https://proxy.example/openai/v1/embeddings",
	}
	for in, want := range cases {
		if got := adaptor.JoinURL(in[0], in[1]); got != want {
			t.Errorf("JoinURL(%q, %q) = %q, want %q", in[0], in[1], got, want)
		}
	}
}

func TestNewRequest_SpeaksEachProtocolsAuth(t *testing.T) {
	ctx := context.Background()
	h := http.Header{}
	h.Add("anthropic-beta", "tools-2024")
	h.Add("anthropic-beta", "prompt-caching")
	call := &adaptor.Call{Endpoint: adaptor.Messages, Stream: true, Body: []byte(`{}`), Header: h, BaseURL: "http://u", Key: "k1"}
	req, err := anthropic.Adaptor{}.NewRequest(ctx, call)
	if err != nil {
		t.Fatal(err)
	}
	if req.Header.Get("x-api-key") != "k1" || req.Header.Get("Authorization") != "" || req.Header.Get("anthropic-version") != anthropic.DefaultVersion ||
		len(req.Header.Values("anthropic-beta")) != 2 || req.Header.Get("Accept") != "text/event-stream" || req.URL.String() != "http://u/v1/messages" {
		t.Fatalf("anthropic request: %s %v", req.URL, req.Header)
	}
	h.Set("anthropic-version", "2026-10-21")
	req, _ = anthropic.Adaptor{}.NewRequest(ctx, call)
	if req.Header.Get("anthropic-version") != "2026-10-21" {
		t.Fatal("the client's anthropic-version is forwarded unchanged")
	}
	oc := &adaptor.Call{Endpoint: adaptor.ChatCompletions, Body: []byte(`{}`), Header: http.Header{}, BaseURL: "http://u/v1", Key: "k2"}
	req, _ = openai.Adaptor{}.NewRequest(ctx, oc)
	if req.Header.Get("Authorization") != "Bearer k2" || req.Header.Get("Content-Type") != "application/json" || req.URL.String() != "http://u/v1/chat/completions" {
		t.Fatalf("openai request: %s %v", req.URL, req.Header)
	}
	if (openai.Adaptor{}).Supports(adaptor.Messages) || !(anthropic.Adaptor{}).Supports(adaptor.CountTokens) {
		t.Fatal("endpoint support")
	}
}

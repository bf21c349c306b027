package openai

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/tidwall/gjson"

	"tollgate/model"
	"tollgate/relay/adaptor"
)

func presetCall(t *testing.T, name, base string, body string) *http.Request {
	t.Helper()
	ad := Adaptor{ChatOnly: true}.Configure(model.ChannelConfig{Preset: name}, "m")
	req, err := ad.NewRequest(context.Background(), &adaptor.Call{Endpoint: adaptor.ChatCompletions, Stream: true, Body: []byte(body),
		Header: http.Header{}, BaseURL: base, Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestPresets_URLsAndBodies(t *testing.T) {
	body := `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[]}`
	cases := []struct{ preset, base, url string }{
		{"zhipu", "https://open.bigmodel.cn/api/paas/v4", "https://open.bigmodel.cn/api/paas/v4/chat/completions"},
		{"zhipu", "https://open.bigmodel.cn/api/paas/v4/", "https://open.bigmodel.cn/api/paas/v4/chat/completions"},
		{"deepseek", "https://api.deepseek.com", "https://api.deepseek.com/v1/chat/completions"},
		{"groq", "https://api.groq.com/openai", "https://api.groq.com/openai/v1/chat/completions"},
		{"qwen", "https://dashscope.aliyuncs.com/compatible-mode/v1", "https://dashscope.aliyuncs.com/compatible-mode/v1/chat/completions"},
	}
	for _, c := range cases {
		req := presetCall(t, c.preset, c.base, body)
		if req.URL.String() != c.url || req.Header.Get("Authorization") != "Bearer k" {
			t.Errorf("%s on %s: %s", c.preset, c.base, req.URL)
		}
	}
	sent, _ := io.ReadAll(presetCall(t, "mistral", "https://api.mistral.ai", body).Body)
	if gjson.GetBytes(sent, "stream_options").Exists() || !gjson.GetBytes(sent, "stream").Bool() {
		t.Errorf("mistral body %s: stream_options must go, stream stay", sent)
	}
	sent, _ = io.ReadAll(presetCall(t, "deepseek", "https://api.deepseek.com", body).Body)
	if string(sent) != body {
		t.Errorf("a preset without body quirks passes the body as it came: %s", sent)
	}
	for n, p := range Presets {
		if p.BaseURL == "" {
			t.Errorf("preset %s has no base URL", n)
		}
	}
}

func TestPresets_UsageVariantsAreMetered(t *testing.T) {
	cases := []struct {
		preset, event      string
		in, cached, output int64
	}{
		{"deepseek", `{"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":7,"prompt_cache_hit_tokens":60,"prompt_cache_miss_tokens":40}}`, 40, 60, 7},
		{"moonshot", `{"choices":[{"delta":{}}],"usage":{"prompt_tokens":50,"completion_tokens":5,"cached_tokens":20}}`, 30, 20, 5},
		{"groq", `{"choices":[{"delta":{},"finish_reason":"stop"}],"x_groq":{"usage":{"prompt_tokens":12,"completion_tokens":3}}}`, 12, 0, 3},
	}
	for _, c := range cases {
		m := Adaptor{ChatOnly: true}.Configure(model.ChannelConfig{Preset: c.preset}, "m").NewMeter(adaptor.ChatCompletions)
		m.Event("", []byte(c.event))
		u, ok := m.Usage()
		if !ok || u.Input != c.in || u.CacheRead != c.cached || u.Output != c.output {
			t.Errorf("%s: usage %+v (%v), want in %d cached %d out %d", c.preset, u, ok, c.in, c.cached, c.output)
		}
	}
	// Without the preset the same DeepSeek answer bills the whole prompt as uncached input.
	m := Adaptor{ChatOnly: true}.NewMeter(adaptor.ChatCompletions)
	m.Body([]byte(`{"usage":{"prompt_tokens":100,"completion_tokens":7,"prompt_cache_hit_tokens":60}}`))
	if u, _ := m.Usage(); u.CacheRead != 0 {
		t.Errorf("plain meter read a vendor field: %+v", u)
	}
	if _, err := (Adaptor{}).Configure(model.ChannelConfig{Preset: "zhipu"}, "").ModelsRequest(context.Background(), "https://x", "k"); !errors.Is(err, adaptor.ErrNoModelList) {
		t.Errorf("zhipu model list: %v", err)
	}
}

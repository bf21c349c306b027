// Package openai is the adaptor for OpenAI and OpenAI-compatible upstreams.
package openai

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"tollgate/relay/adaptor"
	"tollgate/relay/meter"
)

// Adaptor speaks the OpenAI API. ChatOnly is an OpenAI-compatible upstream (DeepSeek, vLLM, OpenRouter,
// one-api style resellers): chat completions, completions and embeddings, but no Responses API, so a
// Responses call reaching it is translated into chat completions.
type Adaptor struct{ ChatOnly bool }

// Supports implements adaptor.Adaptor: every OpenAI-shaped endpoint (the adaptor.Info table's paths under
// /v1 that are not Anthropic's); OpenAI itself has no rerank, compatible upstreams (Jina, SiliconFlow, vLLM)
// have no Responses API.
func (a Adaptor) Supports(e adaptor.Endpoint) bool {
	info := adaptor.Info(e)
	if info.Path == "" || info.Proto == adaptor.Anthropic || info.Proto == adaptor.Gemini {
		return false
	}
	switch e {
	case adaptor.Responses:
		return !a.ChatOnly
	case adaptor.Rerank:
		return a.ChatOnly
	}
	return true
}

// NewRequest implements adaptor.Adaptor.
func (Adaptor) NewRequest(ctx context.Context, c *adaptor.Call) (*http.Request, error) {
	req, err := adaptor.NewPost(ctx, adaptor.JoinURL(c.BaseURL, adaptor.Info(c.Endpoint).Path), c)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.Key)
	if v := c.Header.Get("OpenAI-Beta"); v != "" {
		req.Header.Set("OpenAI-Beta", v)
	}
	return req, nil
}

// ModelsRequest implements adaptor.Adaptor.
func (Adaptor) ModelsRequest(ctx context.Context, baseURL, key string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, adaptor.JoinURL(baseURL, "/v1/models"), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	return req, nil
}

// Protocol implements adaptor.Adaptor: other protocols are translated into chat completions.
func (Adaptor) Protocol() adaptor.Protocol { return adaptor.OpenAI }

// NewMeter implements adaptor.Adaptor.
func (Adaptor) NewMeter(e adaptor.Endpoint) adaptor.Meter { return meter.New(e) }

var doneData = []byte("[DONE]")

// Terminal implements adaptor.Adaptor: chat and completions streams end with data: [DONE]; Responses
// streams with response.completed, .incomplete or .failed (or a [DONE] some compatible upstreams add).
func (Adaptor) Terminal(e adaptor.Endpoint, _ string, data []byte) bool {
	if e == adaptor.Responses {
		switch gjson.GetBytes(data, "type").String() {
		case "response.completed", "response.incomplete", "response.failed":
			return true
		}
	}
	return bytes.Equal(data, doneData)
}

// ParseModels implements adaptor.Adaptor: {"data":[{"id":...}]}.
func (Adaptor) ParseModels(body []byte) []string { return adaptor.DataIDs(body) }

// TestCall implements adaptor.Adaptor: one tiny call on the endpoint the model's name says it serves —
// moderations, rerank, embeddings, speech (four characters) — else a chat completion. Image and transcription
// models have no call cheap enough to test them by; a channel of those names a chat model as its test model.
func (a Adaptor) TestCall(model string) (adaptor.Endpoint, []byte) {
	m, name := strconv.Quote(model), strings.ToLower(model)
	switch {
	case strings.Contains(name, "moderation"):
		return adaptor.Moderations, []byte(`{"model":` + m + `,"input":"ping"}`)
	case strings.Contains(name, "rerank") && a.Supports(adaptor.Rerank):
		return adaptor.Rerank, []byte(`{"model":` + m + `,"query":"ping","documents":["ping"],"top_n":1}`)
	case strings.Contains(name, "embedding"):
		return adaptor.Embeddings, []byte(`{"model":` + m + `,"input":"ping"}`)
	case strings.HasPrefix(name, "tts-") || strings.Contains(name, "-tts"):
		return adaptor.AudioSpeech, []byte(`{"model":` + m + `,"input":"ping","voice":"alloy"}`)
	}
	return adaptor.ChatCompletions, []byte(`{"model":` + m + `,"max_tokens":8,"messages":[{"role":"user","content":"ping"}]}`)
}

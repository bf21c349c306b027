// Package gemini is the adaptor for Google AI Studio (Gemini API) upstreams:
// {base_url}/v1beta/models/{model}:generateContent, :streamGenerateContent?alt=sse, :countTokens and
// :embedContent, authenticated by x-goog-api-key.
package gemini

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/tidwall/gjson"

	"tollgate/relay/adaptor"
	"tollgate/relay/meter"
)

// Adaptor speaks the Gemini API.
type Adaptor struct{}

// methods are the Gemini methods of each endpoint it serves (streams ask for alt=sse).
var methods = map[adaptor.Endpoint]string{
	adaptor.GenerateContent:   "generateContent",
	adaptor.GeminiCountTokens: "countTokens",
	adaptor.EmbedContent:      "embedContent",
}

// Supports implements adaptor.Adaptor.
func (Adaptor) Supports(e adaptor.Endpoint) bool { _, ok := methods[e]; return ok }

// base is the API root: the admin's base URL without a trailing "/v1beta" they may have put on it.
func base(baseURL string) string {
	return strings.TrimSuffix(strings.TrimRight(baseURL, "/"), "/v1beta")
}

// NewRequest implements adaptor.Adaptor: the model and stream-ness travel in the URL; streams always ask for
// SSE (alt=sse), whatever the caller asked for (the relay writes a JSON array itself when it must).
func (Adaptor) NewRequest(ctx context.Context, c *adaptor.Call) (*http.Request, error) {
	method := methods[c.Endpoint]
	if c.Endpoint == adaptor.GenerateContent && c.Stream {
		method = "streamGenerateContent"
	}
	u := base(c.BaseURL) + "/v1beta/models/" + url.PathEscape(c.UpstreamModel) + ":" + method
	if method == "streamGenerateContent" {
		u += "?alt=sse"
	}
	req, err := adaptor.PostJSON(ctx, u, c.Body, c.Stream)
	if err != nil {
		return nil, err
	}
	req.Header.Set("x-goog-api-key", c.Key)
	return req, nil
}

// ModelsRequest implements adaptor.Adaptor: GET /v1beta/models (the first 1000).
func (Adaptor) ModelsRequest(ctx context.Context, baseURL, key string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base(baseURL)+"/v1beta/models?pageSize=1000", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("x-goog-api-key", key)
	return req, nil
}

// Protocol implements adaptor.Adaptor: other protocols are translated into generateContent.
func (Adaptor) Protocol() adaptor.Protocol { return adaptor.Gemini }

// NewMeter implements adaptor.Adaptor.
func (Adaptor) NewMeter(e adaptor.Endpoint) adaptor.Meter { return meter.New(e) }

// Terminal implements adaptor.Adaptor. A Gemini stream has no closing event: the chunk that carries a
// candidate's finishReason (with the final usageMetadata) is the last one.
func (Adaptor) Terminal(_ adaptor.Endpoint, _ string, data []byte) bool {
	return gjson.GetBytes(data, "candidates.0.finishReason").String() != ""
}

// ParseModels implements adaptor.Adaptor: {"models":[{"name":"models/gemini-2.5-flash",...}]}.
func (Adaptor) ParseModels(body []byte) []string {
	out := []string{}
	for _, n := range gjson.GetBytes(body, "models.#.name").Array() {
		out = append(out, strings.TrimPrefix(n.String(), "models/"))
	}
	return out
}

// TestCall implements adaptor.Adaptor: one tiny generateContent (the model travels in the URL).
func (Adaptor) TestCall(string) (adaptor.Endpoint, []byte) {
	return adaptor.GenerateContent, []byte(`{"contents":[{"role":"user","parts":[{"text":"ping"}]}],"generationConfig":{"maxOutputTokens":8}}`)
}

// Package openai is the adaptor for OpenAI and OpenAI-compatible upstreams.
package openai

import (
	"context"
	"net/http"

	"tollgate/relay/adaptor"
)

// Adaptor speaks the OpenAI API.
type Adaptor struct{}

var paths = map[adaptor.Endpoint]string{
	adaptor.ChatCompletions: "/v1/chat/completions",
	adaptor.Completions:     "/v1/completions",
	adaptor.Embeddings:      "/v1/embeddings",
	adaptor.Responses:       "/v1/responses",
}

// Supports implements adaptor.Adaptor.
func (Adaptor) Supports(e adaptor.Endpoint) bool { _, ok := paths[e]; return ok }

// NewRequest implements adaptor.Adaptor.
func (Adaptor) NewRequest(ctx context.Context, c *adaptor.Call) (*http.Request, error) {
	req, err := adaptor.PostJSON(ctx, adaptor.JoinURL(c.BaseURL, paths[c.Endpoint]), c.Body, c.Stream)
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

// Package anthropic is the adaptor for Anthropic Messages upstreams.
package anthropic

import (
	"context"
	"net/http"
	"strconv"

	"github.com/tidwall/gjson"

	"tollgate/relay/adaptor"
	"tollgate/relay/meter"
)

// DefaultVersion is sent when the client sent no anthropic-version header.
const DefaultVersion = "2023-06-01"

// Adaptor speaks the Anthropic Messages API.
type Adaptor struct{}

var paths = map[adaptor.Endpoint]string{
	adaptor.Messages:    "/v1/messages",
	adaptor.CountTokens: "/v1/messages/count_tokens",
}

// Supports implements adaptor.Adaptor.
func (Adaptor) Supports(e adaptor.Endpoint) bool { _, ok := paths[e]; return ok }

// NewRequest implements adaptor.Adaptor. anthropic-version and anthropic-beta are forwarded unchanged
// (Claude Code depends on its beta headers reaching the upstream).
func (Adaptor) NewRequest(ctx context.Context, c *adaptor.Call) (*http.Request, error) {
	req, err := adaptor.PostJSON(ctx, adaptor.JoinURL(c.BaseURL, paths[c.Endpoint]), c.Body, c.Stream)
	if err != nil {
		return nil, err
	}
	req.Header.Set("x-api-key", c.Key)
	version := c.Header.Get("anthropic-version")
	if version == "" {
		version = DefaultVersion
	}
	req.Header.Set("anthropic-version", version)
	for _, b := range c.Header.Values("anthropic-beta") {
		req.Header.Add("anthropic-beta", b)
	}
	return req, nil
}

// ModelsRequest implements adaptor.Adaptor.
func (Adaptor) ModelsRequest(ctx context.Context, baseURL, key string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, adaptor.JoinURL(baseURL, "/v1/models"), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("x-api-key", key)
	req.Header.Set("anthropic-version", DefaultVersion)
	return req, nil
}

// Protocol implements adaptor.Adaptor: other protocols are translated into Messages.
func (Adaptor) Protocol() adaptor.Protocol { return adaptor.Anthropic }

// NewMeter implements adaptor.Adaptor.
func (Adaptor) NewMeter(e adaptor.Endpoint) adaptor.Meter { return meter.New(e) }

// Terminal implements adaptor.Adaptor: a Messages stream ends with message_stop.
func (Adaptor) Terminal(_ adaptor.Endpoint, name string, data []byte) bool {
	return name == "message_stop" || gjson.GetBytes(data, "type").String() == "message_stop"
}

// ParseModels implements adaptor.Adaptor: {"data":[{"id":...}]}.
func (Adaptor) ParseModels(body []byte) []string { return adaptor.DataIDs(body) }

// TestCall implements adaptor.Adaptor: one tiny message.
func (Adaptor) TestCall(model string) (adaptor.Endpoint, []byte) {
	return adaptor.Messages, []byte(`{"model":` + strconv.Quote(model) + `,"max_tokens":8,"messages":[{"role":"user","content":"ping"}]}`)
}

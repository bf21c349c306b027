// Package azure is the adaptor for Azure OpenAI. It wraps the OpenAI adaptor: whatever request that builds for
// an endpoint ({base}/v1/{suffix}), Azure sends to {base}/openai/deployments/{deployment}/{suffix}?api-version={v}
// with the key in an api-key header, so every OpenAI endpoint the relay learns (images, audio, ...) works on
// Azure without this package knowing it. The Responses API is the exception: Azure serves it only on its v1
// surface, {base}/openai/v1/responses, with the deployment as the body's model.
package azure

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/tidwall/sjson"

	"tollgate/model"
	"tollgate/relay/adaptor"
	"tollgate/relay/adaptor/openai"
)

// Adaptor is the Azure OpenAI family; Configure gives the adaptor of one channel and model.
type Adaptor struct{ openai.Adaptor }

// Configure implements adaptor.Configurable.
func (a Adaptor) Configure(cfg model.ChannelConfig, upstreamModel string) adaptor.Adaptor {
	c := &channel{Adaptor: a.Adaptor, deployment: upstreamModel}
	if az := cfg.Azure; az != nil {
		c.version = az.APIVersion
		if d := az.Deployments[upstreamModel]; d != "" {
			c.deployment = d
		}
	}
	return c
}

// channel is Azure for one resource's api-version and one model's deployment.
type channel struct {
	openai.Adaptor
	version, deployment string
}

// NewRequest implements adaptor.Adaptor.
func (c *channel) NewRequest(ctx context.Context, call *adaptor.Call) (*http.Request, error) {
	inner := *call
	inner.BaseURL = "" // the OpenAI adaptor writes its path only: /v1/{suffix}
	if call.Endpoint == adaptor.Responses {
		b, err := sjson.SetBytes(call.Body, "model", c.deployment)
		if err != nil {
			return nil, err
		}
		inner.Body = b
	}
	req, err := c.Adaptor.NewRequest(ctx, &inner)
	if err != nil {
		return nil, err
	}
	suffix := strings.TrimPrefix(req.URL.Path, "/v1/")
	q := req.URL.Query()
	path := "/openai/v1/" + suffix
	if call.Endpoint != adaptor.Responses {
		path = "/openai/deployments/" + url.PathEscape(c.deployment) + "/" + suffix
		q.Set("api-version", c.version)
	}
	u, err := url.Parse(base(call.BaseURL) + path)
	if err != nil {
		return nil, err
	}
	u.RawQuery = q.Encode()
	req.URL, req.Host = u, u.Host
	req.Header.Del("Authorization")
	req.Header.Set("api-key", call.Key)
	return req, nil
}

// base is the resource endpoint without a trailing "/openai" the admin may have put on it.
func base(u string) string { return strings.TrimSuffix(strings.TrimRight(u, "/"), "/openai") }

// ModelsRequest implements adaptor.Adaptor: the models the resource can deploy.
func (c *channel) ModelsRequest(ctx context.Context, baseURL, key string) (*http.Request, error) {
	u := base(baseURL) + "/openai/models?api-version=" + url.QueryEscape(c.version)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("api-key", key)
	return req, nil
}

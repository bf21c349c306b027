// Package vertex is the adaptor for Google Vertex AI: Gemini models through
// publishers/google/models/{m}:generateContent|streamGenerateContent?alt=sse|countTokens and Anthropic models
// through publishers/anthropic/models/{m}:rawPredict|streamRawPredict (the Messages body with
// anthropic_version "vertex-2023-10-16" and no model), under
// {base}/v1/projects/{project}/locations/{region}/, authenticated by an OAuth token from the channel key's
// service account (token.go).
package vertex

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/tidwall/sjson"

	"tollgate/model"
	"tollgate/relay/adaptor"
	"tollgate/relay/adaptor/anthropic"
	"tollgate/relay/adaptor/gemini"
)

// AnthropicVersion is the anthropic_version Vertex requires in the body.
const AnthropicVersion = "vertex-2023-10-16"

// Publishers.
const (
	Google    = "google"
	Anthropic = "anthropic"
)

// Adaptor is the Vertex family; Configure gives the adaptor of one channel and model (the relay always asks;
// unconfigured it is a Gemini model of no project).
type Adaptor struct{ *gem }

// New is the Vertex family authenticating with tokens.
func New(tokens *Tokens) Adaptor { return Adaptor{&gem{where: where{tokens: tokens}}} }

// PublisherOf is the publisher serving model on a channel: the configured one, else Anthropic for claude-*
// models and Google for the rest.
func PublisherOf(cfg *model.VertexConfig, m string) string {
	if cfg != nil {
		if p := cfg.Publishers[m]; p != "" {
			return p
		}
	}
	if strings.HasPrefix(m, "claude") {
		return Anthropic
	}
	return Google
}

// Configure implements adaptor.Configurable.
func (a Adaptor) Configure(cfg model.ChannelConfig, upstreamModel string) adaptor.Adaptor {
	v := cfg.Vertex
	if v == nil {
		v = &model.VertexConfig{}
	}
	loc := where{tokens: a.tokens, project: v.Project, region: v.Region}
	if PublisherOf(v, upstreamModel) == Anthropic {
		return &claude{where: loc}
	}
	return &gem{where: loc}
}

// where is a channel's project and region, and the token cache its requests authenticate with.
type where struct {
	tokens          *Tokens
	project, region string
}

// url is {base}/v1/projects/{p}/locations/{r}/publishers/{pub}/models/{m}:{method}; the base defaults to the
// region's endpoint (aiplatform.googleapis.com for "global").
func (w where) url(base, publisher, m, method string) string {
	if base == "" {
		base = "https://" + w.region + "-aiplatform.googleapis.com"
		if w.region == "global" {
			base = "https://aiplatform.googleapis.com"
		}
	}
	return strings.TrimRight(base, "/") + "/v1/projects/" + url.PathEscape(w.project) + "/locations/" + url.PathEscape(w.region) +
		"/publishers/" + publisher + "/models/" + url.PathEscape(m) + ":" + method
}

// post builds the authenticated POST.
func (w where) post(ctx context.Context, c *adaptor.Call, u string, body []byte) (*http.Request, error) {
	tok, err := w.tokens.Token(ctx, c.Key)
	if err != nil {
		return nil, err
	}
	req, err := adaptor.PostJSON(ctx, u, body, c.Stream)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	return req, nil
}

// ModelsRequest implements adaptor.Adaptor: a project has no list of the publisher models it may call.
func (where) ModelsRequest(context.Context, string, string) (*http.Request, error) {
	return nil, adaptor.ErrNoModelList
}

// gem is a Gemini model on Vertex: the Gemini API's bodies, answers and streams.
type gem struct {
	gemini.Adaptor
	where
}

var gemMethods = map[adaptor.Endpoint]string{adaptor.GenerateContent: "generateContent", adaptor.GeminiCountTokens: "countTokens"}

// Supports implements adaptor.Adaptor.
func (*gem) Supports(e adaptor.Endpoint) bool { _, ok := gemMethods[e]; return ok }

// NewRequest implements adaptor.Adaptor.
func (g *gem) NewRequest(ctx context.Context, c *adaptor.Call) (*http.Request, error) {
	method := gemMethods[c.Endpoint]
	if c.Endpoint == adaptor.GenerateContent && c.Stream {
		method = "streamGenerateContent"
	}
	u := g.url(c.BaseURL, Google, c.UpstreamModel, method)
	if method == "streamGenerateContent" {
		u += "?alt=sse"
	}
	return g.post(ctx, c, u, c.Body)
}

// ModelsRequest implements adaptor.Adaptor.
func (g *gem) ModelsRequest(ctx context.Context, base, key string) (*http.Request, error) {
	return g.where.ModelsRequest(ctx, base, key)
}

// claude is an Anthropic model on Vertex: the Messages API's bodies, answers and streams.
type claude struct {
	anthropic.Adaptor
	where
}

// Supports implements adaptor.Adaptor: Messages (token counts are counted locally).
func (*claude) Supports(e adaptor.Endpoint) bool { return e == adaptor.Messages }

// NewRequest implements adaptor.Adaptor: the model travels in the URL, the version in the body.
func (a *claude) NewRequest(ctx context.Context, c *adaptor.Call) (*http.Request, error) {
	body, err := sjson.DeleteBytes(c.Body, "model")
	if err != nil {
		return nil, err
	}
	if body, err = sjson.SetBytes(body, "anthropic_version", AnthropicVersion); err != nil {
		return nil, err
	}
	method := "rawPredict"
	if c.Stream {
		method = "streamRawPredict"
	}
	req, err := a.post(ctx, c, a.url(c.BaseURL, Anthropic, c.UpstreamModel, method), body)
	if err != nil {
		return nil, err
	}
	for _, b := range c.Header.Values("anthropic-beta") {
		req.Header.Add("anthropic-beta", b)
	}
	return req, nil
}

// ModelsRequest implements adaptor.Adaptor.
func (a *claude) ModelsRequest(ctx context.Context, base, key string) (*http.Request, error) {
	return a.where.ModelsRequest(ctx, base, key)
}

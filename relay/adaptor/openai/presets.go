package openai

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/tidwall/sjson"

	"tollgate/model"
	"tollgate/relay/adaptor"
	"tollgate/relay/meter"
)

// Preset is an OpenAI-compatible vendor: where it is served, where its model list is, and the ways its API
// differs from OpenAI's that the adaptor smooths over. Reasoning text (reasoning_content, or OpenRouter's
// reasoning) needs no entry: relay/convert reads both wherever a compatible upstream puts them.
type Preset struct {
	// BaseURL is the default base URL the console fills in.
	BaseURL string
	// Root says the base URL is already the API root (paths go without their /v1: Zhipu's /api/paas/v4).
	Root bool
	// NoModels: the vendor has no model list endpoint.
	NoModels bool
	// CachedAt are usage fields with the cached part of the prompt beside the standard one (meter.Meter.CachedAt).
	CachedAt []string
	// UsageAt is where streamed usage sits when not at the top level (meter.Meter.UsageAt).
	UsageAt string
	// NoStreamOptions: the vendor refuses stream_options (usage comes in the last chunk anyway).
	NoStreamOptions bool
}

// Presets is the table of OpenAI-compatible vendors, by the name a channel's config.preset gives.
var Presets = map[string]Preset{
	"deepseek":    {BaseURL: "https://api.deepseek.com", CachedAt: []string{"prompt_cache_hit_tokens"}},
	"openrouter":  {BaseURL: "https://openrouter.ai/api"},
	"siliconflow": {BaseURL: "https://api.siliconflow.cn"},
	"moonshot":    {BaseURL: "https://api.moonshot.cn", CachedAt: []string{"cached_tokens"}},
	"zhipu":       {BaseURL: "https://open.bigmodel.cn/api/paas/v4", Root: true, NoModels: true},
	"qwen":        {BaseURL: "https://dashscope.aliyuncs.com/compatible-mode"},
	"xai":         {BaseURL: "https://api.x.ai"},
	"mistral":     {BaseURL: "https://api.mistral.ai", NoStreamOptions: true},
	"groq":        {BaseURL: "https://api.groq.com/openai", UsageAt: "x_groq.usage"},
	"ollama":      {BaseURL: "http://127.0.0.1:11434"},
}

// PresetURLs is each preset's default base URL (the channel service fills it in when none is given).
func PresetURLs() map[string]string {
	out := make(map[string]string, len(Presets))
	for n, p := range Presets {
		out[n] = p.BaseURL
	}
	return out
}

// Configure implements adaptor.Configurable: a channel with a preset gets that vendor's quirks.
func (a Adaptor) Configure(cfg model.ChannelConfig, _ string) adaptor.Adaptor {
	p, ok := Presets[cfg.Preset]
	if !ok {
		return a
	}
	return &preset{Adaptor: a, p: p}
}

// preset is the OpenAI adaptor with one vendor's quirks.
type preset struct {
	Adaptor
	p Preset
}

// NewRequest implements adaptor.Adaptor.
func (p *preset) NewRequest(ctx context.Context, c *adaptor.Call) (*http.Request, error) {
	inner := *c
	if p.p.NoStreamOptions {
		b, err := sjson.DeleteBytes(c.Body, "stream_options")
		if err != nil {
			return nil, err
		}
		inner.Body = b
	}
	if !p.p.Root {
		return p.Adaptor.NewRequest(ctx, &inner)
	}
	inner.BaseURL = "" // the path only: /v1/{suffix}, which goes under the vendor's root without its /v1
	req, err := p.Adaptor.NewRequest(ctx, &inner)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(strings.TrimRight(c.BaseURL, "/") + strings.TrimPrefix(req.URL.Path, "/v1"))
	if err != nil {
		return nil, err
	}
	u.RawQuery = req.URL.RawQuery
	req.URL, req.Host = u, u.Host
	return req, nil
}

// ModelsRequest implements adaptor.Adaptor.
func (p *preset) ModelsRequest(ctx context.Context, baseURL, key string) (*http.Request, error) {
	if p.p.NoModels {
		return nil, adaptor.ErrNoModelList
	}
	return p.Adaptor.ModelsRequest(ctx, baseURL, key)
}

// NewMeter implements adaptor.Adaptor.
func (p *preset) NewMeter(e adaptor.Endpoint) adaptor.Meter {
	m := meter.New(e)
	m.CachedAt, m.UsageAt = p.p.CachedAt, p.p.UsageAt
	return m
}

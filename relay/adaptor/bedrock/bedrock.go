// Package bedrock is the adaptor for Anthropic models on AWS Bedrock: the Messages body (with
// anthropic_version "bedrock-2023-05-31" and no model) POSTed to {base}/model/{modelId}/invoke or
// /invoke-with-response-stream, signed with SigV4 (service bedrock, the channel's region); streams come back
// in the AWS event-stream framing, whose chunks carry Anthropic's own SSE events (stream.go).
package bedrock

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tidwall/sjson"

	"tollgate/model"
	"tollgate/relay/adaptor"
	"tollgate/relay/adaptor/anthropic"
	"tollgate/service/cloudkey"
)

// Version is the anthropic_version Bedrock requires in the body.
const Version = "bedrock-2023-05-31"

// Adaptor is the Bedrock family; Configure gives the adaptor of one channel and model.
type Adaptor struct {
	anthropic.Adaptor
	// Now is the signing clock (nil: time.Now).
	Now func() time.Time
}

// Configure implements adaptor.Configurable.
func (a Adaptor) Configure(cfg model.ChannelConfig, upstreamModel string) adaptor.Adaptor {
	c := &channel{Adaptor: a, model: upstreamModel}
	if cfg.Bedrock != nil {
		c.region = cfg.Bedrock.Region
		if id := cfg.Bedrock.ModelIDs[upstreamModel]; id != "" {
			c.model = id
		}
	}
	return c
}

// channel is Bedrock for one channel's region and one model id.
type channel struct {
	Adaptor
	region, model string
}

// Supports implements adaptor.Adaptor: Messages only (token counts are counted locally).
func (*channel) Supports(e adaptor.Endpoint) bool { return e == adaptor.Messages }

// baseURL is the admin's base URL, or the region's runtime endpoint.
func (c *channel) baseURL(base string) string {
	if base == "" {
		return "https://bedrock-runtime." + c.region + ".amazonaws.com"
	}
	return strings.TrimRight(base, "/")
}

// NewRequest implements adaptor.Adaptor: the body loses model and stream (both travel in the URL), gains
// Bedrock's anthropic_version and, from the client's anthropic-beta headers, anthropic_beta.
func (c *channel) NewRequest(ctx context.Context, call *adaptor.Call) (*http.Request, error) {
	creds, err := cloudkey.ParseAWS(call.Key)
	if err != nil {
		return nil, &adaptor.CredentialError{Err: err}
	}
	if c.region == "" {
		return nil, errors.New("bedrock channel without a region")
	}
	body := call.Body
	for _, k := range []string{"model", "stream"} {
		if body, err = sjson.DeleteBytes(body, k); err != nil {
			return nil, err
		}
	}
	if body, err = sjson.SetBytes(body, "anthropic_version", Version); err != nil {
		return nil, err
	}
	if betas := call.Header.Values("anthropic-beta"); len(betas) > 0 {
		var list []string
		for _, b := range betas {
			for _, v := range strings.Split(b, ",") {
				if v = strings.TrimSpace(v); v != "" {
					list = append(list, v)
				}
			}
		}
		raw, _ := json.Marshal(list)
		if body, err = sjson.SetRawBytes(body, "anthropic_beta", raw); err != nil {
			return nil, err
		}
	}
	action := "/invoke"
	if call.Stream {
		action = "/invoke-with-response-stream"
	}
	req, err := adaptor.PostJSON(ctx, c.baseURL(call.BaseURL)+"/model/"+escapeID(c.model)+action, body, false)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if call.Stream {
		req.Header.Set("Accept", contentType)
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	sign(req, body, creds, c.region, now())
	return req, nil
}

// escapeID escapes a model id for the path as the AWS SDKs do: ":" (in every versioned id) as %3A too.
func escapeID(id string) string { return strings.ReplaceAll(url.PathEscape(id), ":", "%3A") }

// ModelsRequest implements adaptor.Adaptor: the runtime endpoint has no model list.
func (*channel) ModelsRequest(context.Context, string, string) (*http.Request, error) {
	return nil, adaptor.ErrNoModelList
}

// Unframe implements adaptor.Unframer: an event-stream answer is read as Anthropic SSE.
func (*channel) Unframe(resp *http.Response) {
	if strings.HasPrefix(resp.Header.Get("Content-Type"), contentType) {
		resp.Body = newSSEReader(resp.Body)
		resp.Header.Set("Content-Type", "text/event-stream")
	}
}

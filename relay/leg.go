package relay

import (
	"errors"
	"net/http"
	"slices"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"tollgate/relay/adaptor"
	"tollgate/relay/convert"
	"tollgate/service/channel"
)

// leg is what one attempt sends to one channel: the upstream's endpoint and protocol, the body, and — when
// the caller speaks another protocol — the two codecs that translate the request there and the answer back.
// A same-protocol leg passes the caller's bytes through (model mapping and overrides only), as before.
type leg struct {
	ep    adaptor.Endpoint
	proto adaptor.Protocol
	body  []byte // before the channel's body overrides (send applies them)
	// conv: translated. up reads the upstream's answers, client writes the caller's.
	conv       bool
	up, client convert.Codec
	// local: the upstream family has no endpoint for this call (counting tokens on OpenAI): the relay
	// answers it itself from its tokenizer.
	local bool
	// dropped: the caller's fields the translation left out (convert.Request.Dropped), named to the caller
	// in the X-Tollgate-Dropped header of the answer.
	dropped []string
}

// serves says whether a channel of adaptor ad can serve the request: natively, or translated when
// cross-protocol routing is on and the call's kind translates (generation; token counting, which falls back to
// a local count).
func (r *Relay) serves(ad adaptor.Adaptor, rq *request) bool {
	if ad.Supports(rq.ep) && !rq.forceConv {
		return true
	}
	if !r.Settings.Get().CrossProtocol && !rq.forceConv {
		return false
	}
	switch rq.kind {
	case adaptor.KindGenerate:
		_, ok := adaptor.EndpointFor(adaptor.KindGenerate, ad.Protocol())
		return ok
	case adaptor.KindCount:
		return true
	}
	return false
}

// native says whether ad serves the request in the caller's own protocol (no translation).
func native(ad adaptor.Adaptor, rq *request) bool { return ad.Supports(rq.ep) && !rq.forceConv }

// legFor plans the attempt on ch. An error is the caller's request that cannot be sent to this channel
// faithfully (a field its protocol cannot express, a body the codec cannot read): the channel is skipped,
// and the caller gets the 400 if no other channel serves it.
func (r *Relay) legFor(rq *request, ch *channel.Channel) (*leg, *relayError) {
	ad, _ := r.adaptorOf(ch, rq.model)
	upstreamModel := ch.UpstreamModel(rq.model)
	if native(ad, rq) {
		if rq.media.upload != nil {
			return &leg{ep: rq.ep, proto: rq.proto}, nil // the upload is streamed from its spool (send)
		}
		body, err := passBody(rq, upstreamModel)
		if err != nil {
			return nil, newErr(http.StatusBadRequest, "invalid_json")
		}
		return &leg{ep: rq.ep, proto: rq.proto, body: body}, nil
	}
	p := ad.Protocol()
	ep, ok := adaptor.EndpointFor(rq.kind, p)
	if !ok || !ad.Supports(ep) { // e.g. counting tokens on a family without a counting endpoint
		return &leg{ep: rq.ep, proto: p, local: true}, nil
	}
	lg := &leg{ep: ep, proto: p, conv: true}
	var found bool
	if lg.up, found = convert.For(p); !found {
		return nil, newErr(http.StatusBadRequest, "untranslatable", rq.proto.String(), p.String())
	}
	if lg.client, found = convert.For(rq.proto); !found {
		return nil, newErr(http.StatusBadRequest, "untranslatable", rq.proto.String(), p.String())
	}
	if ad.Supports(rq.ep) {
		// A Gemini stream asked for as a JSON array from a Gemini channel: the request goes as the caller
		// wrote it (safety settings, cached content and all); only the answer is re-encoded. The encoder
		// reads the parsed request for the caller's thinking choice only, and works without it.
		_, _ = rq.canonical(lg.client)
		body, err := passBody(rq, upstreamModel)
		if err != nil {
			return nil, newErr(http.StatusBadRequest, "invalid_json")
		}
		lg.ep, lg.body = rq.ep, body
		return lg, nil
	}
	canon, rerr := rq.canonical(lg.client)
	if rerr != nil {
		return nil, rerr
	}
	if canon.N > 1 {
		// The canonical answer has one choice: a translated n > 1 would silently return one.
		return nil, newErr(http.StatusBadRequest, "unsupported_field", "n", p.String(), "only one choice is translated")
	}
	req := *canon
	req.Model = upstreamModel
	req.Dropped = slices.Clone(canon.Dropped) // each leg's own list: a builder appends to it
	body, err := lg.up.BuildRequest(&req)
	if err != nil {
		return nil, conversionError(err)
	}
	lg.dropped = req.Dropped
	if rq.kind == adaptor.KindCount {
		body = countBody(p, body, upstreamModel)
	}
	lg.body = body
	return lg, nil
}

// passBody is the caller's body for a same-protocol upstream: the mapped model and, for OpenAI streams, the
// usage request. Untouched bodies are passed as they came (no JSON round trip). Gemini bodies carry no model
// (it is in the URL).
func passBody(rq *request, upstreamModel string) ([]byte, error) {
	body := rq.body
	var err error
	if upstreamModel != rq.model && rq.proto != adaptor.Gemini {
		if body, err = sjson.SetBytes(body, "model", upstreamModel); err != nil {
			return nil, err
		}
	}
	if rq.injectUsage {
		if body, err = sjson.SetBytes(body, "stream_options.include_usage", true); err != nil {
			return nil, err
		}
	}
	return body, nil
}

// canonical parses the caller's body once, on the first attempt that needs a translation.
func (rq *request) canonical(client convert.Codec) (*convert.Request, *relayError) {
	if rq.canon != nil || rq.canonErr != nil {
		return rq.canon, rq.canonErr
	}
	var (
		c   *convert.Request
		err error
	)
	body := rq.body
	if inner := gjson.GetBytes(body, "generateContentRequest"); rq.kind == adaptor.KindCount && inner.IsObject() {
		body = []byte(inner.Raw) // Gemini countTokens may wrap a whole generate request
	}
	c, err = client.ParseRequest(body)
	if err != nil {
		// What the caller's own codec cannot carry fails on every translated channel alike: no target to name.
		var u *convert.Unsupported
		if errors.As(err, &u) {
			rq.canonErr = newErr(http.StatusBadRequest, "unsupported_here", u.Field, u.Why)
		} else {
			rq.canonErr = conversionError(err)
		}
		return nil, rq.canonErr
	}
	if c.Model == "" {
		c.Model = rq.model
	}
	c.Stream = rq.stream
	rq.canon = c
	return c, nil
}

// conversionError is the 400 for a request that cannot be translated: the field, and why.
func conversionError(err error) *relayError {
	var u *convert.Unsupported
	var inv *convert.Invalid
	switch {
	case errors.As(err, &u):
		return newErr(http.StatusBadRequest, "unsupported_field", u.Field, u.Target.String(), u.Why)
	case errors.As(err, &inv):
		return newErr(http.StatusBadRequest, "validation_failed", inv.Field, inv.Why)
	}
	return newErr(http.StatusBadRequest, "validation_failed", "body", err.Error())
}

// countBody turns a translated generation request into the counting endpoint's body: Anthropic's
// count_tokens takes the Messages fields without max_tokens; Gemini's countTokens takes the generate request
// under generateContentRequest (with its model).
func countBody(p adaptor.Protocol, body []byte, upstreamModel string) []byte {
	switch p {
	case adaptor.Anthropic:
		for _, k := range []string{"max_tokens", "stream", "temperature", "top_p", "top_k", "stop_sequences", "metadata"} {
			body, _ = sjson.DeleteBytes(body, k)
		}
	case adaptor.Gemini:
		b, err := sjson.SetBytes(body, "model", "models/"+upstreamModel)
		if err == nil {
			if out, err := sjson.SetRawBytes([]byte(`{}`), "generateContentRequest", b); err == nil {
				return out
			}
		}
	}
	return body
}

package relay

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"github.com/tidwall/gjson"

	"tollgate/i18n"
	"tollgate/relay/adaptor"
	"tollgate/relay/convert"
)

// translation carries one translated stream: the upstream's decoder and the caller's encoder (relay/convert).
type translation struct {
	dec   convert.Decoder
	enc   convert.Encoder
	array bool // a Gemini stream written as one JSON array (the caller did not ask for alt=sse)
}

func newTranslation(rq *request, lg *leg) *translation {
	t := &translation{dec: lg.up.NewDecoder()}
	if rq.proto == adaptor.Gemini && rq.forceConv {
		t.array = true
		t.enc = convert.NewGeminiArrayEncoder(rq.canon)
	} else {
		t.enc = lg.client.NewEncoder(rq.canon)
	}
	return t
}

// contentType is what the caller's stream is sent as (t nil: a stream passed through).
func (t *translation) contentType() string {
	if t != nil && t.array {
		return "application/json"
	}
	return "text/event-stream"
}

// event translates one upstream event into the caller's bytes, appended to dst (none for events that say
// nothing to the caller). An error is an upstream event its protocol does not allow (malformed JSON).
func (t *translation) event(dst []byte, name string, data []byte) ([]byte, error) {
	evs, err := t.dec.Decode(name, data)
	if err != nil {
		return dst, err
	}
	for _, ev := range evs {
		dst = t.enc.Encode(dst, ev)
	}
	return dst, nil
}

// finish writes what the caller's protocol still owes when the upstream stream ended (ended) or was cut.
func (t *translation) finish(dst []byte, ended bool) []byte {
	for _, ev := range t.dec.Finish(ended) {
		dst = t.enc.Encode(dst, ev)
	}
	return dst
}

// cut closes the caller's stream after the upstream failed mid-answer: open blocks closed, then the error in
// the caller's own in-stream error shape.
func (t *translation) cut(dst []byte, rerr *relayError, lang i18n.Lang) []byte {
	dst = t.finish(dst, false)
	return t.enc.Encode(dst, convert.Event{Type: convert.EvError, Err: &convert.Error{Status: rerr.status,
		Type: convert.ErrServer, Code: rerr.code, Message: i18n.T(lang, rerr.code, rerr.args...)}})
}

// translateAnswer turns an upstream's complete answer into the caller's protocol: a generation answer through
// the codecs, a token count from one counting shape to the other.
func translateAnswer(rq *request, lg *leg, body []byte) ([]byte, error) {
	if rq.kind == adaptor.KindCount {
		n := gjson.GetBytes(body, "input_tokens")
		if lg.proto == adaptor.Gemini {
			n = gjson.GetBytes(body, "totalTokens")
		}
		if n.Type != gjson.Number {
			return nil, errors.New("upstream answered no token count")
		}
		return countAnswer(rq.proto, n.Int()), nil
	}
	resp, err := lg.up.ParseResponse(body)
	if err != nil {
		return nil, err
	}
	return lg.client.BuildResponse(rq.canon, resp)
}

// countAnswer is a token count in the caller's shape.
func countAnswer(p adaptor.Protocol, n int64) []byte {
	if p == adaptor.Gemini {
		return []byte(`{"totalTokens":` + strconv.FormatInt(n, 10) + `}`)
	}
	return []byte(`{"input_tokens":` + strconv.FormatInt(n, 10) + `}`)
}

// localCount answers a token count the channel's family cannot count (OpenAI has no counting endpoint) from
// the relay's own tokenizer, without an upstream call.
func (r *Relay) localCount(c *gin.Context, rq *request, lg *leg) *outcome {
	var n int
	switch rq.proto {
	case adaptor.Anthropic:
		n = r.Counter.AnthropicPrompt(rq.model, rq.body)
	default:
		n = r.countCanonical(rq)
	}
	body := countAnswer(rq.proto, int64(n))
	writeJSON(c, rq, http.StatusOK, body)
	return &outcome{status: http.StatusOK, ok: true, delivered: true, leg: lg}
}

// countCanonical counts a prompt the tokenizer has no reader for (Gemini's shape) by translating it to
// OpenAI chat first; a body that does not translate is estimated from its size.
func (r *Relay) countCanonical(rq *request) int {
	client, ok := convert.For(rq.proto)
	oa, ok2 := convert.For(adaptor.OpenAI)
	if ok && ok2 {
		if canon, rerr := rq.canonical(client); rerr == nil {
			req := *canon
			req.Stream = false
			if b, err := oa.BuildRequest(&req); err == nil {
				return r.Counter.OpenAIChatPrompt(rq.model, b)
			}
		}
	}
	return len(rq.body) / 4
}

// clientErrorBody is an upstream's client error as the caller gets it: as the upstream wrote it, or, after a
// translated attempt, rewritten into the caller's protocol (the upstream's status, type and message kept).
func clientErrorBody(rq *request, f *failure) []byte {
	if f.leg == nil || !f.leg.conv {
		return f.body
	}
	e := f.leg.up.ParseError(f.status, f.body)
	if e == nil {
		e = &convert.Error{Status: f.status, Type: convert.ErrInvalidRequest, Message: errorMessage(f.body)}
	}
	return f.leg.client.BuildError(e)
}

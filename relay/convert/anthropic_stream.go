package convert

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/tidwall/gjson"
)

// NewDecoder implements Codec: a reader of an upstream Messages stream.
func (antCodec) NewDecoder() Decoder { return &antDecoder{blocks: map[int64]*antDecBlock{}} }

// NewEncoder implements Codec: a writer of a Messages stream for a client.
func (antCodec) NewEncoder(req *Request) Encoder {
	e := &antEncoder{blocks: map[int]*antEncBlock{}}
	if req != nil {
		e.model = req.Model
	}
	return e
}

// antDecBlock is one upstream content block as the decoder tracks it: its canonical index and kind. skip:
// a block canonical cannot carry (a server tool's), whose deltas and stop are dropped.
type antDecBlock struct {
	index int
	kind  PartKind
	open  bool
	skip  bool
}

// antDecoder reads a Messages stream into canonical events. Blocks get canonical indexes in the order they
// start, whatever index the upstream gave; usage from message_start (input and cache counts) is merged with
// message_delta's cumulative output.
type antDecoder struct {
	started  bool
	done     bool // an error event came, or Finish was called: nothing more
	blocks   map[int64]*antDecBlock
	open     []*antDecBlock // in start order
	next     int
	usage    Usage
	hasUsage bool
}

// antEventTypes are the stream events the decoder reads (others give nothing).
var antEventTypes = map[string]bool{"message_start": true, "content_block_start": true, "content_block_delta": true,
	"content_block_stop": true, "message_delta": true, "message_stop": true, "ping": true, "error": true}

// Decode implements Decoder.
func (d *antDecoder) Decode(name string, data []byte) ([]Event, error) {
	if d.done {
		return nil, nil
	}
	valid := gjson.ValidBytes(data)
	typ := name
	if t := gjson.GetBytes(data, "type"); t.Type == gjson.String { // read even from a broken event, to name it
		typ = t.Str
	}
	if !antEventTypes[typ] || typ == "ping" || typ == "message_stop" {
		return nil, nil
	}
	if !valid {
		return nil, fmt.Errorf("anthropic stream: %s event with malformed JSON", typ)
	}
	var evs []Event
	if typ != "error" && !d.started {
		d.started = true
		evs = append(evs, d.startEvent(typ, data))
		if typ == "message_start" {
			if d.hasUsage {
				u := d.usage
				evs = append(evs, Event{Type: EvUsage, Usage: &u})
			}
			return evs, nil
		}
	}
	switch typ {
	case "message_start": // a second one: its usage only
		if d.readUsage(gjson.GetBytes(data, "message.usage")) {
			u := d.usage
			evs = append(evs, Event{Type: EvUsage, Usage: &u})
		}
	case "content_block_start":
		evs = d.blockStart(evs, data)
	case "content_block_delta":
		evs = d.blockDelta(evs, data)
	case "content_block_stop":
		if b := d.blocks[gjson.GetBytes(data, "index").Int()]; b != nil && b.open {
			evs = d.stop(evs, b)
		}
	case "message_delta":
		r := gjson.GetManyBytes(data, "delta.stop_reason", "delta.stop_sequence", "usage")
		if r[0].Type == gjson.String {
			evs = append(evs, Event{Type: EvFinish, Finish: antFinish(r[0].Str), StopSequence: r[1].String()})
		}
		if d.readUsage(r[2]) {
			u := d.usage
			evs = append(evs, Event{Type: EvUsage, Usage: &u})
		}
	case "error":
		d.done = true
		evs = append(evs, Event{Type: EvError, Err: antCodec{}.ParseError(0, data)})
	}
	return evs, nil
}

// startEvent is EvStart: from message_start's message (its usage read), or empty when another event came
// first.
func (d *antDecoder) startEvent(typ string, data []byte) Event {
	ev := Event{Type: EvStart}
	if typ != "message_start" {
		return ev
	}
	m := gjson.GetBytes(data, "message")
	ev.ID, ev.Model = m.Get("id").String(), m.Get("model").String()
	if d.readUsage(m.Get("usage")) {
		u := d.usage
		ev.Usage = &u
	}
	return ev
}

// readUsage merges the counts a usage object carries into the decoder's usage (the counts it does not
// carry stay); false when there is no usage object.
func (d *antDecoder) readUsage(u gjson.Result) bool {
	if !u.IsObject() {
		return false
	}
	set := func(field string, dst *int64) {
		if v := u.Get(field); v.Type == gjson.Number {
			*dst = v.Int()
		}
	}
	set("input_tokens", &d.usage.Input)
	set("cache_read_input_tokens", &d.usage.CacheRead)
	set("cache_creation_input_tokens", &d.usage.CacheWrite)
	set("output_tokens", &d.usage.Output)
	d.hasUsage = true
	return true
}

// blockStart reads content_block_start: a text, thinking, redacted_thinking or tool_use block starts (a
// tool_use's input {} is not an argument fragment). Another block at the same upstream index is closed first.
func (d *antDecoder) blockStart(evs []Event, data []byte) []Event {
	r := gjson.GetManyBytes(data, "index", "content_block")
	at, cb := r[0].Int(), r[1]
	if old := d.blocks[at]; old != nil && old.open {
		evs = d.stop(evs, old)
	}
	var part Part
	switch cb.Get("type").String() {
	case "text":
		part.Kind = PartText
	case "thinking":
		part.Kind = PartThinking
	case "redacted_thinking":
		part = Part{Kind: PartRedactedThinking, Data: cb.Get("data").String()}
	case "tool_use":
		id := cb.Get("id").String()
		if id == "" {
			id = "toolu_" + strconv.Itoa(d.next)
		}
		part = Part{Kind: PartToolCall, ToolCall: &ToolCall{ID: id, Name: cb.Get("name").String()}}
	default:
		d.blocks[at] = &antDecBlock{skip: true}
		return evs
	}
	b := d.begin(at, part.Kind)
	evs = append(evs, Event{Type: EvBlockStart, Index: b.index, Part: &part})
	switch part.Kind {
	case PartText:
		if t := cb.Get("text").String(); t != "" {
			evs = append(evs, Event{Type: EvTextDelta, Index: b.index, Text: t})
		}
	case PartThinking:
		if t := cb.Get("thinking").String(); t != "" {
			evs = append(evs, Event{Type: EvThinkingDelta, Index: b.index, Text: t})
		}
		if s := cb.Get("signature").String(); s != "" {
			evs = append(evs, Event{Type: EvSignature, Index: b.index, Signature: s})
		}
	case PartToolCall:
		if in := cb.Get("input"); in.IsObject() && in.Raw != "{}" && len(in.Map()) > 0 {
			evs = append(evs, Event{Type: EvArgsDelta, Index: b.index, Text: in.Raw})
		}
	}
	return evs
}

// begin opens a canonical block for upstream index at.
func (d *antDecoder) begin(at int64, kind PartKind) *antDecBlock {
	b := &antDecBlock{index: d.next, kind: kind, open: true}
	d.next++
	d.blocks[at] = b
	d.open = append(d.open, b)
	return b
}

// blockDelta reads content_block_delta. A delta for a block that never started (or of another kind than
// the block at that index) starts one implicitly.
func (d *antDecoder) blockDelta(evs []Event, data []byte) []Event {
	// The same three reads as GetManyBytes (the type by its own path: with a repeated "delta" key it may come
	// from another one than the text), without its slice.
	at, delta := gjson.GetBytes(data, "index").Int(), gjson.GetBytes(data, "delta")
	var kind PartKind
	ev := Event{}
	switch gjson.GetBytes(data, "delta.type").String() {
	case "text_delta":
		kind, ev.Type, ev.Text = PartText, EvTextDelta, delta.Get("text").String()
	case "thinking_delta":
		kind, ev.Type, ev.Text = PartThinking, EvThinkingDelta, delta.Get("thinking").String()
	case "signature_delta":
		kind, ev.Type, ev.Signature = PartThinking, EvSignature, delta.Get("signature").String()
	case "input_json_delta":
		kind, ev.Type, ev.Text = PartToolCall, EvArgsDelta, delta.Get("partial_json").String()
	default:
		return evs // citations_delta and deltas yet to come
	}
	b := d.blocks[at]
	if b != nil && b.skip {
		return evs
	}
	if ev.Text == "" && ev.Signature == "" {
		return evs
	}
	if b == nil || !b.open || b.kind != kind {
		if b != nil && b.open {
			evs = d.stop(evs, b)
		}
		part := Part{Kind: kind}
		if kind == PartToolCall {
			part.ToolCall = &ToolCall{ID: "toolu_" + strconv.Itoa(d.next)}
		}
		b = d.begin(at, kind)
		evs = append(evs, Event{Type: EvBlockStart, Index: b.index, Part: &part})
	}
	ev.Index = b.index
	return append(evs, ev)
}

// stop closes block b.
func (d *antDecoder) stop(evs []Event, b *antDecBlock) []Event {
	b.open = false
	d.open = slices.DeleteFunc(d.open, func(o *antDecBlock) bool { return o == b })
	return append(evs, Event{Type: EvBlockStop, Index: b.index})
}

// Finish implements Decoder: open blocks closed in the order they started, then (ended) EvEnd, after an
// EvStart if the stream never began. After an error event it gives nothing.
func (d *antDecoder) Finish(ended bool) []Event {
	if d.done {
		return nil
	}
	d.done = true
	var evs []Event
	for len(d.open) > 0 {
		evs = d.stop(evs, d.open[0])
	}
	if ended {
		evs = endEvents(evs, &d.started)
	}
	return evs
}

// antEncBlock is one Anthropic content block the encoder wrote: its Anthropic index and kind.
type antEncBlock struct {
	index int
	kind  PartKind
	open  bool
}

// antEncoder writes canonical events as a Messages stream: message_start first (implicitly when another
// event comes first), blocks numbered 0, 1, 2 in the order they start, and at EvEnd the open blocks
// closed, then message_delta (stop reason and the last usage, buffered until then) and message_stop. On
// EvError: open blocks closed, then one error event. Nothing after either.
type antEncoder struct {
	model    string
	started  bool
	done     bool
	blocks   map[int]*antEncBlock // canonical index → its Anthropic block
	open     []*antEncBlock       // in start order
	next     int
	finish   FinishReason
	stopSeq  string
	usage    Usage
	hasTools bool
}

// antEvent is a stream event with an index (content_block_start, _delta, _stop).
type antEvent struct {
	Type         string    `json:"type"`
	Index        int       `json:"index"`
	ContentBlock *antBlock `json:"content_block,omitempty"`
	Delta        any       `json:"delta,omitempty"`
}

// antTextDelta, antThinkingDelta, antSignatureDelta and antJSONDelta are content_block_delta's deltas.
type (
	antTextDelta struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	antThinkingDelta struct {
		Type     string `json:"type"`
		Thinking string `json:"thinking"`
	}
	antSignatureDelta struct {
		Type      string `json:"type"`
		Signature string `json:"signature"`
	}
	antJSONDelta struct {
		Type        string `json:"type"`
		PartialJSON string `json:"partial_json"`
	}
)

// antMessageStart is the message_start event.
type antMessageStart struct {
	Type    string      `json:"type"`
	Message antResponse `json:"message"`
}

// antMessageDelta is the message_delta event: the stop reason, and the whole message's usage.
type antMessageDelta struct {
	Type  string `json:"type"`
	Delta struct {
		StopReason   string  `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
	} `json:"delta"`
	Usage antUsage `json:"usage"`
}

// Encode implements Encoder.
func (e *antEncoder) Encode(dst []byte, ev Event) []byte {
	if e.done {
		return dst
	}
	if ev.Type == EvError {
		e.done = true
		dst = e.closeAll(dst)
		msg := antErrorBody{Type: "error", Error: antErrorDetail{Type: "api_error", Message: "the upstream stream failed"}}
		if ev.Err != nil {
			msg.Error = antErrorDetail{Type: antErrorWord(ev.Err), Message: ev.Err.Message}
		}
		return appendJSONEvent(dst, "error", msg)
	}
	dst = e.start(dst, ev)
	switch ev.Type {
	case EvBlockStart:
		part := Part{Kind: PartText}
		if ev.Part != nil {
			part = *ev.Part
		}
		dst = e.blockStart(dst, ev.Index, part)
	case EvTextDelta:
		if ev.Text != "" {
			dst = e.delta(dst, ev.Index, PartText, antTextDelta{Type: "text_delta", Text: ev.Text})
		}
	case EvThinkingDelta:
		if ev.Text != "" {
			dst = e.delta(dst, ev.Index, PartThinking, antThinkingDelta{Type: "thinking_delta", Thinking: ev.Text})
		}
	case EvSignature:
		// A signature on another kind of block (Gemini signs function calls) has no place in Messages.
		if b := e.blocks[ev.Index]; ev.Signature != "" && (b == nil || !b.open || b.kind == PartThinking) {
			dst = e.delta(dst, ev.Index, PartThinking, antSignatureDelta{Type: "signature_delta", Signature: ev.Signature})
		}
	case EvArgsDelta:
		if ev.Text != "" {
			dst = e.delta(dst, ev.Index, PartToolCall, antJSONDelta{Type: "input_json_delta", PartialJSON: ev.Text})
		}
	case EvBlockStop:
		if b := e.blocks[ev.Index]; b != nil && b.open {
			dst = e.stop(dst, b)
		}
	case EvFinish:
		e.finish, e.stopSeq = ev.Finish, ev.StopSequence
	case EvUsage:
		if ev.Usage != nil {
			e.usage = *ev.Usage
		}
	case EvEnd:
		e.done = true
		dst = e.closeAll(dst)
		var md antMessageDelta
		md.Type = "message_delta"
		md.Delta.StopReason, md.Delta.StopSequence = antStopReason(e.finish, e.stopSeq, e.hasTools)
		md.Usage = antFromCanonUsage(e.usage)
		dst = appendJSONEvent(dst, "message_delta", md)
		dst = appendJSONEvent(dst, "message_stop", map[string]string{"type": "message_stop"})
	}
	return dst
}

// start writes message_start once, before anything else: from EvStart, or with what is known when another
// event comes first.
func (e *antEncoder) start(dst []byte, ev Event) []byte {
	if e.started {
		if ev.Type == EvStart && ev.Usage != nil {
			e.usage = *ev.Usage
		}
		return dst
	}
	e.started = true
	model := e.model
	if ev.Type == EvStart {
		if ev.Model != "" {
			model = ev.Model
		}
		if ev.Usage != nil {
			e.usage = *ev.Usage
		}
	}
	u := antFromCanonUsage(e.usage)
	return appendJSONEvent(dst, "message_start", antMessageStart{Type: "message_start", Message: antResponse{
		ID: antMessageID(ev.ID), Type: "message", Role: "assistant", Model: model, Content: []antBlock{}, Usage: &u}})
}

// blockStart writes content_block_start for canonical block i (an open block of that index is closed
// first), and the text, signature or arguments the part already carries as deltas.
func (e *antEncoder) blockStart(dst []byte, i int, p Part) []byte {
	if b := e.blocks[i]; b != nil && b.open {
		dst = e.stop(dst, b)
	}
	var cb antBlock
	switch p.Kind {
	case PartThinking:
		cb = antBlock{Type: "thinking", Thinking: antStr(""), Signature: antStr("")}
	case PartRedactedThinking:
		cb = antBlock{Type: "redacted_thinking", Data: p.Data}
	case PartToolCall:
		cb = antBlock{Type: "tool_use", ID: "toolu_" + strconv.Itoa(e.next), Input: json.RawMessage(`{}`)}
		if p.ToolCall != nil {
			if p.ToolCall.ID != "" {
				cb.ID = p.ToolCall.ID
			}
			cb.Name = p.ToolCall.Name
		}
		e.hasTools = true
	case PartText:
		cb = antBlock{Type: "text", Text: antStr("")}
	default:
		return dst // images and tool results are not stream blocks
	}
	b := &antEncBlock{index: e.next, kind: p.Kind, open: true}
	e.next++
	e.blocks[i] = b
	e.open = append(e.open, b)
	dst = appendJSONEvent(dst, "content_block_start", antEvent{Type: "content_block_start", Index: b.index, ContentBlock: &cb})
	switch {
	case p.Kind == PartText && p.Text != "":
		dst = e.delta(dst, i, PartText, antTextDelta{Type: "text_delta", Text: p.Text})
	case p.Kind == PartThinking:
		if p.Text != "" {
			dst = e.delta(dst, i, PartThinking, antThinkingDelta{Type: "thinking_delta", Thinking: p.Text})
		}
		if p.Signature != "" {
			dst = e.delta(dst, i, PartThinking, antSignatureDelta{Type: "signature_delta", Signature: p.Signature})
		}
	case p.Kind == PartToolCall && p.ToolCall != nil && p.ToolCall.Args != "" && p.ToolCall.Args != "{}":
		dst = e.delta(dst, i, PartToolCall, antJSONDelta{Type: "input_json_delta", PartialJSON: p.ToolCall.Args})
	}
	return dst
}

// delta writes content_block_delta d into canonical block i, which must be an open block of kind; when it
// is not (never started, stopped, or another kind), a block of that kind starts first.
func (e *antEncoder) delta(dst []byte, i int, kind PartKind, d any) []byte {
	b := e.blocks[i]
	if b == nil || !b.open || b.kind != kind {
		dst = e.blockStart(dst, i, Part{Kind: kind})
		b = e.blocks[i]
	}
	return appendJSONEvent(dst, "content_block_delta", antEvent{Type: "content_block_delta", Index: b.index, Delta: d})
}

// stop writes content_block_stop for b.
func (e *antEncoder) stop(dst []byte, b *antEncBlock) []byte {
	b.open = false
	for i, o := range e.open {
		if o == b {
			e.open = append(e.open[:i], e.open[i+1:]...)
			break
		}
	}
	return appendJSONEvent(dst, "content_block_stop", antEvent{Type: "content_block_stop", Index: b.index})
}

// closeAll stops every open block, in the order they started.
func (e *antEncoder) closeAll(dst []byte) []byte {
	for len(e.open) > 0 {
		dst = e.stop(dst, e.open[0])
	}
	return dst
}

package convert

// The Responses API codec's streams: the encoder writes canonical events as Responses SSE events (each with
// its type as the event name and a sequence_number, in the order Codex CLI and the OpenAI SDKs expect), the
// decoder reads a Responses upstream's events.

import (
	"time"
)

// rspEvResp is an event carrying the whole response (created, in_progress, completed, incomplete, failed).
type rspEvResp struct {
	Type     string       `json:"type"`
	Seq      int          `json:"sequence_number"`
	Response *rspResponse `json:"response"`
}

// rspEvItem is response.output_item.added / .done.
type rspEvItem struct {
	Type        string `json:"type"`
	Seq         int    `json:"sequence_number"`
	OutputIndex int    `json:"output_index"`
	Item        any    `json:"item"`
}

// rspEvContentPart is response.content_part.added / .done.
type rspEvContentPart struct {
	Type         string         `json:"type"`
	Seq          int            `json:"sequence_number"`
	ItemID       string         `json:"item_id"`
	OutputIndex  int            `json:"output_index"`
	ContentIndex int            `json:"content_index"`
	Part         rspOutputTextP `json:"part"`
}

// rspEvText is response.output_text.delta (Delta) / .done (Text).
type rspEvText struct {
	Type         string   `json:"type"`
	Seq          int      `json:"sequence_number"`
	ItemID       string   `json:"item_id"`
	OutputIndex  int      `json:"output_index"`
	ContentIndex int      `json:"content_index"`
	Delta        *string  `json:"delta,omitempty"`
	Text         *string  `json:"text,omitempty"`
	Logprobs     []string `json:"logprobs"`
}

// rspEvSummaryPart is response.reasoning_summary_part.added / .done.
type rspEvSummaryPart struct {
	Type         string         `json:"type"`
	Seq          int            `json:"sequence_number"`
	ItemID       string         `json:"item_id"`
	OutputIndex  int            `json:"output_index"`
	SummaryIndex int            `json:"summary_index"`
	Part         rspTextPartOut `json:"part"`
}

// rspEvSummaryText is response.reasoning_summary_text.delta (Delta) / .done (Text).
type rspEvSummaryText struct {
	Type         string  `json:"type"`
	Seq          int     `json:"sequence_number"`
	ItemID       string  `json:"item_id"`
	OutputIndex  int     `json:"output_index"`
	SummaryIndex int     `json:"summary_index"`
	Delta        *string `json:"delta,omitempty"`
	Text         *string `json:"text,omitempty"`
}

// rspEvArgs is response.function_call_arguments.delta / .done and response.custom_tool_call_input.delta /
// .done: one of Delta, Arguments, Input is set.
type rspEvArgs struct {
	Type        string  `json:"type"`
	Seq         int     `json:"sequence_number"`
	ItemID      string  `json:"item_id"`
	OutputIndex int     `json:"output_index"`
	Delta       *string `json:"delta,omitempty"`
	Arguments   *string `json:"arguments,omitempty"`
	Input       *string `json:"input,omitempty"`
}

// rspEncoder writes a Responses stream for a client. Every canonical block is one output item, numbered
// by output_index in the order blocks start.
type rspEncoder struct {
	req     *Request
	kinds   map[string]rspKind
	ids     rspIDs
	model   string
	created int64
	seq     int
	started bool
	closed  bool // the terminal event is written
	items   []*rspOut
	blocks  map[int]*rspOut // canonical block index → its item
	finish  FinishReason
	usage   *Usage
}

// NewEncoder implements Codec.
func (rspCodec) NewEncoder(req *Request) Encoder {
	return &rspEncoder{req: req, kinds: rspToolKinds(req), created: time.Now().Unix(), blocks: map[int]*rspOut{}}
}

// next is the next event's sequence_number.
func (e *rspEncoder) next() int {
	n := e.seq
	e.seq++
	return n
}

// Encode implements Encoder.
func (e *rspEncoder) Encode(dst []byte, ev Event) []byte {
	if e.closed {
		return dst
	}
	if !e.started {
		dst = e.start(dst, ev)
	}
	switch ev.Type {
	case EvStart:
		if ev.Usage != nil {
			u := *ev.Usage
			e.usage = &u
		}
	case EvBlockStart:
		part := ev.Part
		if part == nil {
			part = &Part{Kind: PartText}
		}
		dst, _ = e.open(dst, ev.Index, part)
	case EvTextDelta:
		var o *rspOut
		if dst, o = e.open(dst, ev.Index, &Part{Kind: PartText}); o != nil && o.kind == rspKMessage {
			dst = e.text(dst, o, ev.Text)
		}
	case EvThinkingDelta:
		var o *rspOut
		if dst, o = e.open(dst, ev.Index, &Part{Kind: PartThinking}); o != nil && o.kind == rspKReasoning {
			dst = e.thinking(dst, o, ev.Text)
		}
	case EvSignature:
		var o *rspOut
		if dst, o = e.open(dst, ev.Index, &Part{Kind: PartThinking}); o != nil && o.kind == rspKReasoning {
			o.sig = ev.Signature
		}
	case EvArgsDelta:
		var o *rspOut
		if dst, o = e.open(dst, ev.Index, &Part{Kind: PartToolCall, ToolCall: &ToolCall{}}); o != nil {
			dst = e.args(dst, o, ev.Text)
		}
	case EvBlockStop:
		if o, ok := e.blocks[ev.Index]; ok {
			dst = e.stop(dst, o)
		}
	case EvFinish:
		e.finish = ev.Finish
	case EvUsage:
		if ev.Usage != nil {
			u := *ev.Usage
			e.usage = &u
		}
	case EvEnd:
		dst = e.end(dst)
	case EvError:
		dst = e.fail(dst, ev.Err)
	}
	return dst
}

// start writes response.created and response.in_progress (from EvStart's id and model, or none when the
// stream began with another event).
func (e *rspEncoder) start(dst []byte, ev Event) []byte {
	e.started = true
	id, model := "", ""
	if ev.Type == EvStart {
		id, model = ev.ID, ev.Model
	}
	e.ids = rspNewIDs(id, time.Now())
	e.model = model
	if e.model == "" && e.req != nil {
		e.model = e.req.Model
	}
	for _, typ := range [...]string{"response.created", "response.in_progress"} {
		resp := rspNewResponse(e.req, e.ids, e.model, e.created, "in_progress")
		dst = appendJSONEvent(dst, typ, rspEvResp{Type: typ, Seq: e.next(), Response: resp})
	}
	return dst
}

// open is block index's item, started (output_item.added, and a message's content part) when the block
// had not started; nil when the block is already complete.
func (e *rspEncoder) open(dst []byte, index int, p *Part) ([]byte, *rspOut) {
	if o, ok := e.blocks[index]; ok {
		if o.done {
			return dst, nil
		}
		return dst, o
	}
	o := rspNewOut(e.ids, len(e.items), p, e.kinds)
	e.items = append(e.items, o)
	e.blocks[index] = o
	const added = "response.output_item.added"
	dst = appendJSONEvent(dst, added, rspEvItem{Type: added, Seq: e.next(), OutputIndex: o.n, Item: o.item(false)})
	switch o.kind {
	case rspKMessage:
		const typ = "response.content_part.added"
		dst = appendJSONEvent(dst, typ, rspEvContentPart{Type: typ, Seq: e.next(), ItemID: o.id, OutputIndex: o.n, Part: rspTextP("")})
		o.part = true
		if p.Text != "" {
			dst = e.text(dst, o, p.Text)
		}
	case rspKReasoning:
		if p.Kind == PartThinking && p.Text != "" {
			dst = e.thinking(dst, o, p.Text)
		}
	}
	return dst, o
}

// text writes a message's text delta.
func (e *rspEncoder) text(dst []byte, o *rspOut, delta string) []byte {
	o.text = append(o.text, delta...)
	const typ = "response.output_text.delta"
	return appendJSONEvent(dst, typ, rspEvText{Type: typ, Seq: e.next(), ItemID: o.id, OutputIndex: o.n, Delta: &delta, Logprobs: []string{}})
}

// thinking writes a reasoning summary delta, adding the summary part first.
func (e *rspEncoder) thinking(dst []byte, o *rspOut, delta string) []byte {
	if !o.part {
		o.part = true
		const typ = "response.reasoning_summary_part.added"
		dst = appendJSONEvent(dst, typ, rspEvSummaryPart{Type: typ, Seq: e.next(), ItemID: o.id, OutputIndex: o.n,
			Part: rspTextPartOut{Type: "summary_text", Text: ""}})
	}
	o.text = append(o.text, delta...)
	const typ = "response.reasoning_summary_text.delta"
	return appendJSONEvent(dst, typ, rspEvSummaryText{Type: typ, Seq: e.next(), ItemID: o.id, OutputIndex: o.n, Delta: &delta})
}

// args takes a tool call's arguments fragment: a function call's is streamed as it comes; a custom call's
// input and a shell call's action are only whole at the end, so they are held until the block stops.
func (e *rspEncoder) args(dst []byte, o *rspOut, delta string) []byte {
	switch o.kind {
	case rspKFunction:
		o.text = append(o.text, delta...)
		const typ = "response.function_call_arguments.delta"
		return appendJSONEvent(dst, typ, rspEvArgs{Type: typ, Seq: e.next(), ItemID: o.id, OutputIndex: o.n, Delta: &delta})
	case rspKCustom, rspKShell:
		o.text = append(o.text, delta...)
	}
	return dst
}

// stop completes an item: its done events, then response.output_item.done with the full item.
func (e *rspEncoder) stop(dst []byte, o *rspOut) []byte {
	if o.done {
		return dst
	}
	o.done = true
	switch o.kind {
	case rspKMessage:
		text := string(o.text)
		typ := "response.output_text.done"
		dst = appendJSONEvent(dst, typ, rspEvText{Type: typ, Seq: e.next(), ItemID: o.id, OutputIndex: o.n, Text: &text, Logprobs: []string{}})
		typ = "response.content_part.done"
		dst = appendJSONEvent(dst, typ, rspEvContentPart{Type: typ, Seq: e.next(), ItemID: o.id, OutputIndex: o.n, Part: rspTextP(text)})
	case rspKReasoning:
		if o.part {
			text := string(o.text)
			typ := "response.reasoning_summary_text.done"
			dst = appendJSONEvent(dst, typ, rspEvSummaryText{Type: typ, Seq: e.next(), ItemID: o.id, OutputIndex: o.n, Text: &text})
			typ = "response.reasoning_summary_part.done"
			dst = appendJSONEvent(dst, typ, rspEvSummaryPart{Type: typ, Seq: e.next(), ItemID: o.id, OutputIndex: o.n,
				Part: rspTextPartOut{Type: "summary_text", Text: text}})
		}
	case rspKFunction:
		args := o.args()
		const typ = "response.function_call_arguments.done"
		dst = appendJSONEvent(dst, typ, rspEvArgs{Type: typ, Seq: e.next(), ItemID: o.id, OutputIndex: o.n, Arguments: &args})
	case rspKCustom:
		input := rspCustomInput(string(o.text))
		if input != "" {
			const typ = "response.custom_tool_call_input.delta"
			dst = appendJSONEvent(dst, typ, rspEvArgs{Type: typ, Seq: e.next(), ItemID: o.id, OutputIndex: o.n, Delta: &input})
		}
		const typ = "response.custom_tool_call_input.done"
		dst = appendJSONEvent(dst, typ, rspEvArgs{Type: typ, Seq: e.next(), ItemID: o.id, OutputIndex: o.n, Input: &input})
	}
	const done = "response.output_item.done"
	return appendJSONEvent(dst, done, rspEvItem{Type: done, Seq: e.next(), OutputIndex: o.n, Item: o.item(true)})
}

// closeAll completes every item still open, in output order.
func (e *rspEncoder) closeAll(dst []byte) []byte {
	for _, o := range e.items {
		dst = e.stop(dst, o)
	}
	return dst
}

// final is the terminal response object: every item, and the usage when known (zeros otherwise: SDKs
// require the field).
func (e *rspEncoder) final() *rspResponse {
	resp := rspNewResponse(e.req, e.ids, e.model, e.created, "completed")
	for _, o := range e.items {
		resp.Output = append(resp.Output, o.item(true))
	}
	var u Usage
	if e.usage != nil {
		u = *e.usage
	}
	resp.Usage = rspUsage(u)
	return resp
}

// end writes the terminal event: response.completed, or response.incomplete (length, content filter), or
// response.failed (the upstream finished with an error).
func (e *rspEncoder) end(dst []byte) []byte {
	dst = e.closeAll(dst)
	resp := e.final()
	resp.finish(e.finish)
	typ := "response." + resp.Status
	e.closed = true
	return appendJSONEvent(dst, typ, rspEvResp{Type: typ, Seq: e.next(), Response: resp})
}

// fail writes response.failed with the error's code and message.
func (e *rspEncoder) fail(dst []byte, err *Error) []byte {
	dst = e.closeAll(dst)
	resp := e.final()
	if e.usage == nil {
		resp.Usage = nil
	}
	resp.Status = "failed"
	resp.Error = &rspErrorObj{Code: "server_error", Message: "the upstream failed"}
	if err != nil {
		resp.Error.Code = rspErrCode(err)
		if err.Message != "" {
			resp.Error.Message = err.Message
		}
	}
	e.closed = true
	const typ = "response.failed"
	return appendJSONEvent(dst, typ, rspEvResp{Type: typ, Seq: e.next(), Response: resp})
}

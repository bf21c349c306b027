package convert

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"

	"github.com/tidwall/gjson"
)

// gemDecoder reads a Gemini stream (alt=sse): every event is one GenerateContentResponse chunk with a few
// parts, function calls whole; usage usually on the last chunk only (cumulative when on several). There is no
// terminal event: Finish(true) closes what is open and ends.
type gemDecoder struct {
	started, done bool
	id            string   // the responseId, for synthesized call ids
	next          int      // the index of the next block
	open          int      // the open text or thinking block (-1: none)
	openKind      PartKind // its kind
	calls         int      // function calls so far
	finished      bool     // an EvFinish was given
}

// NewDecoder reads a Gemini upstream's SSE stream.
func (gemCodec) NewDecoder() Decoder { return &gemDecoder{open: -1} }

// Decode turns one chunk into canonical events. The event name is ignored (Gemini sends none).
func (d *gemDecoder) Decode(_ string, data []byte) ([]Event, error) {
	data = bytes.TrimSpace(data)
	if d.done || len(data) == 0 {
		return nil, nil
	}
	if !gjson.ValidBytes(data) {
		return nil, errors.New("gemini stream: malformed JSON chunk")
	}
	r := gjson.ParseBytes(data)
	if !r.IsObject() {
		return nil, errors.New("gemini stream: a chunk is not an object")
	}
	var evs []Event
	if e := r.Get("error"); e.IsObject() {
		d.done = true
		evs = d.closeOpen(evs)
		return append(evs, Event{Type: EvError, Err: gemErrorOf(e, 0)}), nil
	}
	if !d.started {
		d.started, d.id = true, r.Get("responseId").String()
		evs = append(evs, Event{Type: EvStart, ID: d.id, Model: r.Get("modelVersion").String()})
	}
	cand := gemCandidateOf(r)
	if parts := cand.Get("content.parts"); parts.IsArray() {
		var err error
		parts.ForEach(func(_, p gjson.Result) bool {
			evs, err = d.part(evs, p)
			return err == nil
		})
		if err != nil {
			return nil, err
		}
	}
	reason := cand.Get("finishReason").String()
	if !cand.Exists() && r.Get("promptFeedback.blockReason").String() != "" {
		reason = "SAFETY"
	}
	if reason != "" && reason != "FINISH_REASON_UNSPECIFIED" {
		evs = d.closeOpen(evs)
		evs = append(evs, Event{Type: EvFinish, Finish: gemFinishIn(reason, d.calls > 0)})
		d.finished = true
	}
	if u := r.Get("usageMetadata"); u.IsObject() {
		usage := gemUsageIn(u)
		evs = append(evs, Event{Type: EvUsage, Usage: &usage})
	}
	return evs, nil
}

// part turns one part into events: text and thought text extend the open block of their kind (or start
// one); a function call is a whole block. A signature on a plain text part has no canonical stream event
// and is dropped; other parts (inline data, code) say nothing.
func (d *gemDecoder) part(evs []Event, p gjson.Result) ([]Event, error) {
	if !p.IsObject() {
		return evs, nil
	}
	sig := p.Get("thoughtSignature").String()
	if fc := p.Get("functionCall"); fc.IsObject() {
		args := fc.Get("args")
		text := "{}"
		switch {
		case args.IsObject():
			text = args.Raw
		case args.Exists() && args.Type != gjson.Null:
			return nil, errors.New("gemini stream: functionCall args is not an object")
		}
		evs = d.closeOpen(evs)
		id := fc.Get("id").String()
		if id == "" {
			id = gemCallID(d.id, d.calls)
		}
		d.calls++
		i := d.next
		d.next++
		return append(evs,
			Event{Type: EvBlockStart, Index: i, Part: &Part{Kind: PartToolCall, Signature: sig,
				ToolCall: &ToolCall{ID: id, Name: fc.Get("name").String()}}},
			Event{Type: EvArgsDelta, Index: i, Text: text},
			Event{Type: EvBlockStop, Index: i}), nil
	}
	t := p.Get("text")
	if t.Type != gjson.String {
		return evs, nil
	}
	kind, delta := PartText, EvTextDelta
	if p.Get("thought").Bool() {
		kind, delta = PartThinking, EvThinkingDelta
	} else {
		sig = ""
	}
	if t.Str == "" && sig == "" {
		return evs, nil
	}
	if d.open < 0 || d.openKind != kind {
		evs = d.closeOpen(evs)
		d.open, d.openKind = d.next, kind
		d.next++
		evs = append(evs, Event{Type: EvBlockStart, Index: d.open, Part: &Part{Kind: kind}})
	}
	if t.Str != "" {
		evs = append(evs, Event{Type: delta, Index: d.open, Text: t.Str})
	}
	if sig != "" {
		evs = append(evs, Event{Type: EvSignature, Index: d.open, Signature: sig})
	}
	return evs, nil
}

// closeOpen closes the open text or thinking block, if any.
func (d *gemDecoder) closeOpen(evs []Event) []Event {
	if d.open >= 0 {
		evs = append(evs, Event{Type: EvBlockStop, Index: d.open})
		d.open = -1
	}
	return evs
}

// Finish closes the open block; a stream that ended gets its finish (if the upstream gave none) and EvEnd.
func (d *gemDecoder) Finish(ended bool) []Event {
	if d.done {
		return nil
	}
	d.done = true
	var evs []Event
	if !d.started && ended {
		evs = append(evs, Event{Type: EvStart})
	}
	evs = d.closeOpen(evs)
	if !ended {
		return evs
	}
	if !d.finished {
		evs = append(evs, Event{Type: EvFinish, Finish: gemFinishIn("", d.calls > 0)})
	}
	return append(evs, Event{Type: EvEnd})
}

// gemEncoder writes canonical events as Gemini chunks: SSE events (alt=sse), or one JSON array. Text and
// thought deltas go out as they come; a call is held from its start to its stop and written whole; the last
// chunk carries the finish and the usage.
type gemEncoder struct {
	array    bool // one JSON array, not SSE
	thoughts bool // the caller asked for thought summaries
	opened   bool // array: "[" written
	done     bool
	id       string
	model    string
	kinds    map[int]PartKind
	calls    map[int]*gemCallBuf // calls between their start and stop
	finish   FinishReason
	usage    *Usage
}

// gemCallBuf is a call being received: its start and its arguments so far.
type gemCallBuf struct {
	id, name, sig string
	args          []byte
}

// NewEncoder writes a Gemini SSE stream (alt=sse).
func (gemCodec) NewEncoder(req *Request) Encoder { return gemNewEncoder(req, false) }

// NewGeminiArrayEncoder writes a Gemini stream as Google does without alt=sse: one JSON array of
// GenerateContentResponse objects, "[" with the first, ",\r\n" between them, "]" after the last (an
// in-stream error is an {"error":{...}} element before it). The relay sends it as application/json.
func NewGeminiArrayEncoder(req *Request) Encoder { return gemNewEncoder(req, true) }

// gemNewEncoder is an encoder for req's caller.
func gemNewEncoder(req *Request, array bool) *gemEncoder {
	return &gemEncoder{array: array, thoughts: gemShowThoughts(req), kinds: map[int]PartKind{},
		calls: map[int]*gemCallBuf{}}
}

// Encode appends ev's bytes (none for events Gemini has no chunk for).
func (e *gemEncoder) Encode(dst []byte, ev Event) []byte {
	if e.done {
		return dst
	}
	switch ev.Type {
	case EvStart:
		e.id, e.model = ev.ID, ev.Model
		e.setUsage(ev.Usage)
	case EvBlockStart:
		kind := PartText
		if ev.Part != nil {
			kind = ev.Part.Kind
		}
		e.kinds[ev.Index] = kind
		if kind == PartToolCall {
			b := &gemCallBuf{sig: ev.Part.Signature}
			if tc := ev.Part.ToolCall; tc != nil {
				b.id, b.name = tc.ID, tc.Name
			}
			e.calls[ev.Index] = b
		}
	case EvTextDelta:
		if ev.Text != "" {
			dst = e.chunk(dst, gemPart{Text: gemText(ev.Text)}, "")
		}
	case EvThinkingDelta:
		if ev.Text != "" && e.thoughts {
			dst = e.chunk(dst, gemPart{Text: gemText(ev.Text), Thought: true}, "")
		}
	case EvSignature:
		if k, seen := e.kinds[ev.Index]; ev.Signature != "" && e.thoughts && (!seen || k == PartThinking) {
			dst = e.chunk(dst, gemPart{Text: gemText(""), Thought: true, ThoughtSignature: ev.Signature}, "")
		}
	case EvArgsDelta:
		if b := e.calls[ev.Index]; b != nil {
			b.args = append(b.args, ev.Text...)
		}
	case EvBlockStop:
		if b := e.calls[ev.Index]; b != nil {
			delete(e.calls, ev.Index)
			dst = e.call(dst, b)
		}
	case EvFinish:
		e.finish = ev.Finish
	case EvUsage:
		e.setUsage(ev.Usage)
	case EvError:
		dst = e.fail(dst, ev.Err)
	case EvEnd:
		dst = e.end(dst)
	}
	return dst
}

// setUsage keeps the usage so far.
func (e *gemEncoder) setUsage(u *Usage) {
	if u != nil {
		c := *u
		e.usage = &c
	}
}

// call writes a finished call as one functionCall part; arguments that are not a JSON object end the
// stream with an error rather than a wrong call.
func (e *gemEncoder) call(dst []byte, b *gemCallBuf) []byte {
	args, ok := argsObject(string(b.args))
	if !ok {
		return e.fail(dst, &Error{Type: ErrServer, Message: "the upstream sent arguments for tool call " + b.name +
			" that are not a JSON object"})
	}
	return e.chunk(dst, gemPart{FunctionCall: &gemFunctionCall{ID: b.id, Name: b.name, Args: args},
		ThoughtSignature: b.sig}, "")
}

// chunk writes one chunk with one part (and the finish and usage when final is the finishReason).
func (e *gemEncoder) chunk(dst []byte, p gemPart, final string) []byte {
	c := gemResponse{ModelVersion: e.model, ResponseID: e.id,
		Candidates: []gemCandidate{{Content: gemContent{Role: "model", Parts: []gemPart{p}}, FinishReason: final}}}
	if final != "" && e.usage != nil {
		c.UsageMetadata = gemUsageOut(*e.usage)
	}
	return e.write(dst, c)
}

// write appends one chunk in the stream's framing.
func (e *gemEncoder) write(dst []byte, v any) []byte {
	if !e.array {
		return appendJSONEvent(dst, "", v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{}`)
	}
	if e.opened {
		dst = append(dst, ",\r\n"...)
	} else {
		dst, e.opened = append(dst, '['), true
	}
	return append(dst, b...)
}

// end flushes the calls still held (in block order), writes the final chunk and closes the stream.
func (e *gemEncoder) end(dst []byte) []byte {
	open := make([]int, 0, len(e.calls))
	for i := range e.calls {
		open = append(open, i)
	}
	slices.Sort(open)
	for _, i := range open {
		dst = e.call(dst, e.calls[i])
		delete(e.calls, i)
		if e.done {
			return dst
		}
	}
	dst = e.chunk(dst, gemPart{Text: gemText("")}, gemFinishOut(e.finish))
	return e.close(dst)
}

// fail writes an error chunk (its code the error's status, else its type's: 500 for a server error) and
// closes the stream; calls still held are dropped (they never completed).
func (e *gemEncoder) fail(dst []byte, err *Error) []byte {
	dst = e.write(dst, map[string]gemErrorBody{"error": gemErrorObj(err)})
	return e.close(dst)
}

// close ends the stream: "]" for an array (after "[" if nothing was written); after it Encode writes nothing.
func (e *gemEncoder) close(dst []byte) []byte {
	e.done = true
	if !e.array {
		return dst
	}
	if !e.opened {
		dst = append(dst, '[')
	}
	return append(dst, ']')
}

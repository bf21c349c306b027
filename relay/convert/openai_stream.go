package convert

import (
	"bytes"
	"errors"
	"strconv"

	"github.com/tidwall/gjson"
)

// oaiChunk is one chat.completion.chunk the encoder writes. A usage-only chunk has no choices and the usage.
type oaiChunk struct {
	ID      string           `json:"id"`
	Object  string           `json:"object"`
	Created int64            `json:"created"`
	Model   string           `json:"model"`
	Choices []oaiChunkChoice `json:"choices"`
	Usage   *oaiUsage        `json:"usage,omitempty"`
}

// oaiChunkChoice is a chunk's one choice: a delta, or the final empty delta with the finish_reason.
type oaiChunkChoice struct {
	Index        int       `json:"index"`
	Delta        oaiDelta  `json:"delta"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

// oaiDelta is what one chunk adds: the role (first chunk), content, reasoning_content or tool-call pieces.
type oaiDelta struct {
	Role             string         `json:"role,omitempty"`
	Content          *string        `json:"content,omitempty"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []oaiDeltaCall `json:"tool_calls,omitempty"`
}

// oaiDeltaCall is a tool-call piece: at its start index, id, type and name with empty arguments; then index
// and an arguments fragment.
type oaiDeltaCall struct {
	Index    int          `json:"index"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function oaiDeltaFunc `json:"function"`
}

// oaiDeltaFunc is a tool-call piece's function: the name at the start, the arguments fragment after.
type oaiDeltaFunc struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// oaiEncoder writes canonical events as a chat completions stream: a role chunk first, content /
// reasoning_content / tool_calls deltas, a finish chunk, the usage-only chunk when the caller asked for it,
// then data: [DONE]. Every chunk carries the same id, created and model (the SDKs' accumulators insist).
type oaiEncoder struct {
	id, model    string
	created      int64
	includeUsage bool
	started      bool
	done         bool
	tools        map[int]int // canonical block index -> tool_calls index (0-based among the calls)
	finish       FinishReason
	usage        Usage
}

// NewEncoder implements Codec.
func (c oaiCodec) NewEncoder(req *Request) Encoder {
	e := &oaiEncoder{id: oaiResponseID(""), created: c.unix(), tools: map[int]int{}}
	if req != nil {
		e.model, e.includeUsage = req.Model, req.IncludeUsage
	}
	return e
}

// chunk appends one chunk with one choice.
func (e *oaiEncoder) chunk(dst []byte, d oaiDelta, finish *string) []byte {
	if len(d.ToolCalls) == 0 {
		return e.appendDeltaChunk(dst, d, finish)
	}
	return oaiAppendJSON(dst, oaiChunk{ID: e.id, Object: "chat.completion.chunk", Created: e.created, Model: e.model,
		Choices: []oaiChunkChoice{{Delta: d, FinishReason: finish}}})
}

// begin writes the role chunk once, before anything else.
func (e *oaiEncoder) begin(dst []byte) []byte {
	if e.started {
		return dst
	}
	e.started = true
	empty := ""
	return e.chunk(dst, oaiDelta{Role: "assistant", Content: &empty}, nil)
}

// startTool writes a tool call's first piece (index, id, type, name, empty arguments) for canonical block b.
func (e *oaiEncoder) startTool(dst []byte, b int, tc *ToolCall) ([]byte, int) {
	k := len(e.tools)
	e.tools[b] = k
	call := oaiDeltaCall{Index: k, Type: "function"}
	if tc != nil {
		call.ID, call.Function.Name = tc.ID, tc.Name
	}
	if call.ID == "" {
		call.ID = "call_" + strconv.Itoa(k)
	}
	return e.chunk(dst, oaiDelta{ToolCalls: []oaiDeltaCall{call}}, nil), k
}

// Encode implements Encoder.
func (e *oaiEncoder) Encode(dst []byte, ev Event) []byte {
	if e.done {
		return dst
	}
	switch ev.Type {
	case EvStart:
		if !e.started {
			if ev.ID != "" {
				e.id = oaiResponseID(ev.ID)
			}
			if ev.Model != "" {
				e.model = ev.Model
			}
		}
		if ev.Usage != nil {
			e.usage = *ev.Usage
		}
		return e.begin(dst)
	case EvBlockStart:
		dst = e.begin(dst)
		if ev.Part != nil && ev.Part.Kind == PartToolCall {
			if _, ok := e.tools[ev.Index]; !ok {
				dst, _ = e.startTool(dst, ev.Index, ev.Part.ToolCall)
			}
		}
	case EvTextDelta:
		if ev.Text != "" {
			dst = e.chunk(e.begin(dst), oaiDelta{Content: &ev.Text}, nil)
		}
	case EvThinkingDelta:
		if ev.Text != "" {
			dst = e.chunk(e.begin(dst), oaiDelta{ReasoningContent: ev.Text}, nil)
		}
	case EvArgsDelta:
		if ev.Text == "" {
			break
		}
		dst = e.begin(dst)
		k, ok := e.tools[ev.Index]
		if !ok { // arguments for a call that never started: start it
			dst, k = e.startTool(dst, ev.Index, nil)
		}
		dst = e.chunk(dst, oaiDelta{ToolCalls: []oaiDeltaCall{{Index: k, Function: oaiDeltaFunc{Arguments: ev.Text}}}}, nil)
	case EvFinish:
		e.finish = ev.Finish
	case EvUsage:
		if ev.Usage != nil {
			e.usage = *ev.Usage
		}
	case EvError:
		e.done = true
		return oaiAppendJSON(dst, oaiErrorOut(ev.Err))
	case EvEnd:
		e.done = true
		dst = e.begin(dst)
		finish := oaiFinishOut(e.finish, len(e.tools) > 0)
		dst = e.chunk(dst, oaiDelta{}, &finish)
		if e.includeUsage {
			dst = oaiAppendJSON(dst, oaiChunk{ID: e.id, Object: "chat.completion.chunk", Created: e.created,
				Model: e.model, Choices: []oaiChunkChoice{}, Usage: oaiUsageOut(e.usage)})
		}
		return appendEvent(dst, "", oaiDone)
	}
	return dst
}

// oaiDone is the data of a chat completions stream's last event.
var oaiDone = []byte("[DONE]")

// oaiAppendJSON appends v as one data-only SSE event (marshalled without HTML escaping).
func oaiAppendJSON(dst []byte, v any) []byte {
	b, err := oaiMarshal(v)
	if err != nil {
		b = []byte(`{}`)
	}
	return appendEvent(dst, "", b)
}

// oaiDecTool is one upstream tool call of a stream: its canonical block, the id it came with, and whether
// the block is still open.
type oaiDecTool struct {
	block int
	id    string
	open  bool
}

// oaiDecoder reads an upstream chat completions stream (choice 0) into canonical events. Text and thinking
// (reasoning_content / reasoning) are sequential blocks: one closes when another block starts. Each tool
// call is a block that stays open until the choice finishes, since upstreams may interleave the argument
// pieces of parallel calls (call 0 starts, call 1 starts, then arguments for 0 and for 1). Tool calls are
// keyed by their index; a later piece that repeats the id and name adds to the same block, while a piece with
// the index of an earlier call but a new id (some upstreams number every call 0) starts a new call.
type oaiDecoder struct {
	started, finished, failed bool
	open                      int // the open block (-1: none)
	openKind                  PartKind
	next                      int // the next block's index
	tools                     map[int]*oaiDecTool
	openTools                 []*oaiDecTool // tool blocks not closed yet, in the order they started
	lastTool                  int           // the upstream index of the latest tool call (for pieces without one)
}

// NewDecoder implements Codec.
func (oaiCodec) NewDecoder() Decoder {
	return &oaiDecoder{open: -1, tools: map[int]*oaiDecTool{}, lastTool: -1}
}

// closeText closes the open text or thinking block.
func (d *oaiDecoder) closeText(evs []Event) []Event {
	if d.open >= 0 {
		evs = append(evs, Event{Type: EvBlockStop, Index: d.open})
		d.open = -1
	}
	return evs
}

// closeOpen closes every open block: the text or thinking block, then the tool calls in start order.
func (d *oaiDecoder) closeOpen(evs []Event) []Event {
	evs = d.closeText(evs)
	for _, t := range d.openTools {
		t.open = false
		evs = append(evs, Event{Type: EvBlockStop, Index: t.block})
	}
	d.openTools = d.openTools[:0]
	return evs
}

// startBlock closes the open text or thinking block and starts the next block with p (a text or thinking
// block becomes the open one; a tool call is the caller's to record).
func (d *oaiDecoder) startBlock(evs []Event, p Part) ([]Event, int) {
	evs = d.closeText(evs)
	b := d.next
	d.next++
	if p.Kind != PartToolCall {
		d.open, d.openKind = b, p.Kind
	}
	return append(evs, Event{Type: EvBlockStart, Index: b, Part: &p}), b
}

// text appends text to the open block of kind k (a text or thinking block), starting one when needed.
func (d *oaiDecoder) text(evs []Event, k PartKind, s string) []Event {
	if s == "" {
		return evs
	}
	if d.open < 0 || d.openKind != k {
		evs, _ = d.startBlock(evs, Part{Kind: k})
	}
	t := EvTextDelta
	if k == PartThinking {
		t = EvThinkingDelta
	}
	return append(evs, Event{Type: t, Index: d.open, Text: s})
}

// toolPiece reads one tool_calls entry (or a legacy function_call, with no index and no id).
func (d *oaiDecoder) toolPiece(evs []Event, tc gjson.Result) []Event {
	id := oaiStr(tc.Get("id"))
	idx := d.lastTool
	switch ix := tc.Get("index"); {
	case ix.Type == gjson.Number:
		idx = max(int(ix.Int()), 0) // Bedrock numbers a lone call -1
	case idx < 0:
		idx = 0
	case id != "" && d.tools[idx] != nil && d.tools[idx].id != id:
		idx = len(d.tools) // no index, a new id: the next call
		for d.tools[idx] != nil {
			idx++
		}
	}
	d.lastTool = idx
	t := d.tools[idx]
	if t != nil && id != "" && t.id != "" && id != t.id {
		t = nil // the index of an earlier call with a new id: another call
	}
	if t == nil {
		call := &ToolCall{ID: id, Name: oaiStr(tc.Get("function.name"))}
		if call.ID == "" {
			call.ID = "call_" + strconv.Itoa(d.next)
		}
		var b int
		evs, b = d.startBlock(evs, Part{Kind: PartToolCall, ToolCall: call})
		t = &oaiDecTool{block: b, id: id, open: true}
		d.tools[idx] = t
		d.openTools = append(d.openTools, t)
	}
	if !t.open {
		return evs // a piece after its choice finished: the call is over
	}
	args := tc.Get("function.arguments")
	frag := oaiStr(args)
	if args.IsObject() {
		frag = args.Raw
	}
	if frag != "" {
		evs = append(evs, Event{Type: EvArgsDelta, Index: t.block, Text: frag})
	}
	return evs
}

// Decode implements Decoder: one chunk (data; OpenAI sends no event names) → the canonical events it says.
// [DONE] says nothing (Finish(true) gives EvEnd); a chunk with an error object, or an "error" event, is
// EvError; usage in any chunk is EvUsage (the last one wins).
func (d *oaiDecoder) Decode(name string, data []byte) ([]Event, error) {
	data = bytes.TrimSpace(data)
	if d.failed || len(data) == 0 || bytes.Equal(data, oaiDone) {
		return nil, nil
	}
	if !gjson.ValidBytes(data) {
		return nil, errors.New("openai stream chunk is not valid JSON")
	}
	root := gjson.ParseBytes(data)
	if !root.IsObject() {
		return nil, nil
	}
	var evs []Event
	if e := root.Get("error"); name == "error" || e.IsObject() || oaiStr(e) != "" {
		d.failed = true
		evs = d.closeOpen(evs)
		return append(evs, Event{Type: EvError, Err: oaiCodec{}.ParseError(0, data)}), nil
	}
	choices, usage := root.Get("choices"), root.Get("usage")
	c := oaiChoice0(choices)
	id := oaiStr(root.Get("id"))
	if !d.started && (c.Exists() || usage.IsObject() || id != "") {
		d.started = true
		evs = append(evs, Event{Type: EvStart, ID: id, Model: oaiStr(root.Get("model"))})
	}
	if c.Exists() {
		delta := c.Get("delta")
		evs = d.text(evs, PartThinking, oaiReasoning(delta))
		evs = d.text(evs, PartText, oaiStr(delta.Get("content")))
		evs = d.text(evs, PartText, oaiStr(delta.Get("refusal")))
		delta.Get("tool_calls").ForEach(func(_, tc gjson.Result) bool {
			if tc.IsObject() {
				evs = d.toolPiece(evs, tc)
			}
			return true
		})
		if fc := delta.Get("function_call"); fc.IsObject() {
			evs = d.toolPiece(evs, gjson.Parse(`{"index":0,"function":`+fc.Raw+`}`))
		}
		if f := oaiFinishIn(oaiStr(c.Get("finish_reason"))); f != "" {
			evs = d.closeOpen(evs)
			evs = append(evs, Event{Type: EvFinish, Finish: f})
		}
	}
	if usage.IsObject() {
		u := oaiUsageIn(usage)
		evs = append(evs, Event{Type: EvUsage, Usage: &u})
	}
	return evs, nil
}

// Finish implements Decoder: closes the open block; when the stream ended normally, EvEnd (after an EvStart
// if the upstream never sent a chunk).
func (d *oaiDecoder) Finish(ended bool) []Event {
	if d.failed || d.finished {
		return nil
	}
	d.finished = true
	evs := d.closeOpen(nil)
	if ended {
		evs = endEvents(evs, &d.started)
	}
	return evs
}

package convert

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/tidwall/gjson"
)

// rspDecoder reads a Responses upstream's stream. Output items are keyed by output_index (by item_id when
// an event has none); a message's content parts, a reasoning item and a tool call each become one block.
type rspDecoder struct {
	started, stopped bool // stopped: EvEnd or EvError given
	next             int
	items            map[int64]*rspDecItem
	ids              map[string]int64 // item id → output index
	open             []*rspDecBlock   // started and not stopped, in index order
	tools            bool             // a tool call was seen
}

// rspDecItem is one upstream output item.
type rspDecItem struct {
	kind     string                 // the item type
	blk      *rspDecBlock           // a reasoning item's or tool call's block
	parts    map[int64]*rspDecBlock // a message's text blocks by content_index
	summary  int64                  // the summary_index of the last reasoning text
	seen     map[int64]bool         // summary indexes that gave text
	args     bool                   // arguments (or custom input) were given
	inString bool                   // a custom call's `{"input":"` is written and the string not closed
}

// rspDecBlock is one canonical block.
type rspDecBlock struct {
	index int
	open  bool
	text  bool // some text was given
	item  *rspDecItem
}

// NewDecoder implements Codec.
func (rspCodec) NewDecoder() Decoder {
	return &rspDecoder{items: map[int64]*rspDecItem{}, ids: map[string]int64{}}
}

// rspKnown says whether the decoder reads an event type; others give nothing.
func rspKnown(typ string) bool {
	switch typ {
	case "response.created", "response.in_progress", "response.queued",
		"response.output_item.added", "response.output_item.done",
		"response.content_part.added", "response.content_part.done",
		"response.output_text.delta", "response.output_text.done",
		"response.refusal.delta", "response.refusal.done",
		"response.reasoning_summary_text.delta", "response.reasoning_summary_text.done",
		"response.reasoning_text.delta",
		"response.function_call_arguments.delta", "response.function_call_arguments.done",
		"response.custom_tool_call_input.delta", "response.custom_tool_call_input.done",
		"response.completed", "response.incomplete", "response.failed", "error":
		return true
	}
	return false
}

// Decode implements Decoder.
func (d *rspDecoder) Decode(name string, data []byte) ([]Event, error) {
	if d.stopped {
		return nil, nil
	}
	if !gjson.ValidBytes(data) {
		if rspKnown(name) {
			return nil, &Invalid{Field: name, Why: "the upstream event is not JSON"}
		}
		return nil, nil
	}
	ev := gjson.ParseBytes(data)
	typ := ev.Get("type").String()
	if typ == "" {
		typ = name
	}
	if !rspKnown(typ) || !ev.IsObject() {
		return nil, nil
	}
	var evs []Event
	switch typ {
	case "response.created", "response.in_progress", "response.queued":
		evs = d.start(evs, ev.Get("response"))
	case "response.output_item.added":
		evs = d.itemAdded(evs, d.key(ev), ev.Get("item"))
	case "response.output_item.done":
		evs = d.itemDone(evs, d.key(ev), ev.Get("item"))
	case "response.content_part.added":
		itm := d.item(d.key(ev), "message")
		if t, ok := rspContentText(ev.Get("part")); ok {
			var b *rspDecBlock
			evs, b = d.textBlock(evs, itm, ev.Get("content_index").Int())
			evs = d.textDelta(evs, b, t)
		}
	case "response.output_text.delta", "response.refusal.delta":
		var b *rspDecBlock
		evs, b = d.textBlock(evs, d.item(d.key(ev), "message"), ev.Get("content_index").Int())
		evs = d.textDelta(evs, b, ev.Get("delta").String())
	case "response.output_text.done", "response.refusal.done", "response.content_part.done":
		itm, ci := d.item(d.key(ev), "message"), ev.Get("content_index").Int()
		text := ev.Get("text").String()
		if typ == "response.refusal.done" {
			text = ev.Get("refusal").String()
		} else if typ == "response.content_part.done" {
			text, _ = rspContentText(ev.Get("part"))
		}
		evs = d.textFill(evs, itm, ci, text, typ == "response.content_part.done")
	case "response.reasoning_summary_text.delta", "response.reasoning_summary_text.done", "response.reasoning_text.delta":
		itm := d.item(d.key(ev), "reasoning")
		if typ == "response.reasoning_text.delta" {
			evs = d.thinking(evs, itm, -1-ev.Get("content_index").Int(), ev.Get("delta").String())
		} else if si := ev.Get("summary_index").Int(); typ == "response.reasoning_summary_text.delta" {
			evs = d.thinking(evs, itm, si, ev.Get("delta").String())
		} else if !itm.seen[si] {
			evs = d.thinking(evs, itm, si, ev.Get("text").String())
		}
	case "response.function_call_arguments.delta", "response.function_call_arguments.done":
		itm := d.item(d.key(ev), "function_call")
		evs = d.toolBlock(evs, itm, ev)
		if typ == "response.function_call_arguments.delta" {
			evs = d.argsDelta(evs, itm, ev.Get("delta").String())
		} else if !itm.args {
			evs = d.argsDelta(evs, itm, ev.Get("arguments").String())
		}
	case "response.custom_tool_call_input.delta", "response.custom_tool_call_input.done":
		itm := d.item(d.key(ev), "custom_tool_call")
		evs = d.toolBlock(evs, itm, ev)
		if typ == "response.custom_tool_call_input.delta" {
			evs = d.customDelta(evs, itm, ev.Get("delta").String())
		} else if !itm.args {
			evs = d.argsDelta(evs, itm, rspCustomArgs(ev.Get("input").String()))
		}
	case "response.completed", "response.incomplete":
		resp := ev.Get("response")
		evs = d.start(evs, resp)
		for i, it := range resp.Get("output").Array() {
			if d.unseen(int64(i), it) {
				evs = d.itemDone(evs, int64(i), it)
			}
			if t := it.Get("type").String(); t == "function_call" || t == "custom_tool_call" || t == "local_shell_call" {
				d.tools = true
			}
		}
		evs = append(evs, Event{Type: EvFinish, Finish: rspFinishOf(resp, d.tools)})
		if u := resp.Get("usage"); u.IsObject() {
			usage := rspUsageOf(u)
			evs = append(evs, Event{Type: EvUsage, Usage: &usage})
		}
	case "response.failed", "error":
		evs = d.start(evs, ev.Get("response"))
		e := (rspCodec{}).ParseError(0, data)
		if e == nil {
			e = &Error{Type: ErrServer, Message: "the upstream response failed"}
		}
		d.stopped = true
		evs = append(evs, Event{Type: EvError, Err: e})
	}
	return evs, nil
}

// Finish implements Decoder: open blocks are closed; EvEnd when the stream ended normally.
func (d *rspDecoder) Finish(ended bool) []Event {
	if d.stopped {
		return nil
	}
	var evs []Event
	for len(d.open) > 0 {
		evs = d.stop(evs, d.open[0])
	}
	if ended {
		evs = d.start(evs, gjson.Result{})
		d.stopped = true
		evs = append(evs, Event{Type: EvEnd})
	}
	return evs
}

// start gives EvStart once, from the response's id and model.
func (d *rspDecoder) start(evs []Event, resp gjson.Result) []Event {
	if d.started {
		return evs
	}
	d.started = true
	return append(evs, Event{Type: EvStart, ID: resp.Get("id").String(), Model: resp.Get("model").String()})
}

// key is the output item an event is about: its output_index, else its item id's.
func (d *rspDecoder) key(ev gjson.Result) int64 {
	if oi := ev.Get("output_index"); oi.Exists() {
		k := oi.Int()
		if id := ev.Get("item.id").String(); id != "" {
			d.ids[id] = k
		}
		return k
	}
	id := ev.Get("item_id").String()
	if id == "" {
		id = ev.Get("item.id").String()
	}
	if k, ok := d.ids[id]; ok {
		return k
	}
	k := int64(-1 - len(d.ids)) // a key no output_index has
	d.ids[id] = k
	return k
}

// unseen says whether output item i of the final response is one the stream never showed (by its
// output_index or its id).
func (d *rspDecoder) unseen(i int64, it gjson.Result) bool {
	if _, ok := d.items[i]; ok {
		return false
	}
	if id := it.Get("id").String(); id != "" {
		if _, ok := d.ids[id]; ok {
			return false
		}
	}
	return true
}

// item is output item k, created with the given type when the stream had not shown it.
func (d *rspDecoder) item(k int64, kind string) *rspDecItem {
	itm, ok := d.items[k]
	if !ok {
		itm = &rspDecItem{kind: kind, summary: -1 << 62}
		d.items[k] = itm
	}
	return itm
}

// begin starts a block.
func (d *rspDecoder) begin(evs []Event, itm *rspDecItem, p Part) ([]Event, *rspDecBlock) {
	evs = d.start(evs, gjson.Result{})
	b := &rspDecBlock{index: d.next, open: true, item: itm}
	d.next++
	d.open = append(d.open, b)
	return append(evs, Event{Type: EvBlockStart, Index: b.index, Part: &p}), b
}

// stop completes a block (closing a custom call's input string first).
func (d *rspDecoder) stop(evs []Event, b *rspDecBlock) []Event {
	if b == nil || !b.open {
		return evs
	}
	if itm := b.item; itm != nil && itm.inString && itm.blk == b {
		itm.inString = false
		evs = append(evs, Event{Type: EvArgsDelta, Index: b.index, Text: `"}`})
	}
	b.open = false
	d.open = slices.DeleteFunc(d.open, func(o *rspDecBlock) bool { return o == b })
	return append(evs, Event{Type: EvBlockStop, Index: b.index})
}

// itemAdded reads response.output_item.added: a tool call's block starts here; message and reasoning
// blocks start with their first content.
func (d *rspDecoder) itemAdded(evs []Event, k int64, it gjson.Result) []Event {
	typ := it.Get("type").String()
	itm := d.item(k, typ)
	switch typ {
	case "function_call":
		evs = d.toolBlock(evs, itm, it)
		if args := it.Get("arguments").String(); args != "" {
			evs = d.argsDelta(evs, itm, args)
		}
	case "custom_tool_call":
		evs = d.toolBlock(evs, itm, it)
		if input := it.Get("input").String(); input != "" {
			evs = d.customDelta(evs, itm, input)
		}
	case "local_shell_call":
		evs = d.toolBlock(evs, itm, it)
	}
	return evs
}

// itemDone reads response.output_item.done: whatever the item holds that the stream did not show is given,
// then its blocks stop.
func (d *rspDecoder) itemDone(evs []Event, k int64, it gjson.Result) []Event {
	typ := it.Get("type").String()
	itm := d.item(k, typ)
	switch typ {
	case "message":
		for ci, c := range it.Get("content").Array() {
			if text, ok := rspContentText(c); ok {
				evs = d.textFill(evs, itm, int64(ci), text, true)
			}
		}
		for _, b := range append([]*rspDecBlock(nil), d.open...) {
			if b.item == itm {
				evs = d.stop(evs, b)
			}
		}
	case "reasoning":
		p, _ := rspItemPart(it)
		if itm.blk == nil && p.Text == "" && p.Signature == "" {
			break // an empty reasoning item says nothing
		}
		if len(itm.seen) == 0 {
			evs = d.thinking(evs, itm, 0, p.Text)
		}
		if itm.blk == nil {
			evs, itm.blk = d.begin(evs, itm, Part{Kind: PartThinking})
		}
		if p.Signature != "" && itm.blk.open {
			evs = append(evs, Event{Type: EvSignature, Index: itm.blk.index, Signature: p.Signature})
		}
		evs = d.stop(evs, itm.blk)
	case "function_call", "custom_tool_call", "local_shell_call":
		evs = d.toolBlock(evs, itm, it)
		if !itm.args {
			p, _ := rspItemPart(it)
			evs = d.argsDelta(evs, itm, p.ToolCall.Args)
		}
		evs = d.stop(evs, itm.blk)
	}
	return evs
}

// textBlock is a message's text block for content part ci, started when new; nil when it is complete.
func (d *rspDecoder) textBlock(evs []Event, itm *rspDecItem, ci int64) ([]Event, *rspDecBlock) {
	if b, ok := itm.parts[ci]; ok {
		if !b.open {
			return evs, nil
		}
		return evs, b
	}
	if itm.parts == nil {
		itm.parts = map[int64]*rspDecBlock{}
	}
	evs, b := d.begin(evs, itm, Part{Kind: PartText})
	itm.parts[ci] = b
	return evs, b
}

// textDelta gives text to an open text block.
func (d *rspDecoder) textDelta(evs []Event, b *rspDecBlock, text string) []Event {
	if b == nil || text == "" {
		return evs
	}
	b.text = true
	return append(evs, Event{Type: EvTextDelta, Index: b.index, Text: text})
}

// textFill reads a done event's full text: given when the part streamed none; stop ends the part.
func (d *rspDecoder) textFill(evs []Event, itm *rspDecItem, ci int64, text string, stop bool) []Event {
	b, ok := itm.parts[ci]
	switch {
	case !ok && text == "":
		return evs
	case !ok:
		evs, b = d.textBlock(evs, itm, ci)
	}
	if b.open && !b.text {
		evs = d.textDelta(evs, b, text)
	}
	if stop {
		evs = d.stop(evs, b)
	}
	return evs
}

// thinking gives reasoning text (summary part si) to the item's thinking block, started when new; summary
// parts are joined by a blank line.
func (d *rspDecoder) thinking(evs []Event, itm *rspDecItem, si int64, text string) []Event {
	if text == "" {
		return evs
	}
	if itm.blk == nil {
		evs, itm.blk = d.begin(evs, itm, Part{Kind: PartThinking})
	}
	b := itm.blk
	if !b.open {
		return evs
	}
	if b.text && si != itm.summary {
		evs = append(evs, Event{Type: EvThinkingDelta, Index: b.index, Text: "\n\n"})
	}
	if itm.seen == nil {
		itm.seen = map[int64]bool{}
	}
	itm.summary, itm.seen[si], b.text = si, true, true
	return append(evs, Event{Type: EvThinkingDelta, Index: b.index, Text: text})
}

// toolBlock starts a tool call's block when it has not started: its id is the call_id (the item id when
// the event has no call_id).
func (d *rspDecoder) toolBlock(evs []Event, itm *rspDecItem, it gjson.Result) []Event {
	if itm.blk != nil {
		return evs
	}
	d.tools = true
	id := it.Get("call_id").String()
	if id == "" {
		id = it.Get("id").String()
	}
	if id == "" {
		id = it.Get("item_id").String()
	}
	name := it.Get("name").String()
	if itm.kind == "local_shell_call" || it.Get("type").String() == "local_shell_call" {
		name = rspShellName
	}
	evs, itm.blk = d.begin(evs, itm, Part{Kind: PartToolCall, ToolCall: &ToolCall{ID: id, Name: name}})
	return evs
}

// argsDelta gives an arguments fragment to a tool call's open block.
func (d *rspDecoder) argsDelta(evs []Event, itm *rspDecItem, text string) []Event {
	if itm.blk == nil || !itm.blk.open || text == "" {
		return evs
	}
	itm.args = true
	return append(evs, Event{Type: EvArgsDelta, Index: itm.blk.index, Text: text})
}

// customDelta gives a custom call's raw input fragment as a fragment of the arguments {"input": "..."}:
// the object and string open with the first fragment and close when the block stops.
func (d *rspDecoder) customDelta(evs []Event, itm *rspDecItem, text string) []Event {
	if itm.blk == nil || !itm.blk.open || text == "" || (itm.args && !itm.inString) {
		return evs
	}
	frag := rspEscape(text)
	if !itm.inString {
		itm.inString = true
		frag = `{"input":"` + frag
	}
	return d.argsDelta(evs, itm, frag)
}

// rspEscape is s as the inside of a JSON string.
func rspEscape(s string) string {
	b, _ := json.Marshal(s)
	return strings.TrimSuffix(strings.TrimPrefix(string(b), `"`), `"`)
}

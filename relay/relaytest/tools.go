package relaytest

import (
	"encoding/json"
	"strconv"
)

// The tool-call answers (WithToolCall) of the OpenAI chat, Anthropic and Responses shapes: one call of the
// configured function, its arguments streamed as fragments (what the fake's chunks and faults count).

func (c *call) toolCallID() string { return "call_relaytest_" + strconv.Itoa(c.seq) }

// chatTool answers a chat completion with one tool call (finish_reason tool_calls).
func (c *call) chatTool() {
	id := "chatcmpl-relaytest-" + strconv.Itoa(c.seq)
	base := map[string]any{"id": id, "created": c.created, "model": c.model, "system_fingerprint": "fp_relaytest"}
	with := func(extra map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range base {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	fn := map[string]any{"name": c.b.toolName, "arguments": c.b.toolArgs}
	if !c.stream {
		msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil,
			"tool_calls": []any{map[string]any{"id": c.toolCallID(), "type": "function", "function": fn}}}
		resp := with(map[string]any{"object": "chat.completion",
			"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": "tool_calls"}}})
		if u := c.openaiUsage(); u != nil {
			resp["usage"] = u
		}
		c.answer(mustJSON(resp))
		return
	}
	chunk := func(delta map[string]any, finish any) []byte {
		return dataEvent(with(map[string]any{"object": "chat.completion.chunk",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}}))
	}
	var sp streamPlan
	sp.pre = [][]byte{chunk(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
		"index": 0, "id": c.toolCallID(), "type": "function", "function": map[string]any{"name": c.b.toolName, "arguments": ""}}}}, nil)}
	for _, p := range argPieces(c.b.toolArgs, c.b.chunks) {
		sp.content = append(sp.content, chunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": 0, "function": map[string]any{"arguments": p}}}}, nil))
	}
	sp.tail = [][]byte{chunk(map[string]any{}, "tool_calls")}
	if c.includeUsage && c.b.usage {
		sp.tail = append(sp.tail, dataEvent(with(map[string]any{"object": "chat.completion.chunk", "choices": []any{},
			"usage": c.openaiUsage()})))
	}
	sp.tail = append(sp.tail, []byte("data: [DONE]\n\n"))
	c.writeStream(sp)
}

// messagesTool answers an Anthropic message with one tool_use block (stop_reason tool_use).
func (c *call) messagesTool() {
	id := "msg_relaytest_" + strconv.Itoa(c.seq)
	toolID := "toolu_relaytest_" + strconv.Itoa(c.seq)
	msg := map[string]any{"id": id, "type": "message", "role": "assistant", "model": c.model}
	if !c.stream {
		msg["content"] = []any{map[string]any{"type": "tool_use", "id": toolID, "name": c.b.toolName,
			"input": json.RawMessage(rawOrEmpty(c.b.toolArgs))}}
		msg["stop_reason"], msg["stop_sequence"] = "tool_use", nil
		if c.b.usage {
			msg["usage"] = c.anthropicUsage(c.b.completionTokens)
		}
		c.answer(mustJSON(msg))
		return
	}
	msg["content"], msg["stop_reason"], msg["stop_sequence"] = []any{}, nil, nil
	if c.b.usage {
		msg["usage"] = c.anthropicUsage(1)
	}
	var sp streamPlan
	sp.pre = [][]byte{
		namedEvent("message_start", map[string]any{"type": "message_start", "message": msg}),
		namedEvent("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": toolID, "name": c.b.toolName, "input": map[string]any{}}}),
	}
	for _, p := range argPieces(c.b.toolArgs, c.b.chunks) {
		sp.content = append(sp.content, namedEvent("content_block_delta", map[string]any{"type": "content_block_delta",
			"index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": p}}))
	}
	sp.tail = c.anthropicTail("tool_use")
	c.writeStream(sp)
}

// responsesTool answers a Responses call with one function_call output item.
func (c *call) responsesTool() {
	id := "resp_relaytest_" + strconv.Itoa(c.seq)
	itemID := "fc_relaytest_" + strconv.Itoa(c.seq)
	item := func(status, args string) map[string]any {
		return map[string]any{"id": itemID, "type": "function_call", "status": status, "call_id": c.toolCallID(),
			"name": c.b.toolName, "arguments": args}
	}
	if !c.stream {
		c.answer(mustJSON(c.responseObject(id, "completed", []any{item("completed", c.b.toolArgs)}, c.responsesUsage())))
		return
	}
	seq := 0
	ev := func(typ string, fields map[string]any) []byte {
		fields["type"], fields["sequence_number"] = typ, seq
		seq++
		return namedEvent(typ, fields)
	}
	var sp streamPlan
	sp.pre = [][]byte{
		ev("response.created", map[string]any{"response": c.responseObject(id, "in_progress", []any{}, nil)}),
		ev("response.output_item.added", map[string]any{"output_index": 0, "item": item("in_progress", "")}),
	}
	for _, p := range argPieces(c.b.toolArgs, c.b.chunks) {
		sp.content = append(sp.content, ev("response.function_call_arguments.delta",
			map[string]any{"item_id": itemID, "output_index": 0, "delta": p}))
	}
	done := item("completed", c.b.toolArgs)
	sp.tail = [][]byte{
		ev("response.function_call_arguments.done", map[string]any{"item_id": itemID, "output_index": 0, "arguments": c.b.toolArgs}),
		ev("response.output_item.done", map[string]any{"output_index": 0, "item": done}),
		ev("response.completed", map[string]any{"response": c.responseObject(id, "completed", []any{done}, c.responsesUsage())}),
	}
	c.writeStream(sp)
}

func rawOrEmpty(s string) string {
	if s == "" {
		return "{}"
	}
	return s
}

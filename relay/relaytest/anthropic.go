package relaytest

import (
	"strconv"
)

func namedEvent(name string, v any) []byte {
	b := mustJSON(v)
	out := make([]byte, 0, len(b)+len(name)+16)
	out = append(out, "event: "...)
	out = append(out, name...)
	out = append(out, "\ndata: "...)
	out = append(out, b...)
	return append(out, '\n', '\n')
}

// anthropicUsage is the usage object of a message (or message_start, with output tokens so far).
func (c *call) anthropicUsage(output int) map[string]any {
	return map[string]any{
		"input_tokens":                c.b.promptTokens,
		"cache_creation_input_tokens": c.b.cacheWriteTokens,
		"cache_read_input_tokens":     c.b.cacheReadTokens,
		"output_tokens":               output,
	}
}

// messages answers POST /v1/messages in the Anthropic Messages shape.
func (c *call) messages() {
	if c.b.toolName != "" {
		c.messagesTool()
		return
	}
	id := "msg_relaytest_" + strconv.Itoa(c.seq)
	msg := map[string]any{"id": id, "type": "message", "role": "assistant", "model": c.model}
	if !c.stream {
		msg["content"] = []any{map[string]any{"type": "text", "text": c.fullText()}}
		msg["stop_reason"], msg["stop_sequence"] = "end_turn", nil
		if c.b.usage {
			msg["usage"] = c.anthropicUsage(c.b.completionTokens)
		}
		c.answer(mustJSON(msg))
		return
	}
	msg["content"] = []any{}
	msg["stop_reason"], msg["stop_sequence"] = nil, nil
	if c.b.usage {
		msg["usage"] = c.anthropicUsage(1)
	}
	var sp streamPlan
	sp.pre = [][]byte{
		namedEvent("message_start", map[string]any{"type": "message_start", "message": msg}),
		namedEvent("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}}),
		[]byte("event: ping\ndata: {\"type\": \"ping\"}\n\n"),
	}
	for _, p := range c.pieces() {
		sp.content = append(sp.content, namedEvent("content_block_delta", map[string]any{"type": "content_block_delta",
			"index": 0, "delta": map[string]any{"type": "text_delta", "text": p}}))
	}
	sp.tail = c.anthropicTail("end_turn")
	c.writeStream(sp)
}

// anthropicTail closes a one-block Messages stream: the block's stop, message_delta with the stop reason
// and the output usage, message_stop.
func (c *call) anthropicTail(stopReason string) [][]byte {
	delta := map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stopReason, "stop_sequence": nil}}
	if c.b.usage {
		delta["usage"] = map[string]int{"output_tokens": c.b.completionTokens}
	}
	return [][]byte{
		namedEvent("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0}),
		namedEvent("message_delta", delta),
		namedEvent("message_stop", map[string]any{"type": "message_stop"}),
	}
}

// countTokens answers POST /v1/messages/count_tokens with the configured prompt token count.
func (c *call) countTokens() {
	c.writeJSON(mustJSON(map[string]int{"input_tokens": c.b.promptTokens}))
}

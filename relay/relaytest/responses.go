package relaytest

import (
	"strconv"
)

// responsesUsage is the Responses API usage object, or nil when usage is off.
func (c *call) responsesUsage() any {
	if !c.b.usage {
		return nil
	}
	return map[string]any{
		"input_tokens":          c.b.promptTokens,
		"input_tokens_details":  map[string]int{"cached_tokens": c.b.cacheReadTokens},
		"output_tokens":         c.b.completionTokens,
		"output_tokens_details": map[string]int{"reasoning_tokens": 0},
		"total_tokens":          c.b.promptTokens + c.b.completionTokens,
	}
}

func (c *call) responseObject(id, status string, output []any, usage any) map[string]any {
	return map[string]any{
		"id": id, "object": "response", "created_at": c.created, "status": status, "error": nil,
		"incomplete_details": nil, "instructions": nil, "max_output_tokens": nil, "model": c.model,
		"output": output, "parallel_tool_calls": true, "previous_response_id": nil,
		"reasoning": map[string]any{"effort": nil, "summary": nil}, "store": true, "temperature": 1.0,
		"text": map[string]any{"format": map[string]string{"type": "text"}}, "tool_choice": "auto",
		"tools": []any{}, "top_p": 1.0, "truncation": "disabled", "usage": usage, "user": nil,
		"metadata": map[string]any{},
	}
}

func outputMessage(msgID, status, text string, parts bool) map[string]any {
	content := []any{}
	if parts {
		content = append(content, outputText(text))
	}
	return map[string]any{"id": msgID, "type": "message", "status": status, "role": "assistant", "content": content}
}

func outputText(text string) map[string]any {
	return map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
}

// responses answers POST /v1/responses; a stream ends with response.completed carrying usage, and no [DONE].
func (c *call) responses() {
	if c.b.toolName != "" {
		c.responsesTool()
		return
	}
	id := "resp_relaytest_" + strconv.Itoa(c.seq)
	msgID := "msg_relaytest_" + strconv.Itoa(c.seq)
	text := c.fullText()
	if !c.stream {
		out := []any{outputMessage(msgID, "completed", text, true)}
		c.answer(mustJSON(c.responseObject(id, "completed", out, c.responsesUsage())))
		return
	}
	seq := 0
	ev := func(typ string, fields map[string]any) []byte {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		b := mustJSON(fields)
		out := make([]byte, 0, len(b)+len(typ)+16)
		out = append(out, "event: "...)
		out = append(out, typ...)
		out = append(out, "\ndata: "...)
		out = append(out, b...)
		return append(out, '\n', '\n')
	}
	loc := func(m map[string]any) map[string]any {
		m["item_id"], m["output_index"], m["content_index"] = msgID, 0, 0
		return m
	}
	var sp streamPlan
	sp.pre = [][]byte{
		ev("response.created", map[string]any{"response": c.responseObject(id, "in_progress", []any{}, nil)}),
		ev("response.in_progress", map[string]any{"response": c.responseObject(id, "in_progress", []any{}, nil)}),
		ev("response.output_item.added", map[string]any{"output_index": 0, "item": outputMessage(msgID, "in_progress", "", false)}),
		ev("response.content_part.added", loc(map[string]any{"part": outputText("")})),
	}
	for _, p := range c.pieces() {
		sp.content = append(sp.content, ev("response.output_text.delta", loc(map[string]any{"delta": p, "logprobs": []any{}})))
	}
	done := outputMessage(msgID, "completed", text, true)
	sp.tail = [][]byte{
		ev("response.output_text.done", loc(map[string]any{"text": text, "logprobs": []any{}})),
		ev("response.content_part.done", loc(map[string]any{"part": outputText(text)})),
		ev("response.output_item.done", map[string]any{"output_index": 0, "item": done}),
		ev("response.completed", map[string]any{"response": c.responseObject(id, "completed", []any{done}, c.responsesUsage())}),
	}
	c.writeStream(sp)
}

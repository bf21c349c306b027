package convert

import "encoding/json"

// appendEvent appends one SSE event, "event: name\ndata: data\n\n" (no event line when name is "").
// Every encoder frames its events with it, so client streams are framed one way.
func appendEvent(dst []byte, name string, data []byte) []byte {
	if name != "" {
		dst = append(dst, "event: "...)
		dst = append(dst, name...)
		dst = append(dst, '\n')
	}
	dst = append(dst, "data: "...)
	dst = append(dst, data...)
	return append(dst, '\n', '\n')
}

// appendJSONEvent marshals v and appends it as one SSE event. The values encoders write are their own
// structs and maps of plain values, which always marshal.
func appendJSONEvent(dst []byte, name string, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{}`)
	}
	return appendEvent(dst, name, b)
}

// argsObject turns tool-call arguments held as JSON text into the object Anthropic and Gemini carry ("" is
// {}). ok is false when the text is not a JSON object: the caller decides whether that is the caller's
// error (*Invalid in a request) or the upstream's (a bad reply).
func argsObject(args string) (json.RawMessage, bool) {
	if args == "" {
		return json.RawMessage(`{}`), true
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &probe); err != nil {
		return nil, false
	}
	return json.RawMessage(args), true
}

// argsText turns the arguments object Anthropic and Gemini send into the JSON text canonical ToolCall.Args
// holds (null or absent is "{}").
func argsText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return "{}"
	}
	return string(raw)
}

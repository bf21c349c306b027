package relay

import (
	"bytes"
	"testing"

	"tollgate/relay/adaptor"
	"tollgate/relay/adaptor/anthropic"
	"tollgate/relay/adaptor/openai"
)

// FuzzParseEvent: any raw SSE event parses without a panic and without changing the bytes that are passed on
// to the client; data is present exactly when a data: line is,
// holds one line per data: line, and the name is the last event: line's, trimmed.
func FuzzParseEvent(f *testing.F) {
	for _, s := range []string{
		"data: {\"choices\":[]}\n\n",
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5}}}\n\n",
		"data: [DONE]\r\n\r\n",
		": keep-alive\n\n",
		"event:error\ndata:{\"error\":{\"message\":\"x\"}}\ndata: more\n\n",
		"data:\n",
		"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"usage\":{}}}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		orig := bytes.Clone(raw)
		name, data := parseEvent(raw)
		if !bytes.Equal(raw, orig) {
			t.Fatalf("parseEvent changed the event it is about to pass on: %q became %q", orig, raw)
		}
		var dataLines int
		var lastName []byte
		named := false
		for _, line := range bytes.Split(raw, []byte("\n")) {
			line = bytes.TrimRight(line, "\r")
			switch {
			case bytes.HasPrefix(line, dataPrefix):
				dataLines++
			case bytes.HasPrefix(line, eventPrefix):
				lastName, named = bytes.TrimSpace(line[len(eventPrefix):]), true
			}
		}
		if (dataLines > 0) != (data != nil) {
			t.Fatalf("parseEvent(%q): data %q with %d data lines", raw, data, dataLines)
		}
		if dataLines > 0 && bytes.Count(data, []byte("\n")) != dataLines-1 {
			t.Fatalf("parseEvent(%q): data %q does not join %d lines", raw, data, dataLines)
		}
		if named && name != string(lastName) || !named && name != "" {
			t.Fatalf("parseEvent(%q): name %q, want %q", raw, name, lastName)
		}
		for _, ad := range []adaptor.Adaptor{openai.Adaptor{}, anthropic.Adaptor{}} {
			for _, ep := range adaptor.Endpoints() {
				_ = ad.Terminal(ep, name, data)
			}
		}
		_ = isErrorEvent(name, data)
	})
}

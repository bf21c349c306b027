package relay

import (
	"bytes"
	"testing"

	"github.com/tidwall/gjson"

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

// A chunk whose usage is an object is always seen by mayCarryUsage (it decides whether the meter reads the
// chunk before it is sent, so a usage-only chunk we asked for is dropped); "usage":null is not.
func TestMayCarryUsage(t *testing.T) {
	for data, want := range map[string]bool{
		`{"choices":[],"usage":{"prompt_tokens":3}}`:                    true,
		`{"choices":[] , "usage" :` + "\n\t" + ` {"prompt_tokens":3}}`:  true,
		`{"choices":[{"delta":{"content":"a"}}],"usage":null}`:          false,
		`{"choices":[{"delta":{"content":"\"usage\""}}],"usage":{}}`:    true,
		`{"choices":[{"delta":{"content":"usage"}}]}`:                   false,
		`{"choices":[{"delta":{"content":"\"usage\":"}}],"usage":null}`: false,
		`{"choices":[{"usage":{}}],"usage":null}`:                       true, // a nested key: read early, no harm
		`{"usage"`: false,
	} {
		if got := mayCarryUsage([]byte(data)); got != want {
			t.Errorf("mayCarryUsage(%s) = %v, want %v", data, got, want)
		}
	}
}

// FuzzMayCarryUsage: for any JSON without escapes whose usage is an object (as the meter reads it),
// mayCarryUsage says so.
func FuzzMayCarryUsage(f *testing.F) {
	f.Add([]byte(`{"choices":[],"usage":{"prompt_tokens":3}}`))
	f.Add([]byte(`{"usage":null,"usage":{"a":1}}`))
	f.Add([]byte(`{"x":"usage","usage" : {}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !gjson.ValidBytes(data) || bytes.IndexByte(data, '\\') >= 0 {
			return
		}
		if gjson.GetBytes(data, "usage").IsObject() && !mayCarryUsage(data) {
			t.Fatalf("mayCarryUsage(%s) = false for a usage object", data)
		}
	})
}

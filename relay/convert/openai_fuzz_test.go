package convert

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzOAIParseRequest: ParseRequest never panics, and what it accepts BuildRequest and the answer side take
// without panicking either.
func FuzzOAIParseRequest(f *testing.F) {
	for _, tc := range oaiParseCases {
		f.Add([]byte(tc.body))
	}
	for _, tc := range oaiParseErrorCases {
		f.Add([]byte(tc.body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := oaiTestCodec.ParseRequest(body)
		if err != nil {
			if r != nil {
				t.Fatalf("a request and an error: %v", err)
			}
			return
		}
		if _, err := oaiTestCodec.BuildRequest(r); err != nil && !strings.Contains(err.Error(), "cannot be expressed") {
			t.Fatalf("BuildRequest of a parsed request: %v", err)
		}
		_, _ = oaiTestCodec.ParseResponse(body)
		_ = oaiTestCodec.ParseError(400, body)
	})
}

// FuzzOAIDecoder: the stream decoder never panics on any sequence of events (the input split into events at
// blank lines, "event:" lines naming them), its events always encode, and the encoder writes nothing after
// its terminal event.
func FuzzOAIDecoder(f *testing.F) {
	for _, tc := range oaiDecodeCases {
		f.Add([]byte(strings.Join(tc.chunks, "\n\n")))
	}
	f.Add([]byte("event: error\n{\"error\":{\"message\":\"x\"}}"))
	f.Fuzz(func(t *testing.T, input []byte) {
		d := oaiTestCodec.NewDecoder()
		e := oaiTestCodec.NewEncoder(&Request{Model: "m", IncludeUsage: true})
		var out []byte
		ended := false
		for _, raw := range bytes.Split(input, []byte("\n\n")) {
			name := ""
			if rest, ok := bytes.CutPrefix(raw, []byte("event: ")); ok {
				n, data, _ := bytes.Cut(rest, []byte("\n"))
				name, raw = string(n), data
			}
			evs, err := d.Decode(name, raw)
			if err != nil {
				break
			}
			for _, ev := range evs {
				ended = ended || ev.Type == EvError
				out = e.Encode(out, ev)
			}
		}
		for _, ev := range d.Finish(!ended) {
			out = e.Encode(out, ev)
		}
		n := len(out)
		out = e.Encode(out, Event{Type: EvTextDelta, Text: "late"})
		out = e.Encode(out, Event{Type: EvEnd})
		if len(out) != n && n > 0 {
			t.Fatalf("the encoder wrote after its terminal event: %q", out[n:])
		}
	})
}

package convert

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// FuzzAntParseRequest: any body gives a request or an *Invalid / *Unsupported, never a panic; what parses
// builds (or is refused) without a panic, as valid JSON.
func FuzzAntParseRequest(f *testing.F) {
	for _, tc := range antParseCases {
		f.Add([]byte(tc.body))
	}
	for _, tc := range antParseErrorCases {
		f.Add([]byte(tc.body))
	}
	c := antCodecT(f)
	for _, tc := range antBuildCases {
		if b, err := c.BuildRequest(tc.req); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := c.ParseRequest(body)
		if err != nil {
			var u *Unsupported
			var inv *Invalid
			if !errors.As(err, &u) && !errors.As(err, &inv) {
				t.Fatalf("ParseRequest error %T %v is neither *Invalid nor *Unsupported", err, err)
			}
			return
		}
		out, err := c.BuildRequest(r)
		if err != nil {
			var u *Unsupported
			if !errors.As(err, &u) {
				t.Fatalf("BuildRequest error %T %v is not *Unsupported", err, err)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("BuildRequest wrote invalid JSON: %s", out)
		}
	})
}

// antRelayStream runs an upstream stream as the relay does: decode each event into the client's encoder; on
// a decode error, Finish(false) and an EvError; else Finish(ended), and an EvError when not ended.
func antRelayStream(t testing.TB, sse []byte, ended bool) []byte {
	d := antCodecT(t).NewDecoder()
	e := antCodecT(t).NewEncoder(&Request{Model: "asked"})
	var out []byte
	for _, ev := range antSplitSSE(sse) {
		evs, err := d.Decode(ev.name, []byte(ev.data))
		if err != nil {
			ended = false
			break
		}
		for _, c := range evs {
			out = e.Encode(out, c)
		}
	}
	for _, c := range d.Finish(ended) {
		out = e.Encode(out, c)
	}
	if !ended {
		out = e.Encode(out, Event{Type: EvError, Err: &Error{Status: 502, Type: ErrServer, Message: "cut"}})
	}
	return out
}

// antCheckClientStream fails unless out is a stream Anthropic's clients read: well-formed, and read by the
// official SDK without error when it ends normally.
func antCheckClientStream(t *testing.T, out []byte) {
	if err := antCheckStream(out); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	evs := antSplitSSE(out)
	if len(evs) > 0 && evs[len(evs)-1].name == "message_stop" {
		if _, err := antSDKRead(out); err != nil {
			t.Fatalf("SDK: %v\n%s", err, out)
		}
	}
}

// FuzzAntDecoder: any upstream stream decodes without a panic, and what the Anthropic encoder writes of it
// is a well-formed stream.
func FuzzAntDecoder(f *testing.F) {
	f.Add([]byte(antUpstream), true)
	f.Add([]byte(antUpstream[:len(antUpstream)/2]), false)
	f.Add([]byte(strings.ReplaceAll(antUpstream, `"index":1`, `"index":0`)), true)
	f.Add([]byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":-3,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"s\"}}\n\n"), true)
	f.Add([]byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"o\"}}\n\n"), true)
	for _, tc := range antToleranceCases {
		f.Add([]byte(tc.sse), tc.ended)
	}
	f.Fuzz(func(t *testing.T, sse []byte, ended bool) {
		antCheckClientStream(t, antRelayStream(t, sse, ended))
	})
}

// antFuzzEvents makes a canonical event sequence of b, three bytes an event (type, index, payload), ending
// with EvEnd or EvError.
func antFuzzEvents(b []byte) []Event {
	kinds := []PartKind{PartText, PartThinking, PartToolCall, PartRedactedThinking, PartImage, ""}
	texts := []string{"", "x", `{"a":`, "1}", "é\n<&>"}
	var evs []Event
	for ; len(b) >= 3; b = b[3:] {
		ev := Event{Type: EventType(int(b[0]) % int(EvEnd+1)), Index: int(b[1]%5) - 1}
		txt := texts[int(b[2])%len(texts)]
		switch ev.Type {
		case EvStart:
			ev.ID, ev.Model = txt, txt
			if b[2]%2 == 0 {
				ev.Usage = &Usage{Input: int64(b[2])}
			}
		case EvBlockStart:
			p := Part{Kind: kinds[int(b[2])%len(kinds)], Text: txt, Data: txt}
			if p.Kind == PartToolCall && b[2]%3 != 0 {
				p.ToolCall = &ToolCall{ID: txt, Name: "f", Args: txt}
			}
			if b[2]%7 != 0 {
				ev.Part = &p
			}
		case EvTextDelta, EvThinkingDelta, EvArgsDelta:
			ev.Text = txt
		case EvSignature:
			ev.Signature = txt
		case EvFinish:
			ev.Finish = []FinishReason{FinishStop, FinishLength, FinishToolCalls, FinishFilter, FinishError, ""}[int(b[2])%6]
			ev.StopSequence = txt
		case EvUsage:
			ev.Usage = &Usage{Input: int64(b[2]), Output: int64(b[1])}
		case EvError:
			if b[2]%2 == 0 {
				ev.Err = &Error{Type: ErrorType(txt), Status: int(b[2]), Message: txt}
			}
		}
		evs = append(evs, ev)
	}
	if len(b) > 0 && b[0]%2 == 1 {
		return append(evs, Event{Type: EvError})
	}
	return append(evs, Event{Type: EvEnd})
}

// FuzzAntEncoder: any canonical event sequence, in any order, is written as a well-formed stream that the
// official SDK reads.
func FuzzAntEncoder(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 1, 0, 2, 1, 1, 6, 1, 0, 1, 2, 2, 5, 2, 2, 7, 0, 2, 8, 0, 0})
	f.Add([]byte{2, 3, 1, 4, 0, 4, 5, 4, 2, 1, 1, 2, 6, 2, 0, 9, 0, 0})
	f.Add([]byte{1, 1, 3, 1, 1, 3, 3, 1, 1, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		antCheckClientStream(t, antEncodeAll(t, antFuzzEvents(b)))
	})
}

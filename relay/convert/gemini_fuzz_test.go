package convert

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// FuzzGemParseRequest reads arbitrary bodies: no panic; what reads builds again (Gemini and back) into
// valid JSON or a typed refusal.
func FuzzGemParseRequest(f *testing.F) {
	for _, tc := range gemParseCases {
		f.Add([]byte(tc.body))
	}
	for _, tc := range gemParseErrorCases {
		f.Add([]byte(tc.body))
	}
	c := gemCodecT(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := c.ParseRequest(body)
		if err != nil {
			return
		}
		r.Model = "gemini-3-pro"
		out, err := c.BuildRequest(r)
		if err != nil {
			var u *Unsupported
			var inv *Invalid
			if !errors.As(err, &u) && !errors.As(err, &inv) {
				t.Fatalf("BuildRequest: untyped error %v", err)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("BuildRequest wrote invalid JSON: %s", out)
		}
	})
}

// FuzzGemDecoder feeds arbitrary SSE data (events split on blank lines) to the decoder and its events to both
// encoders, as the relay does (a decode error cuts the stream): no panic, and the array the client gets is
// always one valid JSON array, each SSE event valid JSON.
func FuzzGemDecoder(f *testing.F) {
	f.Add([]byte(strings.Join(gemStreamChunks, "\n\n")))
	f.Add([]byte(`{"candidates":[{"content":{"parts":[{"text":"a"}]}}]}` + "\n\n" + `{"error":{"code":503,"message":"x","status":"UNAVAILABLE"}}`))
	f.Add([]byte(`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":[1]}}]}}]}`))
	f.Add([]byte(`{"promptFeedback":{"blockReason":"SAFETY"}}` + "\n\n" + `{"candidates":[`))
	f.Add([]byte(`{"candidates":[{"content":{"parts":[{"text":"t","thought":true,"thoughtSignature":"s"},{"functionCall":{"name":"g"}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":-4}}`))
	c := gemCodecT(f)
	f.Fuzz(func(t *testing.T, stream []byte) {
		d := c.NewDecoder()
		arr := NewGeminiArrayEncoder(&Request{Reasoning: &Reasoning{Enabled: true, Summary: true}})
		sse := c.NewEncoder(nil)
		var a, s []byte
		emit := func(evs []Event) {
			for _, ev := range evs {
				a, s = arr.Encode(a, ev), sse.Encode(s, ev)
			}
		}
		cut := false
		for _, data := range bytes.Split(stream, []byte("\n\n")) {
			evs, err := d.Decode("", data)
			if err != nil {
				cut = true
				break
			}
			emit(evs)
		}
		emit(d.Finish(!cut))
		if cut {
			emit([]Event{{Type: EvError, Err: &Error{Status: 502, Type: ErrServer, Message: "cut"}}})
		}
		if !json.Valid(a) || len(a) == 0 || a[0] != '[' {
			t.Fatalf("array stream is not one JSON array: %q", a)
		}
		for _, ev := range bytes.Split(bytes.TrimSuffix(s, []byte("\n\n")), []byte("\n\n")) {
			if len(s) > 0 && (!bytes.HasPrefix(ev, []byte("data: ")) || !json.Valid(ev[len("data: "):])) {
				t.Fatalf("SSE event is not data: JSON: %q", ev)
			}
		}
	})
}

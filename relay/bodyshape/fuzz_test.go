package bodyshape

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzCheck: Check never panics or recurses, accepts exactly the JSON objects encoding/json accepts (unless
// too deep or with twin keys), and a
// body it accepts has no top-level key that encoding/json would read twice.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"a","mod\u0065l":"b"}`, `{"stream_options":{"include_usage":true}}`, `{"a":[[[[{}]]]]}`,
		`{"\ud83d\ude00":1}`, `{"max_tokens":1e400}`, `[`, `{"Model":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		err := Check(body)
		if err != nil {
			e, ok := err.(*Error)
			if !ok {
				t.Fatalf("Check returned %T", err)
			}
			// Refused as malformed: encoding/json must agree that it is not one object.
			if trimmed := bytes.TrimLeft(body, " \t\r\n"); e.Code == InvalidJSON && json.Valid(body) && len(trimmed) > 0 && trimmed[0] == '{' {
				t.Fatalf("Check refused the valid object %q as malformed", body)
			}
			return
		}
		if !json.Valid(body) {
			t.Fatalf("Check accepted invalid JSON %q", body)
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal(body, &top); err != nil {
			t.Fatalf("Check accepted a non-object %q: %v", body, err)
		}
		// encoding/json folds case when matching a struct field: a twin under folding must have been refused.
		var fields struct {
			Model     json.RawMessage `json:"model"`
			Stream    json.RawMessage `json:"stream"`
			MaxTokens json.RawMessage `json:"max_tokens"`
		}
		_ = json.Unmarshal(body, &fields)
		for k, want := range map[string]json.RawMessage{"model": fields.Model, "stream": fields.Stream, "max_tokens": fields.MaxTokens} {
			if want != nil && string(top[k]) != string(want) {
				t.Fatalf("Check accepted %q, where the gateway reads %s=%s and a folding decoder %s", body, k, top[k], want)
			}
		}
	})
}

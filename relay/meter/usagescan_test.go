package meter

import (
	"bytes"
	"testing"

	"github.com/tidwall/gjson"
)

// A chunk whose usage is an object is always seen by MayCarryUsage (the relay reads such a chunk before
// it is sent, so a usage-only chunk we asked for is dropped); "usage":null is not.
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
		if got := MayCarryUsage([]byte(data)); got != want {
			t.Errorf("MayCarryUsage(%s) = %v, want %v", data, got, want)
		}
	}
}

// FuzzMayCarryUsage: for any JSON without escapes whose usage is an object (as the meter reads it),
// MayCarryUsage says so, and the meter reads its usage (an escape anywhere makes it parse the chunk).
func FuzzMayCarryUsage(f *testing.F) {
	f.Add([]byte(`{"choices":[],"usage":{"prompt_tokens":3}}`))
	f.Add([]byte(`{"usage":null,"usage":{"a":1}}`))
	f.Add([]byte(`{"x":"usage","usage" : {}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !gjson.ValidBytes(data) {
			return
		}
		if bytes.IndexByte(data, '\\') >= 0 {
			if !mayHoldUsage(data) {
				t.Fatalf("mayHoldUsage(%s) = false with an escape", data)
			}
			return
		}
		if gjson.GetBytes(data, "usage").IsObject() && !MayCarryUsage(data) {
			t.Fatalf("MayCarryUsage(%s) = false for a usage object", data)
		}
		for _, path := range []string{"usage", "x_groq.usage"} {
			if gjson.GetBytes(data, path).IsObject() && !mayHoldUsage(data) {
				t.Fatalf("mayHoldUsage(%s) = false for a usage object at %s", data, path)
			}
		}
	})
}

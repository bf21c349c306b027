package meter

import (
	"testing"

	"github.com/tidwall/gjson"

	"tollgate/relay/adaptor"
)

// FuzzMeter: any upstream body or event, on any endpoint, meters without a panic, and usage is never
// negative (a negative count would credit the caller).
func FuzzMeter(f *testing.F) {
	f.Add(uint8(adaptor.ChatCompletions), "", []byte(`{"usage":{"prompt_tokens":10,"completion_tokens":20,"prompt_tokens_details":{"cached_tokens":4}},"choices":[{"message":{"content":"hi"}}]}`))
	f.Add(uint8(adaptor.ChatCompletions), "", []byte(`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":-7}}`))
	f.Add(uint8(adaptor.Messages), "message_start", []byte(`{"type":"message_start","message":{"usage":{"input_tokens":5,"output_tokens":1}}}`))
	f.Add(uint8(adaptor.Messages), "message_delta", []byte(`{"type":"message_delta","usage":{"output_tokens":-3,"cache_read_input_tokens":9223372036854775807}}`))
	f.Add(uint8(adaptor.Responses), "", []byte(`{"type":"response.completed","response":{"usage":{"input_tokens":1e30,"output_tokens":"12"}}}`))
	f.Add(uint8(adaptor.Embeddings), "", []byte(`{"usage":{"prompt_tokens":-100,"total_tokens":1}}`))
	f.Fuzz(func(t *testing.T, ep uint8, name string, data []byte) {
		e := adaptor.Endpoint(ep % uint8(adaptor.CountTokens+1))
		body, events := New(e), New(e)
		body.Body(data)
		events.Event(name, data)
		events.Event(name, data) // a repeated final event must not add up
		for _, m := range []*Meter{body, events} {
			u, _ := m.Usage()
			if u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.CacheWrite < 0 {
				t.Fatalf("endpoint %v, %q: negative usage %+v", e, data, u)
			}
			_ = m.Text()
		}
	})
}

func FuzzOpenAIChunk_MatchesPathLookups(f *testing.F) {
	for _, s := range []string{
		`{"choices":[{"delta":{"content":"hi","reasoning_content":"hm","tool_calls":[{"function":{"arguments":"{\"a\""}},{"function":{}}]}}]}`,
		`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":7}}`,
		`{"choices":null,"usage":{"prompt_tokens":1}}`,
		`{"choices":[{"text":"x","delta":"y"},{"delta":{"content":{"a":1}}}],"usage":null}`,
		`{"choices":{"delta":{"content":"z"}},"usage":{"input_tokens":2,"output_tokens":3}}`,
		`{"choices":[{"delta":{"content":"a","content":"b"}}],"choices":[{"delta":{"content":"c"}}]}`,
		`{"ch\u006fices":[{"d\u0065lta":{"content":"e"}}]}`, `[1,2]`, `"s"`, ``,
		// a first tool_calls without a match: a path look-up goes on to the next one
		`{"choices":[{"delta":{"tool_calls":null,"tool_calls":[{"function":{"arguments":"abc"}}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":{"x":1},"tool_calls":[{"function":{"arguments":"abc"}}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":{"#":{"function":{"arguments":"abc"}}}}}]}`,
		`{"choices":[{"delta":{"tool_calls":[],"tool_calls":[{"function":{"arguments":"abc"}}]}}]}`,
	} {
		f.Add([]byte(s), "")
		f.Add([]byte(s), "x_usage")
	}
	f.Fuzz(func(t *testing.T, data []byte, usageAt string) {
		if !gjson.Valid(string(data)) {
			return // read by look-ups in both
		}
		got, want := New(adaptor.ChatCompletions), New(adaptor.ChatCompletions)
		got.UsageAt, want.UsageAt = usageAt, usageAt
		g, w := got.openAIChunk(data), want.openAIChunkByPaths(data)
		gu, _ := got.Usage()
		wu, _ := want.Usage()
		if g != w || gu != wu || got.Text() != want.Text() {
			t.Fatalf("%q: one pass (%v, %+v, %q) != look-ups (%v, %+v, %q)", data, g, gu, got.Text(), w, wu, want.Text())
		}
	})
}

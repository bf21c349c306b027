package meter

import (
	"testing"

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

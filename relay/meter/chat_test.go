package meter

import (
	"testing"

	"tollgate/relay/adaptor"
)

var chatChunks = []string{
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":2}}}`,
	`{"choices":[{"delta":{"reasoning_content":"ab","content":"x","reasoning_content":"zz"}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"cd"}},{"function":{"arguments":"ef"}}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":{"#":{"function":{"arguments":"odd"}}}}}]}`,
	`{"choices":[{"delta":{"content":"a"},"delta":{"content":"b"}}],"choices":[{"delta":{"content":"c"}}]}`,
	`{"choices":[{"text":"completion","text":"again"}],"usage":{"prompt_tokens":1},"usage":{"prompt_tokens":9}}`,
	`{"usage":null,"usage":{"prompt_tokens":5,"completion_tokens":6}}`,
	`{"choices":{},"usage":{"prompt_tokens":5}}`,
	`{"choices":{"a":{"delta":{"content":"obj"}}}}`,
	`{"us\u0061ge":{"prompt_tokens":7},"choices":[{"delta":{"cont\u0065nt":"esc"}}]}`,
	`{"x_groq":{"usage":{"prompt_tokens":4,"completion_tokens":2}},"choices":[]}`,
	`[{"usage":{"prompt_tokens":1}}]`,
	`"usage"`,
	`data: {"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5}}`,
	`{"choices":[]}` + "\n" + `{"usage":{"prompt_tokens":10}}`,
	`{"choices":["delta",{"delta":"content"},{"delta":{"content":7}}]}`,
}

// The one-walk reading of a chat chunk gives what the path reads gave: the same usage, text and usage-only
// answer, also for repeated keys, escaped keys and values of the wrong type.
func TestChatEvent_OneWalkReadsWhatPathsRead(t *testing.T) {
	for _, c := range chatChunks {
		checkChatEvent(t, []byte(c))
	}
}

// FuzzChatEvent: the same for any input (one that is not valid JSON is read by the paths themselves).
func FuzzChatEvent(f *testing.F) {
	for _, c := range chatChunks {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkChatEvent(t, data) })
}

func checkChatEvent(t *testing.T, data []byte) {
	t.Helper()
	walk, paths := New(adaptor.ChatCompletions), New(adaptor.ChatCompletions)
	walk.UsageAt, paths.UsageAt = "x_groq.usage", "x_groq.usage"
	gotOnly, wantOnly := walk.Event("", data), paths.chatEventByPaths(data)
	gu, gok := walk.Usage()
	wu, wok := paths.Usage()
	if gotOnly != wantOnly || gu != wu || gok != wok || walk.OutputReported() != paths.OutputReported() || walk.Text() != paths.Text() {
		t.Fatalf("%s:\n one walk: usage-only %v usage %+v %v text %q\n paths:    usage-only %v usage %+v %v text %q",
			data, gotOnly, gu, gok, walk.Text(), wantOnly, wu, wok, paths.Text())
	}
}

// BenchmarkChatEvent meters a typical content chunk (the per-event cost of a stream); -paths for the reference.
func BenchmarkChatEvent(b *testing.B) {
	data := []byte(chatChunks[0])
	b.Run("walk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m := Meter{ep: adaptor.ChatCompletions}
			m.Event("", data)
		}
	})
	b.Run("paths", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m := Meter{ep: adaptor.ChatCompletions}
			m.chatEventByPaths(data)
		}
	})
}

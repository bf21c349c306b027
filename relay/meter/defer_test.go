package meter

import (
	"fmt"
	"strings"
	"testing"

	"tollgate/relay/adaptor"
)

type sseEvent struct{ name, data string }

// deferStreams are streams of each family: usage reported or not, text, reasoning and tool-call pieces.
var deferStreams = map[adaptor.Endpoint][]sseEvent{
	adaptor.ChatCompletions: {
		{"", `{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`},
		{"", `{"choices":[{"index":0,"delta":{"content":"Hello"}}]}`},
		{"", `{"choices":[{"index":0,"delta":{"reasoning_content":"think"}}]}`},
		{"", `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":"}}]}}]}`},
		{"", `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`},
		{"", `{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":4}}}`},
	},
	adaptor.Completions: {
		{"", `{"choices":[{"text":"once upon"}]}`},
		{"", `{"choices":[{"text":" a time"}]}`},
	},
	adaptor.Messages: {
		{"message_start", `{"type":"message_start","message":{"usage":{"input_tokens":20,"cache_read_input_tokens":5,"output_tokens":1}}}`},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`},
		{"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"x\""}}`},
		{"message_delta", `{"type":"message_delta","usage":{"output_tokens":9}}`},
	},
	adaptor.Responses: {
		{"response.output_text.delta", `{"type":"response.output_text.delta","delta":"Yes"}`},
		{"response.completed", `{"type":"response.completed","response":{"usage":{"input_tokens":3,"output_tokens":2}}}`},
	},
	adaptor.GenerateContent: {
		{"", `{"candidates":[{"content":{"parts":[{"text":"Ja"}]}}]}`},
		{"", `{"candidates":[{"content":{"parts":[{"text":"!"}]}}],"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":2}}`},
	},
}

func meterState(m *Meter) string {
	u, present := m.Usage()
	return fmt.Sprintf("%+v %v %v %q", u, present, m.OutputReported(), m.Text())
}

// eagerState is what reading every event's usage and text at once, in order, leaves: the meaning Event and
// Defer must keep however lazily they read.
func eagerState(ep adaptor.Endpoint, events []string) string {
	m := New(ep)
	for _, d := range events {
		m.eventText([]byte(d))
		m.eventUsage([]byte(d))
	}
	return fmt.Sprintf("%+v %v %v %q", m.usage, m.present, m.outSeen, m.text.String())
}

// A deferred event meters as Event would: every family, with and without its usage, with an Event (the
// relay's metered-first path) between deferred ones, usage asked for midway (its text read later), and streams
// long enough to be read in several batches.
func TestDefer_MetersAsEvent(t *testing.T) {
	for ep, evs := range deferStreams {
		for _, cut := range []int{len(evs), len(evs) - 1} { // with and without the last event (usage, mostly)
			for _, repeat := range []int{1, 300} {
				var stream []sseEvent
				for range repeat {
					stream = append(stream, evs[:cut]...)
				}
				now, later := New(ep), New(ep)
				var datas []string
				for i, e := range stream {
					datas = append(datas, e.data)
					now.Event(e.name, []byte(e.data))
					if i%7 == 3 {
						later.Event(e.name, []byte(e.data))
					} else {
						later.Defer([]byte(e.data))
					}
					if i%5 == 2 {
						later.Usage() // reads the usage of what is deferred so far; its text stays for Text
					}
				}
				if a, b, want := meterState(now), meterState(later), eagerState(ep, datas); a != want || b != want {
					t.Fatalf("%v, %d events: Event %s, Defer %s, each read at once %s", ep, len(stream), a, b, want)
				}
			}
		}
	}
}

// The bytes deferred are the meter's own copy: the relay reuses its buffer for the next event.
func TestDefer_CopiesTheEvent(t *testing.T) {
	m := New(adaptor.ChatCompletions)
	buf := []byte(`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}`)
	m.Defer(buf)
	copy(buf, strings.Repeat("x", len(buf)))
	if u, ok := m.Usage(); !ok || u.Input != 3 || u.Output != 2 {
		t.Fatalf("usage %+v %v, want 3/2", u, ok)
	}
}

// Usage under a UsageAt path is read from deferred events, whatever its last key (the scan that skips most
// chunks looks for "usage").
func TestDefer_ReadsUsageAtAnyPath(t *testing.T) {
	for path, chunk := range map[string]string{
		"x_groq.usage":   `{"choices":[],"x_groq":{"usage":{"prompt_tokens":5,"completion_tokens":3}}}`,
		"x_vendor.tally": `{"choices":[],"x_vendor":{"tally":{"prompt_tokens":5,"completion_tokens":3}}}`,
	} {
		m := New(adaptor.ChatCompletions)
		m.UsageAt = path
		m.Defer([]byte(`{"choices":[{"index":0,"delta":{"content":"hi"}}]}`))
		m.Defer([]byte(chunk))
		if u, ok := m.Usage(); !ok || u.Input != 5 || u.Output != 3 || !m.OutputReported() {
			t.Errorf("%s: usage %+v %v, want 5/3", path, u, ok)
		}
	}
}

// FuzzDefer: any events on any endpoint meter the same through Event, through Defer, and read at once.
func FuzzDefer(f *testing.F) {
	for ep, evs := range deferStreams {
		var b strings.Builder
		for _, e := range evs {
			b.WriteString(e.name + "\x00" + e.data + "\x01")
		}
		f.Add(uint8(ep), b.String())
	}
	f.Fuzz(func(t *testing.T, ep uint8, stream string) {
		e := adaptor.Endpoint(ep % uint8(adaptor.CountTokens+1))
		now, later := New(e), New(e)
		var datas []string
		for _, ev := range strings.Split(stream, "\x01") {
			name, data, _ := strings.Cut(ev, "\x00")
			datas = append(datas, data)
			now.Event(name, []byte(data))
			later.Defer([]byte(data))
			if len(data)%3 == 0 {
				later.Usage()
			}
		}
		if a, b, want := meterState(now), meterState(later), eagerState(e, datas); a != want || b != want {
			t.Fatalf("Event %s, Defer %s, each read at once %s", a, b, want)
		}
	})
}

// BenchmarkDeferredStreamUsage: a 20-chunk chat stream deferred and its usage asked for, as the relay's finish
// does (the text is not wanted: the upstream reported its output).
func BenchmarkDeferredStreamUsage(b *testing.B) {
	chunk := []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}],"usage":null}`)
	last := []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":20}}`)
	b.ReportAllocs()
	for b.Loop() {
		m := New(adaptor.ChatCompletions)
		for range 20 {
			m.Defer(chunk)
		}
		m.Defer(last)
		if _, ok := m.Usage(); !ok || !m.OutputReported() {
			b.Fatal("no usage")
		}
	}
}

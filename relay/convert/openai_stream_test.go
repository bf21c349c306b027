package convert

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// oaiEvString is one canonical event as a short line, for comparing event sequences.
func oaiEvString(ev Event) string {
	switch ev.Type {
	case EvStart:
		return fmt.Sprintf("start %s %s", ev.ID, ev.Model)
	case EvBlockStart:
		if ev.Part == nil {
			return fmt.Sprintf("block %d ?", ev.Index)
		}
		if ev.Part.Kind == PartToolCall && ev.Part.ToolCall != nil {
			return fmt.Sprintf("block %d tool %s %s", ev.Index, ev.Part.ToolCall.ID, ev.Part.ToolCall.Name)
		}
		return fmt.Sprintf("block %d %s", ev.Index, ev.Part.Kind)
	case EvTextDelta:
		return fmt.Sprintf("text %d %s", ev.Index, ev.Text)
	case EvThinkingDelta:
		return fmt.Sprintf("think %d %s", ev.Index, ev.Text)
	case EvArgsDelta:
		return fmt.Sprintf("args %d %s", ev.Index, ev.Text)
	case EvBlockStop:
		return fmt.Sprintf("stop %d", ev.Index)
	case EvFinish:
		return "finish " + string(ev.Finish)
	case EvUsage:
		u := ev.Usage
		return fmt.Sprintf("usage %d/%d/%d/%d/%d", u.Input, u.CacheRead, u.CacheWrite, u.Output, u.Reasoning)
	case EvError:
		return fmt.Sprintf("error %s %s %s", ev.Err.Type, ev.Err.Code, ev.Err.Message)
	case EvEnd:
		return "end"
	}
	return "?"
}

// oaiDecodeAll feeds data events to a new decoder, then Finish(ended); the events as lines.
func oaiDecodeAll(t *testing.T, chunks []string, ended bool) []string {
	return decodeAll(t, oaiTestCodec.NewDecoder(), chunks, ended, oaiEvString)
}

// oaiDecodeCases are upstream chunk sequences (ended normally unless cut) and the canonical events each gives.
var oaiDecodeCases = []struct {
	name   string
	chunks []string
	cut    bool
	want   []string
}{
	{"text with usage chunk", []string{
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
		`{"id":"chatcmpl-1","model":"gpt-4o","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}`,
		`{"id":"chatcmpl-1","model":"gpt-4o","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":null}]}`,
		`{"id":"chatcmpl-1","model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		`{"id":"chatcmpl-1","model":"gpt-4o","choices":[],"usage":{"prompt_tokens":1300,"completion_tokens":10,"total_tokens":1310,"prompt_tokens_details":{"cached_tokens":1000,"cache_write_tokens":200}}}`,
		`[DONE]`}, false,
		[]string{"start chatcmpl-1 gpt-4o", "block 0 text", "text 0 Hel", "text 0 lo", "stop 0", "finish stop", "usage 100/1000/200/10/0", "end"}},
	{"deepseek reasoning then content", []string{
		`{"id":"d","model":"deepseek-reasoner","choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":"hm"}}]}`,
		`{"id":"d","choices":[{"index":0,"delta":{"content":null,"reasoning_content":"m."}}]}`,
		`{"id":"d","choices":[{"index":0,"delta":{"content":"Yes","reasoning_content":null}}]}`,
		`{"id":"d","choices":[{"index":0,"delta":{"content":""},"finish_reason":"length"}],"usage":{"prompt_tokens":5,"completion_tokens":9,"prompt_cache_hit_tokens":2,"completion_tokens_details":{"reasoning_tokens":4}}}`,
		`[DONE]`}, false,
		[]string{"start d deepseek-reasoner", "block 0 thinking", "think 0 hm", "think 0 m.", "stop 0", "block 1 text", "text 1 Yes",
			"stop 1", "finish length", "usage 3/2/0/9/4", "end"}},
	{"openrouter reasoning", []string{
		`{"id":"o","model":"m","choices":[{"index":0,"delta":{"reasoning":"r1"}}]}`,
		`{"id":"o","model":"m","choices":[{"index":0,"delta":{"content":"a","reasoning":""}}]}`}, false,
		[]string{"start o m", "block 0 thinking", "think 0 r1", "stop 0", "block 1 text", "text 1 a", "stop 1", "end"}},
	{"parallel tool calls", []string{
		`{"id":"t","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Let me."}}]}`,
		`{"id":"t","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get","arguments":""}}]}}]}`,
		`{"id":"t","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"c\":"}}]}}]}`,
		`{"id":"t","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}}]}`,
		`{"id":"t","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"put","arguments":"{}"}}]}}]}`,
		`{"id":"t","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`[DONE]`}, false,
		[]string{"start t m", "block 0 text", "text 0 Let me.", "stop 0", "block 1 tool call_a get", "args 1 {\"c\":", "args 1 1}",
			"block 2 tool call_b put", "args 2 {}", "stop 1", "stop 2", "finish tool_calls", "end"}},
	{"id and name repeated on every piece", []string{
		`{"id":"r","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\""}}]}}]}`,
		`{"id":"r","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":":1}"}}]}}]}`,
		`{"id":"r","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`}, false,
		[]string{"start r ", "block 0 tool c1 f", "args 0 {\"a\"", "args 0 :1}", "stop 0", "finish tool_calls", "end"}},
	{"every call numbered 0", []string{
		`{"id":"z","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"f","arguments":"{}"}}]}}]}`,
		`{"id":"z","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c2","function":{"name":"g","arguments":"{}"}}]}}]}`,
		`{"id":"z","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`}, false,
		[]string{"start z ", "block 0 tool c1 f", "args 0 {}", "block 1 tool c2 g", "args 1 {}", "stop 0", "stop 1", "finish tool_calls", "end"}},
	{"no index, index -1, object args, no id", []string{
		`{"id":"n","choices":[{"index":0,"delta":{"tool_calls":[{"id":"c1","function":{"name":"f","arguments":"{\"x\""}}]}}]}`,
		`{"id":"n","choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":":2}"}}]}}]}`,
		`{"id":"n","choices":[{"index":0,"delta":{"tool_calls":[{"id":"c2","function":{"name":"g","arguments":{"k":1}}}]}}]}`,
		`{"id":"n","choices":[{"index":0,"delta":{"tool_calls":[{"index":-1,"function":{"name":"h"}}]}}]}`}, false,
		[]string{"start n ", "block 0 tool c1 f", "args 0 {\"x\"", "args 0 :2}", "block 1 tool c2 g", "args 1 {\"k\":1}",
			"stop 0", "stop 1", "end"}},
	{"legacy function_call", []string{
		`{"id":"l","choices":[{"index":0,"delta":{"function_call":{"name":"f","arguments":""}}}]}`,
		`{"id":"l","choices":[{"index":0,"delta":{"function_call":{"arguments":"{}"}}}]}`,
		`{"id":"l","choices":[{"index":0,"delta":{},"finish_reason":"function_call"}]}`}, false,
		[]string{"start l ", "block 0 tool call_0 f", "args 0 {}", "stop 0", "finish tool_calls", "end"}},
	{"usage on every chunk, azure filter chunk, other choices", []string{
		`{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0}]}`,
		`{"id":"u","model":"m","choices":[{"index":1,"delta":{"content":"other"}},{"index":0,"delta":{"content":"a"}}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`,
		`{"id":"u","model":"m","choices":[{"index":0,"delta":{"refusal":"b"},"finish_reason":"content_filter"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`}, false,
		[]string{"start u m", "block 0 text", "text 0 a", "usage 3/0/0/1/0", "text 0 b", "stop 0", "finish content_filter", "usage 3/0/0/2/0", "end"}},
	{"cut mid-block", []string{
		`{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"par"}}]}`}, true,
		[]string{"start c m", "block 0 text", "text 0 par", "stop 0"}},
	{"only done", []string{`[DONE]`}, false, []string{"start  ", "end"}},
	{"error chunk", []string{
		`{"id":"e","model":"m","choices":[{"index":0,"delta":{"content":"a"}}]}`,
		`{"error":{"message":"overloaded","type":"server_error","code":"overloaded"}}`,
		`{"id":"e","model":"m","choices":[{"index":0,"delta":{"content":"ignored"}}]}`}, false,
		[]string{"start e m", "block 0 text", "text 0 a", "stop 0", "error overloaded overloaded overloaded"}},
	{"unknown shapes say nothing", []string{`42`, `"x"`, `[1,2]`, `{}`, `{"choices":[{"index":0,"delta":{"content":7,"tool_calls":"no"}}]}`, ``}, false,
		[]string{"start  ", "end"}},
}

func TestOAIDecoder(t *testing.T) {
	for _, tc := range oaiDecodeCases {
		t.Run(tc.name, func(t *testing.T) {
			got := oaiDecodeAll(t, tc.chunks, !tc.cut)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("events\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestOAIDecoderErrors(t *testing.T) {
	d := oaiTestCodec.NewDecoder()
	if _, err := d.Decode("", []byte(`{"id":"x","choices":[`)); err == nil {
		t.Fatal("malformed JSON: no error")
	}
	d = oaiTestCodec.NewDecoder()
	evs, err := d.Decode("error", []byte(`{"message":"named error event","type":"rate_limit_error"}`))
	if err != nil || len(evs) != 1 || evs[0].Type != EvError || evs[0].Err.Type != ErrRateLimit {
		t.Fatalf("error event = %v, %v", evs, err)
	}
	if evs := d.Finish(true); len(evs) != 0 {
		t.Fatalf("Finish after an error = %v", evs)
	}
	d = oaiTestCodec.NewDecoder()
	d.Finish(true)
	if evs := d.Finish(true); len(evs) != 0 {
		t.Fatalf("second Finish = %v", evs)
	}
}

// oaiEncodeCases are canonical event sequences and the exact stream the encoder must write.
var oaiEncodeCases = []struct {
	name         string
	includeUsage bool
	events       []Event
	want         string
}{
	{"text with usage", true, []Event{
		{Type: EvStart, ID: "msg_1", Model: "claude-x", Usage: &Usage{Input: 100, CacheRead: 1000, CacheWrite: 200}},
		{Type: EvBlockStart, Index: 0, Part: &Part{Kind: PartText}},
		{Type: EvTextDelta, Index: 0, Text: "Hi <b>"},
		{Type: EvTextDelta, Index: 0, Text: ""},
		{Type: EvBlockStop, Index: 0},
		{Type: EvUsage, Usage: &Usage{Input: 100, CacheRead: 1000, CacheWrite: 200, Output: 10}},
		{Type: EvFinish, Finish: FinishLength},
		{Type: EvEnd},
		{Type: EvTextDelta, Index: 0, Text: "after the end"},
	}, `data: {"id":"chatcmpl-msg_1","object":"chat.completion.chunk","created":1700000000,"model":"claude-x","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-msg_1","object":"chat.completion.chunk","created":1700000000,"model":"claude-x","choices":[{"index":0,"delta":{"content":"Hi <b>"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-msg_1","object":"chat.completion.chunk","created":1700000000,"model":"claude-x","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"length"}]}

data: {"id":"chatcmpl-msg_1","object":"chat.completion.chunk","created":1700000000,"model":"claude-x","choices":[],"usage":{"prompt_tokens":1300,"completion_tokens":10,"total_tokens":1310,"prompt_tokens_details":{"cached_tokens":1000,"cache_write_tokens":200},"completion_tokens_details":{"reasoning_tokens":0}}}

data: [DONE]

`},
	{"thinking and tool calls, no usage chunk", false, []Event{
		{Type: EvStart, ID: "chatcmpl-9"},
		{Type: EvBlockStart, Index: 0, Part: &Part{Kind: PartThinking}},
		{Type: EvThinkingDelta, Index: 0, Text: "hmm"},
		{Type: EvSignature, Index: 0, Signature: "sig"},
		{Type: EvBlockStop, Index: 0},
		{Type: EvBlockStart, Index: 1, Part: &Part{Kind: PartToolCall, ToolCall: &ToolCall{ID: "toolu_1", Name: "get"}}},
		{Type: EvArgsDelta, Index: 1, Text: `{"a":`},
		{Type: EvArgsDelta, Index: 1, Text: `1}`},
		{Type: EvBlockStop, Index: 1},
		{Type: EvBlockStart, Index: 2, Part: &Part{Kind: PartToolCall, ToolCall: &ToolCall{Name: "put"}}},
		{Type: EvArgsDelta, Index: 2, Text: `{}`},
		{Type: EvFinish, Finish: FinishStop},
		{Type: EvUsage, Usage: &Usage{Input: 1, Output: 2}},
		{Type: EvEnd},
	}, `data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1700000000,"model":"req-model","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1700000000,"model":"req-model","choices":[{"index":0,"delta":{"reasoning_content":"hmm"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1700000000,"model":"req-model","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"toolu_1","type":"function","function":{"name":"get","arguments":""}}]},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1700000000,"model":"req-model","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":"}}]},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1700000000,"model":"req-model","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1700000000,"model":"req-model","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_1","type":"function","function":{"name":"put","arguments":""}}]},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1700000000,"model":"req-model","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1700000000,"model":"req-model","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]}

data: [DONE]

`},
	{"error mid-stream", true, []Event{
		{Type: EvStart, ID: "x", Model: "m"},
		{Type: EvBlockStart, Index: 0, Part: &Part{Kind: PartText}},
		{Type: EvTextDelta, Index: 0, Text: "par"},
		{Type: EvError, Err: &Error{Status: 502, Type: ErrServer, Code: "upstream_error", Message: "The upstream failed."}},
		{Type: EvEnd},
	}, `data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":1700000000,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":1700000000,"model":"m","choices":[{"index":0,"delta":{"content":"par"},"logprobs":null,"finish_reason":null}]}

data: {"error":{"message":"The upstream failed.","type":"server_error","param":null,"code":"upstream_error"}}

`},
	{"end without start, args without block", false, []Event{
		{Type: EvArgsDelta, Index: 3, Text: `{"q":1}`},
		{Type: EvEnd},
	}, `data: {"id":"chatcmpl-tollgate","object":"chat.completion.chunk","created":1700000000,"model":"req-model","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-tollgate","object":"chat.completion.chunk","created":1700000000,"model":"req-model","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_0","type":"function","function":{"arguments":""}}]},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-tollgate","object":"chat.completion.chunk","created":1700000000,"model":"req-model","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"q\":1}"}}]},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-tollgate","object":"chat.completion.chunk","created":1700000000,"model":"req-model","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]}

data: [DONE]

`},
	{"error before anything", false, []Event{
		{Type: EvError, Err: &Error{Type: ErrRateLimit, Message: "slow down"}},
	}, `data: {"error":{"message":"slow down","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}

`},
}

func TestOAIEncoder(t *testing.T) {
	for _, tc := range oaiEncodeCases {
		t.Run(tc.name, func(t *testing.T) {
			e := oaiTestCodec.NewEncoder(&Request{Model: "req-model", IncludeUsage: tc.includeUsage})
			var got []byte
			for _, ev := range tc.events {
				got = e.Encode(got, ev)
			}
			if string(got) != tc.want {
				t.Fatalf("stream\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// oaiSDKStream reads a stream the way the official openai-go SDK does: accumulated into a completion, with
// the stream's error.
func oaiSDKStream(t *testing.T, body []byte) (openai.ChatCompletion, []openai.ChatCompletionChunk, error) {
	t.Helper()
	res := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(body))}
	s := ssestream.NewStream[openai.ChatCompletionChunk](ssestream.NewDecoder(res), nil)
	var acc openai.ChatCompletionAccumulator
	var chunks []openai.ChatCompletionChunk
	for s.Next() {
		c := s.Current()
		if !acc.AddChunk(c) {
			t.Fatalf("the SDK's accumulator refused chunk %s", c.RawJSON())
		}
		chunks = append(chunks, c)
	}
	return acc.ChatCompletion, chunks, s.Err()
}

// The official Go SDK reads the encoder's streams: text, tool calls, finish reason, usage, and errors.
func TestOAIEncoderWithSDK(t *testing.T) {
	e := oaiTestCodec.NewEncoder(&Request{Model: "m", IncludeUsage: true})
	var body []byte
	for _, ev := range []Event{
		{Type: EvStart, ID: "msg_1", Model: "claude"},
		{Type: EvBlockStart, Index: 0, Part: &Part{Kind: PartText}},
		{Type: EvTextDelta, Index: 0, Text: "Checking "},
		{Type: EvTextDelta, Index: 0, Text: "both."},
		{Type: EvBlockStop, Index: 0},
		{Type: EvBlockStart, Index: 1, Part: &Part{Kind: PartToolCall, ToolCall: &ToolCall{ID: "toolu_a", Name: "get"}}},
		{Type: EvArgsDelta, Index: 1, Text: `{"city":`},
		{Type: EvArgsDelta, Index: 1, Text: `"Paris"}`},
		{Type: EvBlockStop, Index: 1},
		{Type: EvBlockStart, Index: 2, Part: &Part{Kind: PartToolCall, ToolCall: &ToolCall{ID: "toolu_b", Name: "get"}}},
		{Type: EvArgsDelta, Index: 2, Text: `{"city":"Rome"}`},
		{Type: EvBlockStop, Index: 2},
		{Type: EvFinish, Finish: FinishToolCalls},
		{Type: EvUsage, Usage: &Usage{Input: 100, CacheRead: 1000, CacheWrite: 200, Output: 10, Reasoning: 4}},
		{Type: EvEnd},
	} {
		body = e.Encode(body, ev)
	}
	c, chunks, err := oaiSDKStream(t, body)
	if err != nil {
		t.Fatalf("SDK stream error: %v", err)
	}
	if c.ID != "chatcmpl-msg_1" || c.Model != "claude" || len(c.Choices) != 1 {
		t.Fatalf("completion = %+v", c)
	}
	ch := c.Choices[0]
	if ch.Message.Content != "Checking both." || ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) != 2 {
		t.Fatalf("choice = %+v", ch)
	}
	if tc := ch.Message.ToolCalls[0]; tc.ID != "toolu_a" || tc.Function.Name != "get" || tc.Function.Arguments != `{"city":"Paris"}` {
		t.Fatalf("tool call 0 = %+v", tc)
	}
	if tc := ch.Message.ToolCalls[1]; tc.ID != "toolu_b" || tc.Function.Arguments != `{"city":"Rome"}` {
		t.Fatalf("tool call 1 = %+v", tc)
	}
	if u := c.Usage; u.PromptTokens != 1300 || u.CompletionTokens != 10 || u.TotalTokens != 1310 ||
		u.PromptTokensDetails.CachedTokens != 1000 || u.CompletionTokensDetails.ReasoningTokens != 4 {
		t.Fatalf("usage = %+v", u)
	}
	if last := chunks[len(chunks)-1]; len(last.Choices) != 0 || last.Usage.TotalTokens != 1310 {
		t.Fatalf("last chunk = %s", last.RawJSON())
	}

	e = oaiTestCodec.NewEncoder(&Request{Model: "m"})
	body = e.Encode(nil, Event{Type: EvStart, ID: "x"})
	body = e.Encode(body, Event{Type: EvTextDelta, Index: 0, Text: "par"})
	body = e.Encode(body, Event{Type: EvError, Err: &Error{Type: ErrOverloaded, Message: "busy"}})
	c, _, err = oaiSDKStream(t, body)
	if err == nil || !strings.Contains(err.Error(), "busy") || c.Choices[0].Message.Content != "par" {
		t.Fatalf("error stream: content %+v, err %v", c.Choices, err)
	}
}

// An upstream chat stream decoded and encoded again reads, through the SDK, as the upstream's own answer.
func TestOAIDecodeEncodeThroughSDK(t *testing.T) {
	for _, tc := range oaiDecodeCases {
		if tc.cut {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			d := oaiTestCodec.NewDecoder()
			e := oaiTestCodec.NewEncoder(&Request{Model: "m", IncludeUsage: true})
			var body []byte
			var failed bool
			for _, c := range tc.chunks {
				evs, err := d.Decode("", []byte(c))
				if err != nil {
					t.Fatal(err)
				}
				for _, ev := range evs {
					failed = failed || ev.Type == EvError
					body = e.Encode(body, ev)
				}
			}
			for _, ev := range d.Finish(true) {
				body = e.Encode(body, ev)
			}
			_, _, err := oaiSDKStream(t, body)
			if (err != nil) != failed {
				t.Fatalf("SDK error = %v, upstream failed %v\n%s", err, failed, body)
			}
		})
	}
}

package convert

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"tollgate/relay/adaptor"
)

// rspTestCodec is the codec under test, as the relay finds it.
func rspTestCodec(t *testing.T) Codec {
	t.Helper()
	c, ok := For(adaptor.ResponsesAPI)
	if !ok {
		t.Fatal("no codec registered for the Responses API")
	}
	return c
}

// rspJSONEq fails unless got and want are the same JSON value.
func rspJSONEq(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want is not JSON: %v\n%s", err, want)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("JSON differs\n got: %s\nwant: %s", got, want)
	}
}

// rspCanonJSON is v as JSON, for comparing canonical values.
func rspCanonJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// rspParseCases are client request bodies and the canonical requests they read as (as JSON).
var rspParseCases = []struct {
	name, body, want string
}{
	{"string input", `{"model":"gpt-5","input":"hi"}`,
		`{"model":"gpt-5","messages":[{"role":"user","parts":[{"kind":"text","text":"hi"}]}],"stream":false}`},
	{"instructions then every system and developer message into System in order",
		`{"model":"m","instructions":"base","input":[{"role":"developer","content":"dev1"},{"type":"message","role":"user","content":[{"type":"input_text","text":"q"}]},{"role":"system","content":[{"type":"input_text","text":"late"}]}]}`,
		`{"model":"m","system":[{"kind":"text","text":"base"},{"kind":"text","text":"dev1"},{"kind":"text","text":"late"}],"messages":[{"role":"user","parts":[{"kind":"text","text":"q"}]}],"stream":false}`},
	{"content parts: text, image URL with detail, data URL, output_text, refusal",
		`{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"look"},{"type":"input_image","image_url":"https://x/y.png","detail":"high"},{"type":"input_image","image_url":"data:image/png;base64,AAAA"}]},{"role":"assistant","content":[{"type":"output_text","text":"ok","annotations":[]},{"type":"refusal","refusal":"no"}]}]}`,
		`{"model":"m","messages":[{"role":"user","parts":[{"kind":"text","text":"look"},{"kind":"image","image":{"url":"https://x/y.png","detail":"high"}},{"kind":"image","image":{"media_type":"image/png","data":"AAAA"}}]},{"role":"assistant","parts":[{"kind":"text","text":"ok"},{"kind":"text","text":"no"}]}],"stream":false}`},
	{"one assistant turn from reasoning, text and parallel calls; outputs as one user turn named after their calls",
		`{"model":"m","input":[{"role":"user","content":"q"},{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"a"},{"type":"summary_text","text":"b"}],"encrypted_content":"SIG"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"calling"}]},{"type":"function_call","call_id":"c1","name":"f","arguments":"{\"x\":1}"},{"type":"function_call","call_id":"c2","name":"g","arguments":""},{"type":"function_call_output","call_id":"c1","output":"one"},{"type":"function_call_output","call_id":"c2","output":[{"type":"input_text","text":"two"},{"type":"input_image","image_url":"https://i"}]},{"role":"user","content":"next"}]}`,
		`{"model":"m","messages":[{"role":"user","parts":[{"kind":"text","text":"q"}]},{"role":"assistant","parts":[{"kind":"thinking","text":"a\n\nb","signature":"SIG"},{"kind":"text","text":"calling"},{"kind":"tool_call","tool_call":{"id":"c1","name":"f","args":"{\"x\":1}"}},{"kind":"tool_call","tool_call":{"id":"c2","name":"g","args":"{}"}}]},{"role":"user","parts":[{"kind":"tool_result","tool_result":{"call_id":"c1","name":"f","content":[{"kind":"text","text":"one"}]}},{"kind":"tool_result","tool_result":{"call_id":"c2","name":"g","content":[{"kind":"text","text":"two"},{"kind":"image","image":{"url":"https://i"}}]}},{"kind":"text","text":"next"}]}],"stream":false}`},
	{"redacted thinking the encoder wrote comes back as redacted thinking; empty reasoning is dropped",
		`{"model":"m","input":[{"type":"reasoning","summary":[],"encrypted_content":"redacted_thinking:DATA"},{"type":"reasoning","summary":[]},{"role":"assistant","content":"x"}]}`,
		`{"model":"m","messages":[{"role":"assistant","parts":[{"kind":"redacted_thinking","data":"DATA"},{"kind":"text","text":"x"}]}],"stream":false}`},
	{"raw reasoning text when there is no summary; a failed output in the older {content, success} shape",
		`{"model":"m","input":[{"type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"raw"}]},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":{"content":"boom","success":false}}]}`,
		`{"model":"m","messages":[{"role":"assistant","parts":[{"kind":"thinking","text":"raw"},{"kind":"tool_call","tool_call":{"id":"c","name":"f","args":"{}"}}]},{"role":"user","parts":[{"kind":"tool_result","tool_result":{"call_id":"c","name":"f","content":[{"kind":"text","text":"boom"}],"is_error":true}}]}],"stream":false}`},
	{"custom tool call and output (Codex apply_patch)",
		`{"model":"m","input":[{"type":"custom_tool_call","call_id":"c","name":"apply_patch","input":"*** Begin Patch\n\"q\""},{"type":"custom_tool_call_output","call_id":"c","output":"done"}]}`,
		`{"model":"m","messages":[{"role":"assistant","parts":[{"kind":"tool_call","tool_call":{"id":"c","name":"apply_patch","args":"{\"input\":\"*** Begin Patch\\n\\\"q\\\"\"}"}}]},{"role":"user","parts":[{"kind":"tool_result","tool_result":{"call_id":"c","name":"apply_patch","content":[{"kind":"text","text":"done"}]}}]}],"stream":false}`},
	{"local shell call and output",
		`{"model":"m","input":[{"type":"local_shell_call","id":"lsh_1","call_id":"c","status":"completed","action":{"type":"exec","command":["ls","-a"],"working_directory":"/tmp","timeout_ms":5000,"env":{}}},{"type":"local_shell_call_output","call_id":"c","output":"a b"}]}`,
		`{"model":"m","messages":[{"role":"assistant","parts":[{"kind":"tool_call","tool_call":{"id":"c","name":"local_shell","args":"{\"command\":[\"ls\",\"-a\"],\"workdir\":\"/tmp\",\"timeout_ms\":5000}"}}]},{"role":"user","parts":[{"kind":"tool_result","tool_result":{"call_id":"c","name":"local_shell","content":[{"kind":"text","text":"a b"}]}}]}],"stream":false}`},
	{"sampling and flags; ignored fields dropped",
		`{"model":"m","input":"x","max_output_tokens":100,"temperature":0.5,"top_p":0.9,"parallel_tool_calls":false,"stream":true,"user":"u1","store":true,"include":["reasoning.encrypted_content"],"prompt_cache_key":"k","metadata":{"a":"b"},"service_tier":"auto","truncation":"auto","text":{"verbosity":"low"},"safety_identifier":"s","stream_options":{"include_obfuscation":false},"max_tool_calls":3,"previous_response_id":null}`,
		`{"model":"m","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"parallel_tool_calls":false,"max_tokens":100,"temperature":0.5,"top_p":0.9,"stream":true,"user":"u1"}`},
	{"tools: flat function, custom with grammar, local_shell; tool_choice required",
		`{"model":"m","input":"x","tools":[{"type":"function","name":"f","description":"d","parameters":{"type":"object"},"strict":true},{"type":"function","name":"g"},{"type":"custom","name":"apply_patch","description":"Apply a patch.","format":{"type":"grammar","syntax":"lark","definition":"start: x"}},{"type":"custom","name":"free"},{"type":"local_shell"}],"tool_choice":"required"}`,
		`{"model":"m","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"tools":[{"name":"f","description":"d","parameters":{"type":"object"},"strict":true},{"name":"g"},{"name":"apply_patch","description":"Apply a patch.\n\nThe input must be written in this lark grammar:\nstart: x","parameters":` + rspCustomParams + `},{"name":"free","parameters":` + rspCustomParams + `},{"name":"local_shell","description":"` + rspShellDescription + `","parameters":` + rspShellParams + `}],"tool_choice":{"mode":"required"},"stream":false}`},
	{"tool_choice named function", `{"model":"m","input":"x","tool_choice":{"type":"function","name":"f"}}`,
		`{"model":"m","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"tool_choice":{"mode":"tool","name":"f"},"stream":false}`},
	{"tool_choice named custom tool", `{"model":"m","input":"x","tool_choice":{"type":"custom","name":"apply_patch"}}`,
		`{"model":"m","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"tool_choice":{"mode":"tool","name":"apply_patch"},"stream":false}`},
	{"tool_choice none and auto", `{"model":"m","input":"x","tool_choice":"none"}`,
		`{"model":"m","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"tool_choice":{"mode":"none"},"stream":false}`},
	{"text.format json_schema", `{"model":"m","input":"x","text":{"format":{"type":"json_schema","name":"out","schema":{"type":"object"},"strict":true}}}`,
		`{"model":"m","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"response_format":{"type":"json_schema","name":"out","schema":{"type":"object"},"strict":true},"stream":false}`},
	{"text.format json_object", `{"model":"m","input":"x","text":{"format":{"type":"json_object"}}}`,
		`{"model":"m","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"response_format":{"type":"json_object"},"stream":false}`},
	{"text.format text is the default", `{"model":"m","input":"x","text":{"format":{"type":"text"}}}`,
		`{"model":"m","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"stream":false}`},
	{"reasoning effort and summary", `{"model":"m","input":"x","reasoning":{"effort":"high","summary":"auto"}}`,
		`{"model":"m","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"reasoning":{"effort":"high","enabled":true,"summary":true},"stream":false}`},
	{"reasoning effort none turns thinking off", `{"model":"m","input":"x","reasoning":{"effort":"none"}}`,
		`{"model":"m","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"reasoning":{"enabled":false},"stream":false}`},
	{"empty reasoning says nothing", `{"model":"m","input":"x","reasoning":{}}`,
		`{"model":"m","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"stream":false}`},
}

func TestResponsesParseRequest(t *testing.T) {
	c := rspTestCodec(t)
	for _, tc := range rspParseCases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := c.ParseRequest([]byte(tc.body))
			if err != nil {
				t.Fatalf("ParseRequest: %v", err)
			}
			rspJSONEq(t, []byte(rspCanonJSON(t, r)), tc.want)
		})
	}
}

// rspErrorCases are client request bodies ParseRequest refuses, with the error kind and field.
var rspErrorCases = []struct {
	name, body  string
	unsupported bool // else *Invalid
	field       string
}{
	{"input_file", `{"model":"m","input":[{"role":"user","content":[{"type":"input_file","file_id":"f"}]}]}`, true, "input[0].content[0].type"},
	{"input_audio", `{"model":"m","input":[{"role":"user","content":[{"type":"input_audio"}]}]}`, true, "input[0].content[0].type"},
	{"uploaded image", `{"model":"m","input":[{"role":"user","content":[{"type":"input_image","file_id":"f"}]}]}`, true, "input[0].content[0].file_id"},
	{"item_reference", `{"model":"m","input":[{"type":"item_reference","id":"msg_1"}]}`, true, "input[0].type"},
	{"hosted tool item", `{"model":"m","input":[{"type":"web_search_call","id":"ws"}]}`, true, "input[0].type"},
	{"file_search tool", `{"model":"m","input":"x","tools":[{"type":"function","name":"f"},{"type":"file_search","vector_store_ids":[]}]}`, true, "tools[1].type"},
	{"computer_use tool", `{"model":"m","input":"x","tools":[{"type":"computer_use_preview"}]}`, true, "tools[0].type"},
	{"mcp tool", `{"model":"m","input":"x","tools":[{"type":"mcp","server_label":"s"}]}`, true, "tools[0].type"},
	{"image_generation tool", `{"model":"m","input":"x","tools":[{"type":"image_generation"}]}`, true, "tools[0].type"},
	{"previous_response_id", `{"model":"m","input":"x","previous_response_id":"resp_1"}`, true, "previous_response_id"},
	{"conversation", `{"model":"m","input":"x","conversation":"conv_1"}`, true, "conversation"},
	{"background", `{"model":"m","input":"x","background":true}`, true, "background"},
	{"logprobs include", `{"model":"m","input":"x","include":["message.output_text.logprobs"]}`, true, "include"},
	{"top_logprobs", `{"model":"m","input":"x","top_logprobs":2}`, true, "top_logprobs"},
	{"allowed_tools choice", `{"model":"m","input":"x","tool_choice":{"type":"allowed_tools","mode":"auto","tools":[]}}`, true, "tool_choice.type"},
	{"hosted tool choice", `{"model":"m","input":"x","tool_choice":{"type":"web_search_preview"}}`, true, "tool_choice.type"},
	{"image in a developer message", `{"model":"m","input":[{"role":"developer","content":[{"type":"input_image","image_url":"https://x"}]}]}`, true, "input[0].content[0].type"},
	{"missing input", `{"model":"m"}`, false, "input"},
	{"null input", `{"model":"m","input":null}`, false, "input"},
	{"input a number", `{"model":"m","input":3}`, false, "input"},
	{"temperature a string", `{"model":"m","input":"x","temperature":"hot"}`, false, "temperature"},
	{"model a number", `{"model":1,"input":"x"}`, false, "model"},
	{"arguments not JSON", `{"model":"m","input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{oops"}]}`, false, "input[0].arguments"},
	{"arguments an object", `{"model":"m","input":[{"type":"function_call","call_id":"c","name":"f","arguments":{}}]}`, false, "input[0].arguments"},
	{"call without call_id", `{"model":"m","input":[{"type":"function_call","name":"f","arguments":"{}"}]}`, false, "input[0].call_id"},
	{"output without call_id", `{"model":"m","input":[{"type":"function_call_output","output":"x"}]}`, false, "input[0].call_id"},
	{"unknown role", `{"model":"m","input":[{"role":"tool","content":"x"}]}`, false, "input[0].role"},
	{"item without type or role", `{"model":"m","input":[{"content":"x"}]}`, false, "input[0].type"},
	{"message without content", `{"model":"m","input":[{"role":"user"}]}`, false, "input[0].content"},
	{"bad data URL", `{"model":"m","input":[{"role":"user","content":[{"type":"input_image","image_url":"data:image/png,xyz"}]}]}`, false, "input[0].content[0].image_url"},
	{"tool without name", `{"model":"m","input":"x","tools":[{"type":"function","parameters":{}}]}`, false, "tools[0].name"},
	{"chat-style nested tool", `{"model":"m","input":"x","tools":[{"type":"function","function":{"name":"f"}}]}`, false, "tools[0].name"},
	{"unknown tool_choice word", `{"model":"m","input":"x","tool_choice":"any"}`, false, "tool_choice"},
	{"instructions not a string", `{"model":"m","input":"x","instructions":["a"]}`, false, "instructions"},
	{"body not an object", `[1]`, false, "body"},
}

func TestResponsesParseRequestErrors(t *testing.T) {
	c := rspTestCodec(t)
	for _, tc := range rspErrorCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.ParseRequest([]byte(tc.body))
			var u *Unsupported
			var inv *Invalid
			switch {
			case err == nil:
				t.Fatal("no error")
			case tc.unsupported && errors.As(err, &u):
				if u.Field != tc.field {
					t.Fatalf("Unsupported field %q, want %q", u.Field, tc.field)
				}
			case !tc.unsupported && errors.As(err, &inv):
				if inv.Field != tc.field {
					t.Fatalf("Invalid field %q, want %q (%v)", inv.Field, tc.field, err)
				}
			default:
				t.Fatalf("error %T %v, want unsupported=%v", err, err, tc.unsupported)
			}
		})
	}
	_, err := c.ParseRequest([]byte(`{"model":"m","input":"x","previous_response_id":"r"}`))
	if u := (*Unsupported)(nil); !errors.As(err, &u) || u.Why != rspNoState {
		t.Fatalf("previous_response_id: %v", err)
	}
}

// rspF is a float pointer.
func rspF(f float64) *float64 { return &f }

func TestResponsesBuildRequest(t *testing.T) {
	c := rspTestCodec(t)
	no := false
	cases := []struct {
		name string
		req  Request
		want string
	}{
		{"conversation with calls, results, images; other protocols' thinking dropped, Responses' kept",
			Request{Model: "gpt-5", System: []Part{{Kind: PartText, Text: "a"}, {Kind: PartText, Text: "b"}},
				Messages: []Message{
					{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "q"}, {Kind: PartImage, Image: &Image{MediaType: "image/png", Data: "AAAA"}}}},
					{Role: RoleAssistant, Parts: []Part{
						{Kind: PartThinking, Text: "anthropic", Signature: "EqQB"},
						{Kind: PartRedactedThinking, Data: "xx"},
						{Kind: PartThinking, Text: "mine", Signature: rspSigPrefix + "gAAA"},
						{Kind: PartText, Text: "calling"},
						{Kind: PartToolCall, ToolCall: &ToolCall{ID: "toolu_1", Name: "f", Args: `{"x":1}`}},
						{Kind: PartToolCall, ToolCall: &ToolCall{ID: "toolu_2", Name: "g"}},
					}},
					{Role: RoleUser, Parts: []Part{
						{Kind: PartToolResult, ToolResult: &ToolResult{CallID: "toolu_1", Content: []Part{{Kind: PartText, Text: "r1"}, {Kind: PartText, Text: "r2"}}}},
						{Kind: PartToolResult, ToolResult: &ToolResult{CallID: "toolu_2", Content: []Part{{Kind: PartText, Text: "see"}, {Kind: PartImage, Image: &Image{URL: "https://i", Detail: "low"}}}}},
						{Kind: PartText, Text: "thanks"},
					}},
				}},
			`{"model":"gpt-5","instructions":"a\n\nb","store":false,"input":[
				{"type":"message","role":"user","content":[{"type":"input_text","text":"q"},{"type":"input_image","image_url":"data:image/png;base64,AAAA","detail":"auto"}]},
				{"type":"reasoning","summary":[{"type":"summary_text","text":"mine"}],"encrypted_content":"gAAA"},
				{"type":"message","role":"assistant","content":[{"type":"output_text","text":"calling"}]},
				{"type":"function_call","call_id":"toolu_1","name":"f","arguments":"{\"x\":1}"},
				{"type":"function_call","call_id":"toolu_2","name":"g","arguments":"{}"},
				{"type":"function_call_output","call_id":"toolu_1","output":"r1\nr2"},
				{"type":"function_call_output","call_id":"toolu_2","output":[{"type":"input_text","text":"see"},{"type":"input_image","image_url":"https://i","detail":"low"}]},
				{"type":"message","role":"user","content":[{"type":"input_text","text":"thanks"}]}]}`},
		{"tools flat with strict always written, named choice, sampling, stream, user",
			Request{Model: "m", Messages: []Message{{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "x"}}}},
				Tools:      []Tool{{Name: "f", Description: "d", Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`), Strict: true}, {Name: "g"}},
				ToolChoice: &ToolChoice{Mode: ToolNamed, Name: "f"}, ParallelToolCalls: &no, MaxTokens: 50, Temperature: rspF(0.2), TopP: rspF(0.8),
				Stream: true, User: "u", IncludeUsage: true, N: 1, PresencePenalty: rspF(0), Seed: new(int64)},
			`{"model":"m","store":false,"stream":true,"user":"u","max_output_tokens":50,"temperature":0.2,"top_p":0.8,"parallel_tool_calls":false,
				"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"x"}]}],
				"tools":[{"type":"function","name":"f","description":"d","parameters":{"type":"object","properties":{"a":{"type":"string"}}},"strict":true},{"type":"function","name":"g","parameters":{"type":"object","properties":{}},"strict":false}],
				"tool_choice":{"type":"function","name":"f"}}`},
		{"tool choice words", Request{Model: "m", ToolChoice: &ToolChoice{Mode: ToolRequired}},
			`{"model":"m","store":false,"input":[],"tool_choice":"required"}`},
		{"json schema format", Request{Model: "m", ResponseFormat: &ResponseFormat{Type: "json_schema", Schema: json.RawMessage(`{"type":"object"}`)}},
			`{"model":"m","store":false,"input":[],"text":{"format":{"type":"json_schema","name":"response","schema":{"type":"object"},"strict":false}}}`},
		{"json object format", Request{Model: "m", ResponseFormat: &ResponseFormat{Type: "json_object"}},
			`{"model":"m","store":false,"input":[],"text":{"format":{"type":"json_object"}}}`},
		{"reasoning budget as an effort, summary, encrypted reasoning asked for", Request{Model: "m", Reasoning: &Reasoning{Budget: 30000, Enabled: true, Summary: true}},
			`{"model":"m","store":false,"input":[],"reasoning":{"effort":"high","summary":"auto"},"include":["reasoning.encrypted_content"]}`},
		{"reasoning effort", Request{Model: "m", Reasoning: &Reasoning{Effort: "low", Enabled: true}},
			`{"model":"m","store":false,"input":[],"reasoning":{"effort":"low"},"include":["reasoning.encrypted_content"]}`},
		{"thinking turned off: the model's default", Request{Model: "m", Reasoning: &Reasoning{Enabled: false}},
			`{"model":"m","store":false,"input":[]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := c.BuildRequest(&tc.req)
			if err != nil {
				t.Fatalf("BuildRequest: %v", err)
			}
			rspJSONEq(t, b, tc.want)
		})
	}
}

func TestResponsesBuildRequestUnsupported(t *testing.T) {
	c := rspTestCodec(t)
	k := int64(5)
	cases := []struct {
		field string
		req   Request
	}{
		{"n", Request{N: 2}},
		{"top_k", Request{TopK: &k}},
		{"stop", Request{Stop: []string{"x"}}},
		{"presence_penalty", Request{PresencePenalty: rspF(0.5)}},
		{"frequency_penalty", Request{FrequencyPenalty: rspF(-1)}},
		{"logprobs", Request{Logprobs: true}},
		{"logprobs", Request{TopLogprobs: 3}},
		{"logit_bias", Request{LogitBias: json.RawMessage(`{"1":5}`)}},
	}
	for _, tc := range cases {
		t.Run(tc.field, func(t *testing.T) {
			_, err := c.BuildRequest(&tc.req)
			var u *Unsupported
			if !errors.As(err, &u) || u.Field != tc.field || u.Target != adaptor.ResponsesAPI {
				t.Fatalf("got %v, want Unsupported %s", err, tc.field)
			}
		})
	}
	if _, err := c.BuildRequest(&Request{N: 1, PresencePenalty: rspF(0), FrequencyPenalty: rspF(0), LogitBias: json.RawMessage(`{}`)}); err != nil {
		t.Fatalf("defaults refused: %v", err)
	}
}

func TestResponsesParseResponse(t *testing.T) {
	c := rspTestCodec(t)
	cases := []struct{ name, body, want string }{
		{"reasoning, text, function call; cached usage",
			`{"id":"resp_1","object":"response","status":"completed","model":"gpt-5","output":[
				{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"a"},{"type":"summary_text","text":"b"}],"encrypted_content":"gAAA"},
				{"id":"rs_2","type":"reasoning","summary":[]},
				{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"output_text","text":"hi","annotations":[]},{"type":"refusal","refusal":"no"}]},
				{"id":"fc_1","type":"function_call","call_id":"call_1","name":"f","arguments":"{\"a\":1}","status":"completed"},
				{"id":"ws_1","type":"web_search_call","status":"completed"}],
				"usage":{"input_tokens":1300,"input_tokens_details":{"cached_tokens":1000},"output_tokens":50,"output_tokens_details":{"reasoning_tokens":30},"total_tokens":1350}}`,
			`{"id":"resp_1","model":"gpt-5","parts":[{"kind":"thinking","text":"a\n\nb","signature":"responses:gAAA"},{"kind":"text","text":"hi"},{"kind":"text","text":"no"},{"kind":"tool_call","tool_call":{"id":"call_1","name":"f","args":"{\"a\":1}"}}],"finish":"tool_calls","usage":{"input":300,"cache_read":1000,"output":50,"reasoning":30},"has_usage":true}`},
		{"incomplete at max_output_tokens is length",
			`{"id":"resp_2","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"model":"m","output":[{"type":"message","content":[{"type":"output_text","text":"cut"}]}]}`,
			`{"id":"resp_2","model":"m","parts":[{"kind":"text","text":"cut"}],"finish":"length","usage":{"input":0,"output":0},"has_usage":false}`},
		{"content filter", `{"id":"r","status":"incomplete","incomplete_details":{"reason":"content_filter"},"output":[]}`,
			`{"id":"r","model":"","parts":null,"finish":"content_filter","usage":{"input":0,"output":0},"has_usage":false}`},
		{"custom tool call and local shell call",
			`{"id":"r","status":"completed","model":"m","output":[{"type":"custom_tool_call","id":"ctc_1","call_id":"c1","name":"apply_patch","input":"patch"},{"type":"local_shell_call","id":"lsh_1","call_id":"c2","status":"completed","action":{"type":"exec","command":["ls"],"env":{}}}]}`,
			`{"id":"r","model":"m","parts":[{"kind":"tool_call","tool_call":{"id":"c1","name":"apply_patch","args":"{\"input\":\"patch\"}"}},{"kind":"tool_call","tool_call":{"id":"c2","name":"local_shell","args":"{\"command\":[\"ls\"]}"}}],"finish":"tool_calls","usage":{"input":0,"output":0},"has_usage":false}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := c.ParseResponse([]byte(tc.body))
			if err != nil {
				t.Fatalf("ParseResponse: %v", err)
			}
			rspJSONEq(t, []byte(rspCanonJSON(t, r)), tc.want)
		})
	}
	for _, bad := range []string{`not json`, `[1,2]`, `"x"`} {
		if _, err := c.ParseResponse([]byte(bad)); err == nil {
			t.Fatalf("ParseResponse(%s): no error", bad)
		}
	}
}

// rspToolsReq is a parsed client request declaring a function, a custom tool and local_shell.
func rspToolsReq(t *testing.T) *Request {
	t.Helper()
	r, err := rspTestCodec(t).ParseRequest([]byte(`{"model":"gpt-5-codex","input":"x","tools":[{"type":"function","name":"shell","parameters":{"type":"object"}},{"type":"custom","name":"apply_patch","format":{"type":"grammar","syntax":"lark","definition":"start: x"}},{"type":"local_shell"}],"reasoning":{"effort":"medium","summary":"auto"},"max_output_tokens":99}`))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestResponsesBuildResponse(t *testing.T) {
	c := rspTestCodec(t)
	req := rspToolsReq(t)
	resp := &Response{ID: "msg_01ABC", Model: "claude-x", Finish: FinishToolCalls, HasUsage: true,
		Usage: Usage{Input: 100, CacheRead: 1000, CacheWrite: 200, Output: 10, Reasoning: 4},
		Parts: []Part{
			{Kind: PartThinking, Text: "hmm", Signature: "EqQBsig"},
			{Kind: PartRedactedThinking, Data: "opaque"},
			{Kind: PartText, Text: "Let me look."},
			{Kind: PartToolCall, ToolCall: &ToolCall{ID: "toolu_1", Name: "shell", Args: `{"command":["ls"]}`}},
			{Kind: PartToolCall, ToolCall: &ToolCall{ID: "toolu_2", Name: "apply_patch", Args: `{"input":"*** Begin Patch"}`}},
			{Kind: PartToolCall, ToolCall: &ToolCall{ID: "toolu_3", Name: "local_shell", Args: `{"command":["git","status"],"workdir":"/w","timeout_ms":1000}`}},
		}}
	b, err := c.BuildResponse(req, resp)
	if err != nil {
		t.Fatal(err)
	}
	g := gjson.ParseBytes(b)
	if g.Get("created_at").Int() == 0 {
		t.Fatal("no created_at")
	}
	out := g.Get("output").Raw
	rspJSONEq(t, []byte(out), `[
		{"id":"rs_01ABC_0","type":"reasoning","summary":[{"type":"summary_text","text":"hmm"}],"encrypted_content":"EqQBsig"},
		{"id":"rs_01ABC_1","type":"reasoning","summary":[],"encrypted_content":"redacted_thinking:opaque"},
		{"id":"msg_01ABC_2","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Let me look.","annotations":[],"logprobs":[]}]},
		{"id":"fc_01ABC_3","type":"function_call","status":"completed","arguments":"{\"command\":[\"ls\"]}","call_id":"toolu_1","name":"shell"},
		{"id":"ctc_01ABC_4","type":"custom_tool_call","status":"completed","call_id":"toolu_2","name":"apply_patch","input":"*** Begin Patch"},
		{"id":"lsh_01ABC_5","type":"local_shell_call","status":"completed","call_id":"toolu_3","action":{"type":"exec","command":["git","status"],"env":{},"working_directory":"/w","timeout_ms":1000}}]`)
	rspJSONEq(t, []byte(g.Get("usage").Raw), `{"input_tokens":1300,"input_tokens_details":{"cached_tokens":1000},"output_tokens":10,"output_tokens_details":{"reasoning_tokens":4},"total_tokens":1310}`)
	for path, want := range map[string]string{"id": "resp_msg_01ABC", "object": "response", "status": "completed", "model": "claude-x",
		"incomplete_details": "", "error": "", "max_output_tokens": "99", "reasoning.effort": "medium", "reasoning.summary": "auto",
		"tools.#": "3", "tools.0.type": "function", "tools.1.type": "custom", "tools.2.type": "local_shell", "tool_choice": "auto",
		"parallel_tool_calls": "true", "text.format.type": "text"} {
		if got := g.Get(path).String(); got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}

	b, _ = c.BuildResponse(&Request{Model: "m"}, &Response{ID: "resp_x", Finish: FinishLength, Parts: []Part{{Kind: PartText, Text: "cut"}}})
	g = gjson.ParseBytes(b)
	if g.Get("id").String() != "resp_x" || g.Get("status").String() != "incomplete" || g.Get("incomplete_details.reason").String() != "max_output_tokens" || g.Get("model").String() != "m" {
		t.Fatalf("length answer: %s", b)
	}
	b, _ = c.BuildResponse(nil, &Response{Finish: FinishStop})
	if g = gjson.ParseBytes(b); !strings.HasPrefix(g.Get("id").String(), "resp_") || g.Get("output").Raw != "[]" || g.Get("usage.total_tokens").Raw != "0" {
		t.Fatalf("empty answer: %s", b)
	}
}

func TestResponsesSignatureRoundTrip(t *testing.T) {
	c := rspTestCodec(t)
	// An Anthropic-origin answer reaches a Responses caller; its output items come back as input.
	b, _ := c.BuildResponse(&Request{Model: "m"}, &Response{ID: "x", Parts: []Part{
		{Kind: PartThinking, Text: "line1\n\nline2", Signature: "EqQBsig=="},
		{Kind: PartRedactedThinking, Data: "opaque=="},
		{Kind: PartText, Text: "a"},
	}})
	body := `{"model":"m","input":` + gjson.GetBytes(b, "output").Raw + `}`
	r, err := c.ParseRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	rspJSONEq(t, []byte(rspCanonJSON(t, r.Messages)), `[{"role":"assistant","parts":[{"kind":"thinking","text":"line1\n\nline2","signature":"EqQBsig=="},{"kind":"redacted_thinking","data":"opaque=="},{"kind":"text","text":"a"}]}]`)
	// A Responses upstream's reasoning goes back to a Responses upstream as it came.
	up, _ := c.ParseResponse([]byte(`{"id":"r","status":"completed","output":[{"type":"reasoning","summary":[{"type":"summary_text","text":"s"}],"encrypted_content":"gAAA"}]}`))
	out, _ := c.BuildRequest(&Request{Model: "m", Messages: []Message{{Role: RoleAssistant, Parts: up.Parts}}})
	if got := gjson.GetBytes(out, "input.0.encrypted_content").String(); got != "gAAA" {
		t.Fatalf("encrypted_content %q in %s", got, out)
	}
}

func TestResponsesErrors(t *testing.T) {
	c := rspTestCodec(t)
	parse := []struct {
		name   string
		status int
		body   string
		want   *Error
	}{
		{"rate limit", 429, `{"error":{"message":"slow down","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, &Error{Status: 429, Type: ErrRateLimit, Code: "rate_limit_exceeded", Message: "slow down"}},
		{"quota", 429, `{"error":{"message":"pay","type":"insufficient_quota","code":"insufficient_quota"}}`, &Error{Status: 429, Type: ErrQuota, Code: "insufficient_quota", Message: "pay"}},
		{"bad request", 400, `{"error":{"message":"bad","type":"invalid_request_error","param":"input","code":null}}`, &Error{Status: 400, Type: ErrInvalidRequest, Message: "bad"}},
		{"auth", 401, `{"error":{"message":"key","type":"invalid_request_error","code":"invalid_api_key"}}`, &Error{Status: 401, Type: ErrAuthentication, Code: "invalid_api_key", Message: "key"}},
		{"server", 500, `{"error":{"message":"boom","type":"server_error"}}`, &Error{Status: 500, Type: ErrServer, Message: "boom"}},
		{"overloaded", 503, `{"error":{"message":"busy"}}`, &Error{Status: 503, Type: ErrOverloaded, Message: "busy"}},
		{"stream error event", 0, `{"type":"error","code":"server_error","message":"oops","param":null,"sequence_number":3}`, &Error{Type: ErrServer, Code: "server_error", Message: "oops"}},
		{"stream response.failed", 0, `{"type":"response.failed","response":{"status":"failed","error":{"code":"rate_limit_exceeded","message":"later"}}}`, &Error{Type: ErrRateLimit, Code: "rate_limit_exceeded", Message: "later"}},
		{"not an error", 500, `{"ok":true}`, nil},
		{"not JSON", 502, `<html>`, nil},
	}
	for _, tc := range parse {
		t.Run(tc.name, func(t *testing.T) {
			got := c.ParseError(tc.status, []byte(tc.body))
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	build := []struct {
		e    Error
		want string
	}{
		{Error{Status: 429, Type: ErrRateLimit, Message: "m"}, `{"error":{"message":"m","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}`},
		{Error{Status: 400, Type: ErrInvalidRequest, Message: "m"}, `{"error":{"message":"m","type":"invalid_request_error","param":null,"code":null}}`},
		{Error{Status: 402, Type: ErrQuota, Message: "m"}, `{"error":{"message":"m","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`},
		{Error{Status: 529, Type: ErrOverloaded, Code: "overloaded_error", Message: "m"}, `{"error":{"message":"m","type":"server_error","param":null,"code":"overloaded_error"}}`},
		{Error{Status: 401, Type: ErrAuthentication, Message: "m"}, `{"error":{"message":"m","type":"authentication_error","param":null,"code":"invalid_api_key"}}`},
	}
	for _, tc := range build {
		rspJSONEq(t, c.BuildError(&tc.e), tc.want)
	}
}

// rspSSE is one event of an encoded stream.
type rspSSE struct {
	name string
	data gjson.Result
}

// rspSplitSSE reads an encoded stream back into its events.
func rspSplitSSE(t *testing.T, b []byte) []rspSSE {
	t.Helper()
	var out []rspSSE
	for _, chunk := range strings.Split(strings.TrimSuffix(string(b), "\n\n"), "\n\n") {
		if chunk == "" {
			continue
		}
		name, data, ok := strings.Cut(chunk, "\n")
		if !ok || !strings.HasPrefix(name, "event: ") || !strings.HasPrefix(data, "data: ") || strings.Contains(data, "\n") {
			t.Fatalf("malformed SSE event %q", chunk)
		}
		d := strings.TrimPrefix(data, "data: ")
		if !gjson.Valid(d) {
			t.Fatalf("event data is not JSON: %s", d)
		}
		out = append(out, rspSSE{name: strings.TrimPrefix(name, "event: "), data: gjson.Parse(d)})
	}
	return out
}

// rspCheckStream fails unless evs is a well-formed Responses stream: event names match their types,
// sequence numbers count from 0, created and in_progress open it, one terminal event ends it, every item is
// added at the next output_index and done once, deltas name open items, and the terminal response repeats
// every done item.
func rspCheckStream(t *testing.T, evs []rspSSE) {
	t.Helper()
	if len(evs) < 3 {
		t.Fatalf("stream too short: %d events", len(evs))
	}
	type itemState struct {
		id   string
		done bool
		item string
	}
	var items []*itemState
	for i, ev := range evs {
		typ := ev.data.Get("type").String()
		if typ != ev.name {
			t.Fatalf("event %d: name %q, type %q", i, ev.name, typ)
		}
		if n := ev.data.Get("sequence_number"); n.Type != gjson.Number || n.Int() != int64(i) {
			t.Fatalf("event %d (%s): sequence_number %s", i, typ, n.Raw)
		}
		terminal := typ == "response.completed" || typ == "response.incomplete" || typ == "response.failed"
		if terminal != (i == len(evs)-1) {
			t.Fatalf("event %d: %s (terminal events come last, once)", i, typ)
		}
		switch {
		case i == 0 && typ != "response.created", i == 1 && typ != "response.in_progress":
			t.Fatalf("event %d is %s", i, typ)
		case i < 2:
			if ev.data.Get("response.status").String() != "in_progress" || ev.data.Get("response.output").Raw != "[]" {
				t.Fatalf("event %d response: %s", i, ev.data.Get("response").Raw)
			}
		case typ == "response.output_item.added":
			if oi := ev.data.Get("output_index").Int(); oi != int64(len(items)) {
				t.Fatalf("event %d: added at output_index %d, want %d", i, oi, len(items))
			}
			id := ev.data.Get("item.id").String()
			if id == "" {
				t.Fatalf("event %d: item without id", i)
			}
			items = append(items, &itemState{id: id})
		case terminal:
			out := ev.data.Get("response.output").Array()
			if len(out) != len(items) {
				t.Fatalf("terminal response has %d items, stream %d", len(out), len(items))
			}
			for j, it := range items {
				if !it.done {
					t.Fatalf("item %d never done", j)
				}
				rspJSONEq(t, []byte(out[j].Raw), it.item)
			}
			if ev.data.Get("response.id").String() != evs[0].data.Get("response.id").String() {
				t.Fatal("terminal response id differs from created")
			}
		default:
			oi := ev.data.Get("output_index").Int()
			if oi < 0 || oi >= int64(len(items)) || items[oi].done {
				t.Fatalf("event %d (%s) for output_index %d, which is not open", i, typ, oi)
			}
			it := items[oi]
			if typ == "response.output_item.done" {
				if ev.data.Get("item.id").String() != it.id {
					t.Fatalf("event %d: done item id %s, added %s", i, ev.data.Get("item.id"), it.id)
				}
				it.done, it.item = true, ev.data.Get("item").Raw
			} else if ev.data.Get("item_id").String() != it.id {
				t.Fatalf("event %d (%s): item_id %s, want %s", i, typ, ev.data.Get("item_id"), it.id)
			}
		}
	}
}

// rspTypes is the event types of a stream.
func rspTypes(evs []rspSSE) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = strings.TrimPrefix(ev.name, "response.")
	}
	return out
}

// rspEncodeAll encodes events for a client of req.
func rspEncodeAll(t *testing.T, req *Request, evs []Event) []rspSSE {
	t.Helper()
	enc := rspTestCodec(t).NewEncoder(req)
	var b []byte
	for _, ev := range evs {
		b = enc.Encode(b, ev)
	}
	if after := enc.Encode(nil, Event{Type: EvTextDelta, Text: "late"}); len(after) != 0 {
		t.Fatalf("wrote after the end: %s", after)
	}
	return rspSplitSSE(t, b)
}

// rspTC is a tool call block start.
func rspTC(i int, id, name string) Event {
	return Event{Type: EvBlockStart, Index: i, Part: &Part{Kind: PartToolCall, ToolCall: &ToolCall{ID: id, Name: name}}}
}

func TestResponsesEncoder(t *testing.T) {
	tools := rspToolsReq(t)
	usage := &Usage{Input: 100, CacheRead: 1000, CacheWrite: 200, Output: 10, Reasoning: 3}
	cases := []struct {
		name  string
		req   *Request
		evs   []Event
		types string
		check func(t *testing.T, evs []rspSSE)
	}{
		{"text", &Request{Model: "m"}, []Event{
			{Type: EvStart, ID: "msg_1", Model: "claude"},
			{Type: EvBlockStart, Index: 0, Part: &Part{Kind: PartText}},
			{Type: EvTextDelta, Index: 0, Text: "Hel"}, {Type: EvTextDelta, Index: 0, Text: "lo"},
			{Type: EvBlockStop, Index: 0}, {Type: EvFinish, Finish: FinishStop}, {Type: EvUsage, Usage: usage}, {Type: EvEnd}},
			"created in_progress output_item.added content_part.added output_text.delta output_text.delta output_text.done content_part.done output_item.done completed",
			func(t *testing.T, evs []rspSSE) {
				last := evs[len(evs)-1].data.Get("response")
				for path, want := range map[string]string{"id": "resp_msg_1", "model": "claude", "status": "completed",
					"output.0.content.0.text": "Hello", "output.0.id": "msg_1_0", "usage.input_tokens": "1300",
					"usage.input_tokens_details.cached_tokens": "1000", "usage.output_tokens": "10",
					"usage.output_tokens_details.reasoning_tokens": "3", "usage.total_tokens": "1310"} {
					if got := last.Get(path).String(); got != want {
						t.Errorf("%s = %q, want %q", path, got, want)
					}
				}
				if d := evs[4].data; d.Get("delta").String() != "Hel" || d.Get("content_index").Raw != "0" || d.Get("logprobs").Raw != "[]" {
					t.Errorf("delta event %s", d.Raw)
				}
				if d := evs[6].data; d.Get("text").String() != "Hello" {
					t.Errorf("text.done %s", d.Raw)
				}
				if d := evs[2].data.Get("item"); d.Get("status").String() != "in_progress" || d.Get("content").Raw != "[]" || d.Get("role").String() != "assistant" {
					t.Errorf("added item %s", d.Raw)
				}
			}},
		{"thinking, parallel function and custom calls, local shell", tools, []Event{
			{Type: EvStart, ID: "msg_2", Model: "claude"},
			{Type: EvBlockStart, Index: 0, Part: &Part{Kind: PartThinking}},
			{Type: EvThinkingDelta, Index: 0, Text: "think"}, {Type: EvSignature, Index: 0, Signature: "sig"}, {Type: EvBlockStop, Index: 0},
			rspTC(1, "toolu_1", "shell"), {Type: EvArgsDelta, Index: 1, Text: `{"command":`}, {Type: EvArgsDelta, Index: 1, Text: `["ls"]}`},
			rspTC(2, "toolu_2", "apply_patch"), {Type: EvArgsDelta, Index: 2, Text: `{"input":"*** Begin`}, {Type: EvArgsDelta, Index: 2, Text: ` Patch\n\"x\""}`},
			{Type: EvBlockStop, Index: 1}, {Type: EvBlockStop, Index: 2},
			rspTC(3, "toolu_3", "local_shell"), {Type: EvArgsDelta, Index: 3, Text: `{"command":["pwd"],"workdir":"/w"}`}, {Type: EvBlockStop, Index: 3},
			{Type: EvFinish, Finish: FinishToolCalls}, {Type: EvEnd}},
			"created in_progress output_item.added reasoning_summary_part.added reasoning_summary_text.delta reasoning_summary_text.done reasoning_summary_part.done output_item.done " +
				"output_item.added function_call_arguments.delta function_call_arguments.delta output_item.added function_call_arguments.done output_item.done " +
				"custom_tool_call_input.delta custom_tool_call_input.done output_item.done output_item.added output_item.done completed",
			func(t *testing.T, evs []rspSSE) {
				out := evs[len(evs)-1].data.Get("response.output")
				rspJSONEq(t, []byte(out.Raw), `[
					{"id":"rs_2_0","type":"reasoning","summary":[{"type":"summary_text","text":"think"}],"encrypted_content":"sig"},
					{"id":"fc_2_1","type":"function_call","status":"completed","arguments":"{\"command\":[\"ls\"]}","call_id":"toolu_1","name":"shell"},
					{"id":"ctc_2_2","type":"custom_tool_call","status":"completed","call_id":"toolu_2","name":"apply_patch","input":"*** Begin Patch\n\"x\""},
					{"id":"lsh_2_3","type":"local_shell_call","status":"completed","call_id":"toolu_3","action":{"type":"exec","command":["pwd"],"env":{},"working_directory":"/w"}}]`)
				if d := evs[11].data.Get("item"); d.Get("type").String() != "custom_tool_call" || d.Get("input").Raw != `""` {
					t.Errorf("custom added %s", d.Raw)
				}
				if d := evs[8].data.Get("item"); d.Get("arguments").Raw != `""` || d.Get("call_id").String() != "toolu_1" {
					t.Errorf("function added %s", d.Raw)
				}
				if d := evs[15].data; d.Get("input").String() != "*** Begin Patch\n\"x\"" {
					t.Errorf("custom input done %s", d.Raw)
				}
				if d := evs[17].data.Get("item"); d.Get("type").String() != "local_shell_call" || d.Get("action.command").Raw != "[]" {
					t.Errorf("shell added %s", d.Raw)
				}
			}},
		{"length is incomplete", &Request{Model: "m"}, []Event{
			{Type: EvStart}, {Type: EvBlockStart, Index: 0, Part: &Part{Kind: PartText}}, {Type: EvTextDelta, Index: 0, Text: "cu"},
			{Type: EvFinish, Finish: FinishLength}, {Type: EvEnd}},
			"created in_progress output_item.added content_part.added output_text.delta output_text.done content_part.done output_item.done incomplete",
			func(t *testing.T, evs []rspSSE) {
				r := evs[len(evs)-1].data.Get("response")
				if r.Get("status").String() != "incomplete" || r.Get("incomplete_details.reason").String() != "max_output_tokens" || r.Get("usage.input_tokens").Raw != "0" {
					t.Errorf("incomplete response %s", r.Raw)
				}
			}},
		{"an error closes the open item, fails, and ends the stream", &Request{Model: "m"}, []Event{
			{Type: EvStart, ID: "x"}, {Type: EvBlockStart, Index: 0, Part: &Part{Kind: PartText}}, {Type: EvTextDelta, Index: 0, Text: "par"},
			{Type: EvError, Err: &Error{Type: ErrRateLimit, Message: "slow down"}},
			{Type: EvTextDelta, Index: 0, Text: "more"}, {Type: EvEnd}},
			"created in_progress output_item.added content_part.added output_text.delta output_text.done content_part.done output_item.done failed",
			func(t *testing.T, evs []rspSSE) {
				r := evs[len(evs)-1].data.Get("response")
				if r.Get("status").String() != "failed" || r.Get("error.code").String() != "rate_limit_exceeded" || r.Get("error.message").String() != "slow down" || r.Get("output.0.content.0.text").String() != "par" {
					t.Errorf("failed response %s", r.Raw)
				}
			}},
		{"error before anything", nil, []Event{{Type: EvError, Err: &Error{Code: "upstream_error", Message: "cut"}}},
			"created in_progress failed",
			func(t *testing.T, evs []rspSSE) {
				if c := evs[2].data.Get("response.error.code").String(); c != "upstream_error" {
					t.Errorf("code %q", c)
				}
			}},
		{"blocks start implicitly; unknown stops are ignored; open blocks close at the end", &Request{Model: "m"}, []Event{
			{Type: EvTextDelta, Index: 0, Text: "hi"}, {Type: EvBlockStop, Index: 7}, {Type: EvArgsDelta, Index: 1, Text: "{}"}, {Type: EvEnd}},
			"created in_progress output_item.added content_part.added output_text.delta output_item.added function_call_arguments.delta " +
				"output_text.done content_part.done output_item.done function_call_arguments.done output_item.done completed",
			func(t *testing.T, evs []rspSSE) {
				if id := evs[5].data.Get("item.call_id").String(); id != "call_1" {
					t.Errorf("synthesized call id %q", id)
				}
				if m := evs[0].data.Get("response.model").String(); m != "m" {
					t.Errorf("model %q", m)
				}
			}},
		{"redacted thinking", &Request{Model: "m"}, []Event{
			{Type: EvStart}, {Type: EvBlockStart, Index: 0, Part: &Part{Kind: PartRedactedThinking, Data: "D"}}, {Type: EvBlockStop, Index: 0}, {Type: EvEnd}},
			"created in_progress output_item.added output_item.done completed",
			func(t *testing.T, evs []rspSSE) {
				if e := evs[3].data.Get("item.encrypted_content").String(); e != "redacted_thinking:D" || evs[3].data.Get("item.summary").Raw != "[]" {
					t.Errorf("redacted item %s", evs[3].data.Raw)
				}
			}},
		{"empty answer", &Request{Model: "m"}, []Event{{Type: EvStart, ID: "resp_keep"}, {Type: EvEnd}},
			"created in_progress completed",
			func(t *testing.T, evs []rspSSE) {
				if id := evs[2].data.Get("response.id").String(); id != "resp_keep" {
					t.Errorf("id %q", id)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			evs := rspEncodeAll(t, tc.req, tc.evs)
			rspCheckStream(t, evs)
			if got := strings.Join(rspTypes(evs), " "); got != tc.types {
				t.Fatalf("events\n got: %s\nwant: %s", got, tc.types)
			}
			tc.check(t, evs)
		})
	}
}

// rspEvString is a canonical event in a compact form for comparisons.
func rspEvString(ev Event) string {
	switch ev.Type {
	case EvStart:
		return "start " + ev.ID + " " + ev.Model
	case EvBlockStart:
		if ev.Part == nil {
			return "block ?"
		}
		s := "block " + strconvI(ev.Index) + " " + string(ev.Part.Kind)
		if tc := ev.Part.ToolCall; tc != nil {
			s += " " + tc.ID + " " + tc.Name
		}
		return s
	case EvTextDelta:
		return "text " + strconvI(ev.Index) + " " + ev.Text
	case EvThinkingDelta:
		return "think " + strconvI(ev.Index) + " " + ev.Text
	case EvSignature:
		return "sig " + strconvI(ev.Index) + " " + ev.Signature
	case EvArgsDelta:
		return "args " + strconvI(ev.Index) + " " + ev.Text
	case EvBlockStop:
		return "stop " + strconvI(ev.Index)
	case EvFinish:
		return "finish " + string(ev.Finish)
	case EvUsage:
		b, _ := json.Marshal(ev.Usage)
		return "usage " + string(b)
	case EvError:
		return "error " + string(ev.Err.Type) + " " + ev.Err.Code + " " + ev.Err.Message
	case EvEnd:
		return "end"
	}
	return "?"
}

// strconvI is an int as text.
func strconvI(i int) string { b, _ := json.Marshal(i); return string(b) }

// rspDecodeCases are upstream streams (event name, data) and the canonical events they decode to (Finish(true)
// at the end unless cut).
var rspDecodeCases = []struct {
	name   string
	events [][2]string
	cut    bool
	want   []string
}{
	{"text", [][2]string{
		{"response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","model":"gpt-5","status":"in_progress","output":[]}}`},
		{"response.in_progress", `{"type":"response.in_progress","sequence_number":1,"response":{"id":"resp_1"}}`},
		{"response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}}`},
		{"response.content_part.added", `{"type":"response.content_part.added","item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}}`},
		{"response.output_text.delta", `{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"He","obfuscation":"x"}`},
		{"response.output_text.delta", `{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"llo"}`},
		{"response.output_text.done", `{"type":"response.output_text.done","item_id":"msg_1","output_index":0,"content_index":0,"text":"Hello"}`},
		{"response.content_part.done", `{"type":"response.content_part.done","item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","text":"Hello"}}`},
		{"response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":{"id":"msg_1","type":"message","content":[{"type":"output_text","text":"Hello"}]}}`},
		{"response.completed", `{"type":"response.completed","response":{"id":"resp_1","status":"completed","output":[{"id":"msg_1","type":"message","content":[{"type":"output_text","text":"Hello"}]}],"usage":{"input_tokens":1300,"input_tokens_details":{"cached_tokens":1000},"output_tokens":10,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":1310}}}`},
	}, false, []string{"start resp_1 gpt-5", "block 0 text", "text 0 He", "text 0 llo", "stop 0", "finish stop", `usage {"input":300,"cache_read":1000,"output":10}`, "end"}},
	{"reasoning in two summary parts with encrypted content, then a function call", [][2]string{
		{"response.created", `{"type":"response.created","response":{"id":"r","model":"m"}}`},
		{"response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}`},
		{"response.reasoning_summary_part.added", `{"type":"response.reasoning_summary_part.added","item_id":"rs_1","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}}`},
		{"response.reasoning_summary_text.delta", `{"type":"response.reasoning_summary_text.delta","item_id":"rs_1","output_index":0,"summary_index":0,"delta":"one"}`},
		{"response.reasoning_summary_text.done", `{"type":"response.reasoning_summary_text.done","item_id":"rs_1","output_index":0,"summary_index":0,"text":"one"}`},
		{"response.reasoning_summary_part.added", `{"type":"response.reasoning_summary_part.added","item_id":"rs_1","output_index":0,"summary_index":1,"part":{"type":"summary_text","text":""}}`},
		{"response.reasoning_summary_text.delta", `{"type":"response.reasoning_summary_text.delta","item_id":"rs_1","output_index":0,"summary_index":1,"delta":"two"}`},
		{"response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":{"id":"rs_1","type":"reasoning","encrypted_content":"gAAA","summary":[{"type":"summary_text","text":"one"},{"type":"summary_text","text":"two"}]}}`},
		{"response.output_item.added", `{"type":"response.output_item.added","output_index":1,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_1","name":"calc"}}`},
		{"response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":1,"delta":"{\"a\":"}`},
		{"response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":1,"delta":"1}"}`},
		{"response.function_call_arguments.done", `{"type":"response.function_call_arguments.done","item_id":"fc_1","output_index":1,"arguments":"{\"a\":1}"}`},
		{"response.output_item.done", `{"type":"response.output_item.done","output_index":1,"item":{"id":"fc_1","type":"function_call","status":"completed","arguments":"{\"a\":1}","call_id":"call_1","name":"calc"}}`},
		{"response.completed", `{"type":"response.completed","response":{"id":"r","status":"completed","output":[{"type":"reasoning"},{"type":"function_call"}],"usage":{"input_tokens":5,"output_tokens":7,"output_tokens_details":{"reasoning_tokens":4}}}}`},
	}, false, []string{"start r m", "block 0 thinking", "think 0 one", "think 0 \n\n", "think 0 two", "sig 0 responses:gAAA", "stop 0",
		"block 1 tool_call call_1 calc", `args 1 {"a":`, "args 1 1}", "stop 1", "finish tool_calls", `usage {"input":5,"output":7,"reasoning":4}`, "end"}},
	{"custom tool input streams as arguments JSON", [][2]string{
		{"response.created", `{"type":"response.created","response":{"id":"r","model":"m"}}`},
		{"response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"type":"custom_tool_call","id":"ctc_1","call_id":"call_c","name":"apply_patch","input":""}}`},
		{"response.custom_tool_call_input.delta", `{"type":"response.custom_tool_call_input.delta","item_id":"ctc_1","output_index":0,"delta":"*** Begin \"P\"\n"}`},
		{"response.custom_tool_call_input.delta", `{"type":"response.custom_tool_call_input.delta","item_id":"ctc_1","output_index":0,"delta":"end"}`},
		{"response.custom_tool_call_input.done", `{"type":"response.custom_tool_call_input.done","item_id":"ctc_1","output_index":0,"input":"*** Begin \"P\"\nend"}`},
		{"response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":{"type":"custom_tool_call","id":"ctc_1","call_id":"call_c","name":"apply_patch","input":"*** Begin \"P\"\nend"}}`},
		{"response.completed", `{"type":"response.completed","response":{"id":"r","status":"completed","output":[{"type":"custom_tool_call"}]}}`},
	}, false, []string{"start r m", "block 0 tool_call call_c apply_patch", `args 0 {"input":"*** Begin \"P\"\n`, "args 0 end", `args 0 "}`, "stop 0", "finish tool_calls", "end"}},
	{"local shell call", [][2]string{
		{"response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"id":"lsh_1","type":"local_shell_call","status":"in_progress","action":{"type":"exec","command":[],"env":{}},"call_id":"call_s"}}`},
		{"response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":{"id":"lsh_1","type":"local_shell_call","status":"completed","action":{"type":"exec","command":["ls","-a"],"env":{}},"call_id":"call_s"}}`},
		{"response.completed", `{"type":"response.completed","response":{"id":"r","status":"completed","output":[]}}`},
	}, false, []string{"start  ", "block 0 tool_call call_s local_shell", `args 0 {"command":["ls","-a"]}`, "stop 0", "finish tool_calls", "end"}},
	{"incomplete at max_output_tokens is length", [][2]string{
		{"response.output_text.delta", `{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"cu"}`},
		{"response.incomplete", `{"type":"response.incomplete","response":{"id":"r","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[]}}`},
	}, false, []string{"start  ", "block 0 text", "text 0 cu", "finish length", "stop 0", "end"}},
	{"response.failed is an error and ends the stream", [][2]string{
		{"response.created", `{"type":"response.created","response":{"id":"r","model":"m"}}`},
		{"response.failed", `{"type":"response.failed","response":{"id":"r","status":"failed","error":{"code":"server_error","message":"boom"}}}`},
		{"response.output_text.delta", `{"type":"response.output_text.delta","output_index":0,"delta":"late"}`},
	}, false, []string{"start r m", "error server server_error boom"}},
	{"error event", [][2]string{
		{"error", `{"type":"error","code":"rate_limit_exceeded","message":"slow","param":null,"sequence_number":2}`},
	}, false, []string{"start  ", "error rate_limit rate_limit_exceeded slow"}},
	{"unknown events give nothing", [][2]string{
		{"response.created", `{"type":"response.created","response":{"id":"r","model":"m"}}`},
		{"response.web_search_call.in_progress", `{"type":"response.web_search_call.in_progress","output_index":0}`},
		{"response.output_text.annotation.added", `not even json`},
		{"", `[DONE]`},
		{"response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"type":"web_search_call","id":"ws"}}`},
		{"response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":{"type":"web_search_call","id":"ws"}}`},
		{"response.output_item.done", `{"type":"response.output_item.done","output_index":1,"item":{"type":"reasoning","id":"rs","summary":[]}}`},
		{"response.completed", `{"type":"response.completed","response":{"id":"r","status":"completed"}}`},
	}, false, []string{"start r m", "finish stop", "end"}},
	{"out of order: deltas before their items, a stop for an unknown item", [][2]string{
		{"response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","item_id":"fc_9","delta":"{}"}`},
		{"response.reasoning_summary_text.delta", `{"type":"response.reasoning_summary_text.delta","item_id":"rs_9","summary_index":0,"delta":"t"}`},
		{"response.output_item.done", `{"type":"response.output_item.done","output_index":5,"item":{"type":"message","id":"msg_x","content":[]}}`},
		{"response.content_part.done", `{"type":"response.content_part.done","output_index":6,"content_index":0,"part":{"type":"output_text","text":""}}`},
	}, true, []string{"start  ", "block 0 tool_call fc_9 ", "args 0 {}", "block 1 thinking", "think 1 t", "stop 0", "stop 1"}},
	{"items shown only when done", [][2]string{
		{"response.output_item.done", `{"type":"response.output_item.done","item":{"type":"message","id":"msg_a","role":"assistant","content":[{"type":"output_text","text":"Hello"}]}}`},
		{"response.output_item.done", `{"type":"response.output_item.done","item":{"type":"function_call","id":"fc_a","name":"f","arguments":"{}","call_id":"c"}}`},
		{"response.completed", `{"type":"response.completed","response":{"id":"r1","output":[{"type":"message","id":"msg_a","content":[{"type":"output_text","text":"Hello"}]},{"type":"function_call","id":"fc_a","name":"f","arguments":"{}","call_id":"c"}]}}`},
	}, false, []string{"start  ", "block 0 text", "text 0 Hello", "stop 0", "block 1 tool_call c f", "args 1 {}", "stop 1", "finish tool_calls", "end"}},
	{"items shown only in response.completed", [][2]string{
		{"response.completed", `{"type":"response.completed","response":{"id":"r2","model":"m","status":"completed","output":[{"type":"reasoning","summary":[{"text":"s"}]},{"type":"message","content":[{"type":"output_text","text":"a"},{"type":"refusal","refusal":"b"}]}]}}`},
	}, false, []string{"start r2 m", "block 0 thinking", "think 0 s", "stop 0", "block 1 text", "text 1 a", "stop 1", "block 2 text", "text 2 b", "stop 2", "finish stop", "end"}},
	{"cut short: open blocks close, no end", [][2]string{
		{"response.created", `{"type":"response.created","response":{"id":"r","model":"m"}}`},
		{"response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"type":"custom_tool_call","id":"ctc","call_id":"c","name":"p","input":""}}`},
		{"response.custom_tool_call_input.delta", `{"type":"response.custom_tool_call_input.delta","output_index":0,"delta":"ab"}`},
	}, true, []string{"start r m", "block 0 tool_call c p", `args 0 {"input":"ab`, `args 0 "}`, "stop 0"}},
}

func TestResponsesDecoder(t *testing.T) {
	c := rspTestCodec(t)
	for _, tc := range rspDecodeCases {
		t.Run(tc.name, func(t *testing.T) {
			dec := c.NewDecoder()
			var got []string
			var all []Event
			for _, e := range tc.events {
				evs, err := dec.Decode(e[0], []byte(e[1]))
				if err != nil {
					t.Fatalf("Decode(%s): %v", e[0], err)
				}
				all = append(all, evs...)
			}
			all = append(all, dec.Finish(!tc.cut)...)
			for _, ev := range all {
				got = append(got, rspEvString(ev))
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("events\n got: %q\nwant: %q", got, tc.want)
			}
			// Tool-call arguments put together are JSON.
			args := map[int]string{}
			for _, ev := range all {
				if ev.Type == EvArgsDelta {
					args[ev.Index] += ev.Text
				}
			}
			for i, a := range args {
				if !json.Valid([]byte(a)) {
					t.Fatalf("block %d arguments are not JSON: %s", i, a)
				}
			}
		})
	}
}

func TestResponsesDecoderMalformed(t *testing.T) {
	dec := rspTestCodec(t).NewDecoder()
	if _, err := dec.Decode("response.output_text.delta", []byte(`{"type":"response.output_text.delta",`)); err == nil {
		t.Fatal("malformed known event: no error")
	}
	if evs, err := dec.Decode("response.mystery", []byte(`{oops`)); err != nil || evs != nil {
		t.Fatalf("malformed unknown event: %v %v", evs, err)
	}
}

// TestResponsesStreamThrough decodes a Responses upstream's stream and encodes it for a Responses client:
// the result is a well-formed stream carrying the same items.
func TestResponsesStreamThrough(t *testing.T) {
	c := rspTestCodec(t)
	req := rspToolsReq(t)
	for _, tc := range rspDecodeCases {
		t.Run(tc.name, func(t *testing.T) {
			dec, enc := c.NewDecoder(), c.NewEncoder(req)
			var b []byte
			for _, e := range tc.events {
				evs, _ := dec.Decode(e[0], []byte(e[1]))
				for _, ev := range evs {
					b = enc.Encode(b, ev)
				}
			}
			for _, ev := range dec.Finish(!tc.cut) {
				b = enc.Encode(b, ev)
			}
			if tc.cut {
				b = enc.Encode(b, Event{Type: EvError, Err: &Error{Type: ErrServer, Code: "upstream_error", Message: "cut"}})
			}
			rspCheckStream(t, rspSplitSSE(t, b))
		})
	}
}

// Codex CLI sends a namespace of function tools and a web_search tool on every call: the namespace's tools
// are offered by their own names, web_search is dropped (and named), so Codex works on any channel.
func TestResponsesCodexToolsTranslate(t *testing.T) {
	body := `{"model":"m","input":"hi","tools":[{"type":"function","name":"shell","parameters":{"type":"object"}},
	  {"type":"namespace","name":"multi_agent_v1","tools":[{"type":"function","name":"spawn_agent","parameters":{"type":"object"}},
	    {"type":"function","name":"wait_agent","parameters":{"type":"object"}}]},
	  {"type":"web_search","external_web_access":false}]}`
	r, err := rspTestCodec(t).ParseRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range r.Tools {
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != "shell,spawn_agent,wait_agent" || len(r.Dropped) != 1 || r.Dropped[0] != "tools[2]" {
		t.Fatalf("tools %v, dropped %v", names, r.Dropped)
	}
}

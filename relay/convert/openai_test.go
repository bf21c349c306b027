package convert

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"tollgate/relay/adaptor"
)

// oaiTestCodec is the codec with a fixed clock (created = 1700000000).
var oaiTestCodec = oaiCodec{now: func() time.Time { return time.Unix(1700000000, 0) }}

// oaiJSONEqual reports whether two JSON texts hold the same value, and both normalized.
func oaiJSONEqual(t *testing.T, got, want []byte) (bool, string, string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("want is not JSON: %v\n%s", err, want)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	return reflect.DeepEqual(g, w), string(gb), string(wb)
}

// oaiParseCases are ParseRequest inputs and the canonical request each must give (as canonical JSON; the
// fields not listed are zero).
var oaiParseCases = []struct {
	name, body, want string
}{
	{"system developer user", `{"model":"m","messages":[{"role":"system","content":"be brief"},
		{"role":"developer","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},
		{"role":"user","content":"hi"}]}`,
		`{"model":"m","system":[{"kind":"text","text":"be brief"},{"kind":"text","text":"a"},{"kind":"text","text":"b"}],
		"messages":[{"role":"user","parts":[{"kind":"text","text":"hi"}]}],"stream":false}`},
	{"multi-turn", `{"model":"m","messages":[{"role":"user","content":"1"},{"role":"assistant","content":"2"},
		{"role":"user","content":[{"type":"text","text":"3"}]},{"role":"assistant","content":[{"type":"text","text":"4"},{"type":"refusal","refusal":"no"}]}]}`,
		`{"model":"m","messages":[{"role":"user","parts":[{"kind":"text","text":"1"}]},{"role":"assistant","parts":[{"kind":"text","text":"2"}]},
		{"role":"user","parts":[{"kind":"text","text":"3"}]},{"role":"assistant","parts":[{"kind":"text","text":"4"},{"kind":"text","text":"no"}]}],"stream":false}`},
	{"images", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"look"},
		{"type":"image_url","image_url":{"url":"https://x/a.png","detail":"high"}},
		{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,AAAA","detail":"low"}},
		{"type":"image_url","image_url":"https://x/b.png"}]}]}`,
		`{"model":"m","messages":[{"role":"user","parts":[{"kind":"text","text":"look"},
		{"kind":"image","image":{"url":"https://x/a.png","detail":"high"}},
		{"kind":"image","image":{"media_type":"image/jpeg","data":"AAAA","detail":"low"}},
		{"kind":"image","image":{"url":"https://x/b.png"}}]}],"stream":false}`},
	{"tool calls and results", `{"model":"m","messages":[{"role":"user","content":"weather?"},
		{"role":"assistant","content":null,"reasoning_content":"think","tool_calls":[
			{"id":"call_a","type":"function","function":{"name":"get","arguments":"{\"city\":\"Paris\"}"}},
			{"id":"call_b","type":"function","function":{"name":"time","arguments":""}}]},
		{"role":"tool","tool_call_id":"call_a","content":"sunny"},
		{"role":"tool","tool_call_id":"call_b","content":[{"type":"text","text":"noon"}]},
		{"role":"user","content":"thanks"}]}`,
		`{"model":"m","messages":[{"role":"user","parts":[{"kind":"text","text":"weather?"}]},
		{"role":"assistant","parts":[{"kind":"tool_call","tool_call":{"id":"call_a","name":"get","args":"{\"city\":\"Paris\"}"}},
			{"kind":"tool_call","tool_call":{"id":"call_b","name":"time","args":"{}"}}]},
		{"role":"user","parts":[{"kind":"tool_result","tool_result":{"call_id":"call_a","name":"get","content":[{"kind":"text","text":"sunny"}]}},
			{"kind":"tool_result","tool_result":{"call_id":"call_b","name":"time","content":[{"kind":"text","text":"noon"}]}}]},
		{"role":"user","parts":[{"kind":"text","text":"thanks"}]}],"stream":false}`},
	{"tools and choice", `{"model":"m","messages":[{"role":"user","content":"x"}],
		"tools":[{"type":"function","function":{"name":"get","description":"d","parameters":{"type":"object"},"strict":true}},
			{"type":"function","function":{"name":"bare"}}],
		"tool_choice":{"type":"function","function":{"name":"get"}},"parallel_tool_calls":false}`,
		`{"model":"m","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],
		"tools":[{"name":"get","description":"d","parameters":{"type":"object"},"strict":true},{"name":"bare"}],
		"tool_choice":{"mode":"tool","name":"get"},"parallel_tool_calls":false,"stream":false}`},
	{"tool choice auto", `{"messages":[{"role":"user","content":"x"}],"tool_choice":"auto"}`,
		`{"model":"","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"tool_choice":{"mode":"auto"},"stream":false}`},
	{"tool choice none", `{"messages":[{"role":"user","content":"x"}],"tool_choice":"none"}`,
		`{"model":"","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"tool_choice":{"mode":"none"},"stream":false}`},
	{"tool choice required", `{"messages":[{"role":"user","content":"x"}],"tool_choice":"required"}`,
		`{"model":"","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"tool_choice":{"mode":"required"},"stream":false}`},
	{"max_tokens", `{"messages":[{"role":"user","content":"x"}],"max_tokens":100}`,
		`{"model":"","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"max_tokens":100,"stream":false}`},
	{"max_completion_tokens wins", `{"messages":[{"role":"user","content":"x"}],"max_tokens":100,"max_completion_tokens":200}`,
		`{"model":"","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"max_tokens":200,"stream":false}`},
	{"sampling and stop string", `{"messages":[{"role":"user","content":"x"}],"temperature":0.5,"top_p":0.9,"stop":"END"}`,
		`{"model":"","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"temperature":0.5,"top_p":0.9,"stop":["END"],"stream":false}`},
	{"stop array", `{"messages":[{"role":"user","content":"x"}],"stop":["a","b"]}`,
		`{"model":"","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"stop":["a","b"],"stream":false}`},
	{"json_object", `{"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_object"}}`,
		`{"model":"","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"response_format":{"type":"json_object"},"stream":false}`},
	{"text format", `{"messages":[{"role":"user","content":"x"}],"response_format":{"type":"text"}}`,
		`{"model":"","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"response_format":{"type":"text"},"stream":false}`},
	{"json_schema", `{"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"out","schema":{"type":"object"},"strict":true}}}`,
		`{"model":"","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"response_format":{"type":"json_schema","name":"out","schema":{"type":"object"},"strict":true},"stream":false}`},
	{"reasoning effort", `{"messages":[{"role":"user","content":"x"}],"reasoning_effort":"high"}`,
		`{"model":"","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"reasoning":{"effort":"high","enabled":true},"stream":false}`},
	{"reasoning none", `{"messages":[{"role":"user","content":"x"}],"reasoning_effort":"none"}`,
		`{"model":"","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"reasoning":{"enabled":false},"stream":false}`},
	{"stream usage user", `{"messages":[{"role":"user","content":"x"}],"stream":true,"stream_options":{"include_usage":true},"user":"u1",
		"store":true,"metadata":{"a":"b"},"service_tier":"auto","prompt_cache_key":"k","unknown_field":[1,2]}`,
		`{"model":"","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"stream":true,"include_usage":true,"user":"u1"}`},
	{"openai-only knobs", `{"messages":[{"role":"user","content":"x"}],"n":2,"presence_penalty":0.5,"frequency_penalty":-0.5,
		"seed":7,"logprobs":true,"top_logprobs":3,"logit_bias":{"50256":-100}}`,
		`{"model":"","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"stream":false,"n":2,"presence_penalty":0.5,
		"frequency_penalty":-0.5,"seed":7,"logprobs":true,"top_logprobs":3,"logit_bias":{"50256":-100}}`},
	{"defaults kept as defaults", `{"messages":[{"role":"user","content":"x"}],"n":1,"logprobs":false,"logit_bias":{},"stop":null,"tool_choice":null,"modalities":["text"],"verbosity":"medium"}`,
		`{"model":"","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"stream":false,"n":1}`},
	{"legacy functions", `{"messages":[{"role":"user","content":"x"},
		{"role":"assistant","content":null,"function_call":{"name":"get","arguments":"{}"}},
		{"role":"function","name":"get","content":"42"}],
		"functions":[{"name":"get","parameters":{"type":"object"}}],"function_call":{"name":"get"}}`,
		`{"model":"","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]},
		{"role":"assistant","parts":[{"kind":"tool_call","tool_call":{"id":"call_1","name":"get","args":"{}"}}]},
		{"role":"user","parts":[{"kind":"tool_result","tool_result":{"call_id":"call_1","name":"get","content":[{"kind":"text","text":"42"}]}}]}],
		"tools":[{"name":"get","parameters":{"type":"object"}}],"tool_choice":{"mode":"tool","name":"get"},"stream":false}`},
	{"tool call without id", `{"messages":[{"role":"user","content":"x"},
		{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":"{\"a\":1}"}}]}]}`,
		`{"model":"","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]},
		{"role":"assistant","parts":[{"kind":"tool_call","tool_call":{"id":"call_1_0","name":"f","args":"{\"a\":1}"}}]}],"stream":false}`},
}

func TestOAIParseRequest(t *testing.T) {
	for _, tc := range oaiParseCases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := oaiTestCodec.ParseRequest([]byte(tc.body))
			if err != nil {
				t.Fatalf("ParseRequest: %v", err)
			}
			got, _ := json.Marshal(r)
			if ok, g, w := oaiJSONEqual(t, got, []byte(tc.want)); !ok {
				t.Fatalf("canonical\n got %s\nwant %s", g, w)
			}
		})
	}
}

// oaiParseErrorCases are bodies ParseRequest refuses, with the field named and whether it is *Invalid.
var oaiParseErrorCases = []struct {
	name        string
	unsupported bool
	body, field string
}{
	{"not json", false, `{"messages":`, "body"},
	{"missing messages", false, `{"model":"m"}`, "messages"},
	{"null messages", false, `{"model":"m","messages":null}`, "messages"},
	{"empty messages", false, `{"model":"m","messages":[]}`, "messages"},
	{"wrong type temperature", false, `{"messages":[{"role":"user","content":"x"}],"temperature":"hot"}`, "temperature"},
	{"wrong type messages", false, `{"messages":{"role":"user"}}`, "messages"},
	{"content number", false, `{"messages":[{"role":"user","content":5}]}`, "messages[0].content"},
	{"arguments not json", false, `{"messages":[{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{oops"}}]}]}`, "messages[0].tool_calls[0].function.arguments"},
	{"arguments object", false, `{"messages":[{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"f","arguments":{"a":1}}}]}]}`, "messages.tool_calls.function.arguments"},
	{"audio part", true, `{"messages":[{"role":"user","content":[{"type":"text","text":"x"},{"type":"input_audio","input_audio":{"data":"AA","format":"wav"}}]}]}`, "messages[0].content[1].type"},
	{"file part", true, `{"messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"f"}}]}]}`, "messages[0].content[0].type"},
	{"unknown part", false, `{"messages":[{"role":"user","content":[{"type":"video"}]}]}`, "messages[0].content[0].type"},
	{"image in system", false, `{"messages":[{"role":"system","content":[{"type":"image_url","image_url":{"url":"u"}}]},{"role":"user","content":"x"}]}`, "messages[0].content[0].type"},
	{"image without url", false, `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"detail":"low"}}]}]}`, "messages[0].content[0].image_url.url"},
	{"unknown role", false, `{"messages":[{"role":"robot","content":"x"}]}`, "messages[0].role"},
	{"tool without id", false, `{"messages":[{"role":"tool","content":"x"}]}`, "messages[0].tool_call_id"},
	{"assistant audio", true, `{"messages":[{"role":"assistant","audio":{"id":"a"}}]}`, "messages[0].audio"},
	{"custom tool", true, `{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"custom","custom":{"name":"c"}}]}`, "tools[0].type"},
	{"tool without name", false, `{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{}}]}`, "tools[0].function.name"},
	{"allowed_tools choice", true, `{"messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"allowed_tools","allowed_tools":{}}}`, "tool_choice.type"},
	{"bad choice word", false, `{"messages":[{"role":"user","content":"x"}],"tool_choice":"always"}`, "tool_choice"},
	{"bad stop", false, `{"messages":[{"role":"user","content":"x"}],"stop":5}`, "stop"},
	{"bad format", false, `{"messages":[{"role":"user","content":"x"}],"response_format":{"type":"xml"}}`, "response_format.type"},
	{"schema missing", false, `{"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema"}}`, "response_format.json_schema"},
	{"audio output", true, `{"messages":[{"role":"user","content":"x"}],"modalities":["text","audio"],"audio":{"voice":"alloy"}}`, "modalities"},
	{"audio param", true, `{"messages":[{"role":"user","content":"x"}],"audio":{"voice":"alloy"}}`, "audio"},
	{"web search", true, `{"messages":[{"role":"user","content":"x"}],"web_search_options":{}}`, "web_search_options"},
	{"verbosity", true, `{"messages":[{"role":"user","content":"x"}],"verbosity":"low"}`, "verbosity"},
	{"logit_bias type", false, `{"messages":[{"role":"user","content":"x"}],"logit_bias":[1]}`, "logit_bias"},
}

func TestOAIParseRequestErrors(t *testing.T) {
	for _, tc := range oaiParseErrorCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := oaiTestCodec.ParseRequest([]byte(tc.body))
			var inv *Invalid
			var uns *Unsupported
			field := ""
			switch {
			case tc.unsupported && errors.As(err, &uns):
				field = uns.Field
			case !tc.unsupported && errors.As(err, &inv):
				field = inv.Field
			default:
				t.Fatalf("err = %v (%T), want unsupported %v", err, err, tc.unsupported)
			}
			if field != tc.field {
				t.Fatalf("field = %q (%v), want %q", field, err, tc.field)
			}
		})
	}
}

// oaiBuildCases are canonical requests (as JSON) and the chat completions body BuildRequest must write.
var oaiBuildCases = []struct{ name, canon, want string }{
	{"system and user", `{"model":"m","system":[{"kind":"text","text":"a"},{"kind":"text","text":"b","cache_control":{"type":"ephemeral"}}],
		"messages":[{"role":"user","parts":[{"kind":"text","text":"hi"}]}]}`,
		`{"model":"m","messages":[{"role":"system","content":"a\n\nb"},{"role":"user","content":"hi"}]}`},
	{"user images", `{"model":"m","messages":[{"role":"user","parts":[{"kind":"text","text":"look"},
		{"kind":"image","image":{"url":"https://x/a.png","detail":"high"}},{"kind":"image","image":{"media_type":"image/webp","data":"QUJD"}}]}]}`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"look"},
		{"type":"image_url","image_url":{"url":"https://x/a.png","detail":"high"}},{"type":"image_url","image_url":{"url":"data:image/webp;base64,QUJD"}}]}]}`},
	{"assistant history", `{"model":"m","messages":[{"role":"user","parts":[{"kind":"text","text":"q"}]},
		{"role":"assistant","parts":[{"kind":"thinking","text":"hmm","signature":"sig"},{"kind":"redacted_thinking","data":"xx"},{"kind":"text","text":"let me"},
			{"kind":"tool_call","tool_call":{"id":"toolu_1","name":"get","args":"{\"a\":1}"}},{"kind":"tool_call","tool_call":{"id":"toolu_2","name":"put","args":""}}]},
		{"role":"user","parts":[{"kind":"tool_result","tool_result":{"call_id":"toolu_1","content":[{"kind":"text","text":"one"}]}},
			{"kind":"tool_result","tool_result":{"call_id":"toolu_2","content":[{"kind":"text","text":"a"},{"kind":"text","text":"b"}],"is_error":true}},
			{"kind":"text","text":"go on"}]},
		{"role":"assistant","parts":[{"kind":"tool_call","tool_call":{"id":"toolu_3","name":"get","args":"{}"}}]},
		{"role":"user","parts":[{"kind":"tool_result","tool_result":{"call_id":"toolu_3","content":[{"kind":"text","text":"shot"},{"kind":"image","image":{"media_type":"image/png","data":"UE5H"}}]}}]},
		{"role":"assistant","parts":[{"kind":"thinking","text":"only thinking"}]}]}`,
		`{"model":"m","messages":[{"role":"user","content":"q"},
		{"role":"assistant","content":"let me","tool_calls":[{"id":"toolu_1","type":"function","function":{"name":"get","arguments":"{\"a\":1}"}},
			{"id":"toolu_2","type":"function","function":{"name":"put","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"toolu_1","content":"one"},
		{"role":"tool","tool_call_id":"toolu_2","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},
		{"role":"user","content":"go on"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"toolu_3","type":"function","function":{"name":"get","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"toolu_3","content":"shot"},
		{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,UE5H"}}]},
		{"role":"assistant","content":""}]}`},
	{"ids synthesized and matched by name", `{"model":"m","messages":[{"role":"assistant","parts":[{"kind":"tool_call","tool_call":{"name":"f","args":"{}"}}]},
		{"role":"user","parts":[{"kind":"tool_result","tool_result":{"name":"f","content":[]}}]}]}`,
		`{"model":"m","messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"call_0_0","type":"function","function":{"name":"f","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"call_0_0","content":""}]}`},
	{"tools named choice parallel", `{"model":"m","messages":[],"tools":[{"name":"get","description":"d","parameters":{"type":"object"},"strict":true},{"name":"bare","parameters":{}}],
		"tool_choice":{"mode":"tool","name":"get"},"parallel_tool_calls":false}`,
		`{"model":"m","messages":[],"tools":[{"type":"function","function":{"name":"get","description":"d","parameters":{"type":"object"},"strict":true}},
		{"type":"function","function":{"name":"bare","parameters":{}}}],"tool_choice":{"type":"function","function":{"name":"get"}},"parallel_tool_calls":false}`},
	{"choice words", `{"model":"m","messages":[],"tools":[{"name":"a"}],"tool_choice":{"mode":"required"}}`,
		`{"model":"m","messages":[],"tools":[{"type":"function","function":{"name":"a"}}],"tool_choice":"required"}`},
	{"parallel without tools dropped", `{"model":"m","messages":[],"parallel_tool_calls":true,"tool_choice":{"mode":"none"}}`,
		`{"model":"m","messages":[],"tool_choice":"none"}`},
	{"limits sampling stream", `{"model":"m","messages":[],"max_tokens":500,"temperature":0,"top_p":1,"stop":["x"],"stream":true,"user":"u"}`,
		`{"model":"m","messages":[],"max_completion_tokens":500,"temperature":0,"top_p":1,"stop":["x"],"stream":true,"stream_options":{"include_usage":true},"user":"u"}`},
	{"json schema without name", `{"model":"m","messages":[],"response_format":{"type":"json_schema","schema":{"type":"object"},"strict":true}}`,
		`{"model":"m","messages":[],"response_format":{"type":"json_schema","json_schema":{"name":"response","schema":{"type":"object"},"strict":true}}}`},
	{"json object", `{"model":"m","messages":[],"response_format":{"type":"json_object"}}`,
		`{"model":"m","messages":[],"response_format":{"type":"json_object"}}`},
	{"effort from budget", `{"model":"m","messages":[],"reasoning":{"budget":16000,"enabled":true}}`,
		`{"model":"m","messages":[],"reasoning_effort":"high"}`},
	{"effort kept", `{"model":"m","messages":[],"reasoning":{"effort":"minimal","budget":16000,"enabled":true}}`,
		`{"model":"m","messages":[],"reasoning_effort":"minimal"}`},
	{"thinking off omitted", `{"model":"m","messages":[],"reasoning":{"enabled":false}}`, `{"model":"m","messages":[]}`},
	{"openai-only knobs", `{"model":"m","messages":[],"n":3,"presence_penalty":1,"frequency_penalty":0,"seed":9,"logprobs":true,"top_logprobs":2,"logit_bias":{"1":5}}`,
		`{"model":"m","messages":[],"n":3,"presence_penalty":1,"frequency_penalty":0,"seed":9,"logprobs":true,"top_logprobs":2,"logit_bias":{"1":5}}`},
	{"n 1 omitted", `{"model":"m","messages":[],"n":1}`, `{"model":"m","messages":[]}`},
}

func TestOAIBuildRequest(t *testing.T) {
	for _, tc := range oaiBuildCases {
		t.Run(tc.name, func(t *testing.T) {
			var r Request
			if err := json.Unmarshal([]byte(tc.canon), &r); err != nil {
				t.Fatal(err)
			}
			got, err := oaiTestCodec.BuildRequest(&r)
			if err != nil {
				t.Fatalf("BuildRequest: %v", err)
			}
			if ok, g, w := oaiJSONEqual(t, got, []byte(tc.want)); !ok {
				t.Fatalf("body\n got %s\nwant %s", g, w)
			}
		})
	}
}

// top_k only tunes sampling: chat completions has none, so it is dropped and named (Gemini CLI sends topK on
// every call).
func TestOAIBuildRequestDropsTopK(t *testing.T) {
	topK := int64(40)
	r := Request{Model: "m", TopK: &topK, Messages: []Message{{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "x"}}}}}
	b, err := oaiTestCodec.BuildRequest(&r)
	if err != nil || strings.Contains(string(b), "top_k") || len(r.Dropped) != 1 || r.Dropped[0] != "top_k" {
		t.Fatalf("body %s, dropped %v, err %v", b, r.Dropped, err)
	}
}

func TestOAIBuildRequestUnsupported(t *testing.T) {
	cases := []struct {
		name  string
		r     Request
		field string
	}{
		{"system image", Request{System: []Part{{Kind: PartImage, Image: &Image{URL: "u"}}}}, "system[0]"},
		{"assistant image", Request{Messages: []Message{{Role: RoleAssistant, Parts: []Part{{Kind: PartImage, Image: &Image{URL: "u"}}}}}}, "messages[0].content[0]"},
		{"user tool call", Request{Messages: []Message{{Role: RoleUser, Parts: []Part{{Kind: PartText}, {Kind: PartToolCall, ToolCall: &ToolCall{}}}}}}, "messages[0].content[1]"},
		{"tool result with a call", Request{Messages: []Message{{Role: RoleUser, Parts: []Part{{Kind: PartToolResult,
			ToolResult: &ToolResult{CallID: "a", Content: []Part{{Kind: PartToolCall}}}}}}}}, "messages[0].content[0].content[0]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := oaiTestCodec.BuildRequest(&tc.r)
			var u *Unsupported
			if !errors.As(err, &u) || u.Field != tc.field || u.Target != adaptor.OpenAI {
				t.Fatalf("err = %v, want *Unsupported{%s, openai}", err, tc.field)
			}
		})
	}
}

// A chat completions request survives ParseRequest then BuildRequest with its meaning intact.
func TestOAIRequestRoundTrip(t *testing.T) {
	body := `{"model":"gpt-x","messages":[{"role":"system","content":"sys"},{"role":"user","content":[{"type":"text","text":"a"},
		{"type":"image_url","image_url":{"url":"data:image/png;base64,AAA","detail":"low"}}]},
		{"role":"assistant","content":"b","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}}]},
		{"role":"tool","tool_call_id":"c1","content":"r"}],
		"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"tool_choice":"required","parallel_tool_calls":true,
		"max_completion_tokens":9,"temperature":0.2,"top_p":0.3,"stop":["s"],"response_format":{"type":"json_object"},"reasoning_effort":"low",
		"stream":true,"stream_options":{"include_usage":true},"user":"u","n":2,"presence_penalty":0.1,"frequency_penalty":0.2,"seed":1,
		"logprobs":true,"top_logprobs":1,"logit_bias":{"5":1}}`
	r, err := oaiTestCodec.ParseRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	got, err := oaiTestCodec.BuildRequest(r)
	if err != nil {
		t.Fatal(err)
	}
	if ok, g, w := oaiJSONEqual(t, got, []byte(body)); !ok {
		t.Fatalf("round trip\n got %s\nwant %s", g, w)
	}
}

func TestOAIParseResponse(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"text usage", `{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,
			"message":{"role":"assistant","content":"hello","refusal":null},"finish_reason":"stop"}],
			"usage":{"prompt_tokens":1300,"completion_tokens":50,"total_tokens":1350,"prompt_tokens_details":{"cached_tokens":1000},
			"completion_tokens_details":{"reasoning_tokens":30}}}`,
			`{"id":"chatcmpl-1","model":"gpt-4o","parts":[{"kind":"text","text":"hello"}],"finish":"stop",
			"usage":{"input":300,"cache_read":1000,"output":50,"reasoning":30},"has_usage":true}`},
		{"tool calls", `{"id":"x","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[
			{"id":"call_1","type":"function","function":{"name":"get","arguments":"{\"a\":1}"}},
			{"type":"function","function":{"name":"put","arguments":""}}]},"finish_reason":"tool_calls"}]}`,
			`{"id":"x","model":"m","parts":[{"kind":"tool_call","tool_call":{"id":"call_1","name":"get","args":"{\"a\":1}"}},
			{"kind":"tool_call","tool_call":{"id":"call_1_","name":"put","args":"{}"}}],"finish":"tool_calls","usage":{"input":0,"output":0},"has_usage":false}`},
		{"deepseek reasoning and cache", `{"id":"d","model":"deepseek-reasoner","choices":[{"index":0,"message":{"role":"assistant",
			"reasoning_content":"why","content":"because"},"finish_reason":"length"}],
			"usage":{"prompt_tokens":100,"completion_tokens":20,"prompt_cache_hit_tokens":60,"prompt_cache_miss_tokens":40,
			"completion_tokens_details":{"reasoning_tokens":15}}}`,
			`{"id":"d","model":"deepseek-reasoner","parts":[{"kind":"thinking","text":"why"},{"kind":"text","text":"because"}],"finish":"length",
			"usage":{"input":40,"cache_read":60,"output":20,"reasoning":15},"has_usage":true}`},
		{"openrouter reasoning, refusal, filter", `{"id":"o","model":"m","choices":[{"index":1,"message":{"content":"other"}},
			{"index":0,"message":{"reasoning":"r","content":"","refusal":"I can't"},"finish_reason":"content_filter"}]}`,
			`{"id":"o","model":"m","parts":[{"kind":"thinking","text":"r"},{"kind":"text","text":"I can't"}],"finish":"content_filter",
			"usage":{"input":0,"output":0},"has_usage":false}`},
		{"legacy function call, no finish", `{"id":"f","model":"m","choices":[{"message":{"function_call":{"name":"f","arguments":"{}"}}}]}`,
			`{"id":"f","model":"m","parts":[{"kind":"tool_call","tool_call":{"id":"call_0","name":"f","args":"{}"}}],"finish":"tool_calls",
			"usage":{"input":0,"output":0},"has_usage":false}`},
		{"content parts and object args", `{"id":"p","model":"m","choices":[{"index":0,"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],
			"tool_calls":[{"id":"c","function":{"name":"g","arguments":{"k":2}}}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,
			"prompt_tokens_details":{"cached_tokens":1,"cache_write_tokens":3}}}`,
			`{"id":"p","model":"m","parts":[{"kind":"text","text":"ab"},{"kind":"tool_call","tool_call":{"id":"c","name":"g","args":"{\"k\":2}"}}],"finish":"stop",
			"usage":{"input":1,"cache_read":1,"cache_write":3,"output":2},"has_usage":true}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := oaiTestCodec.ParseResponse([]byte(tc.body))
			if err != nil {
				t.Fatalf("ParseResponse: %v", err)
			}
			got, _ := json.Marshal(r)
			if ok, g, w := oaiJSONEqual(t, got, []byte(tc.want)); !ok {
				t.Fatalf("canonical\n got %s\nwant %s", g, w)
			}
		})
	}
	for _, bad := range []string{`not json`, `[1]`, `{"error":{"message":"boom","type":"server_error"}}`, `{"id":"x"}`} {
		if _, err := oaiTestCodec.ParseResponse([]byte(bad)); err == nil {
			t.Errorf("ParseResponse(%s) = nil error", bad)
		}
	}
}

func TestOAIFinishWords(t *testing.T) {
	in := map[string]FinishReason{"stop": FinishStop, "length": FinishLength, "tool_calls": FinishToolCalls,
		"function_call": FinishToolCalls, "content_filter": FinishFilter, "max_tokens": FinishLength, "error": FinishError,
		"eos": FinishStop, "": ""}
	for w, f := range in {
		if got := oaiFinishIn(w); got != f {
			t.Errorf("oaiFinishIn(%q) = %q, want %q", w, got, f)
		}
	}
	out := []struct {
		f     FinishReason
		tools bool
		want  string
	}{{FinishStop, false, "stop"}, {FinishStop, true, "tool_calls"}, {"", true, "tool_calls"}, {"", false, "stop"},
		{FinishLength, true, "length"}, {FinishToolCalls, false, "tool_calls"}, {FinishFilter, false, "content_filter"},
		{FinishError, false, "stop"}, {FinishError, true, "stop"}}
	for _, c := range out {
		if got := oaiFinishOut(c.f, c.tools); got != c.want {
			t.Errorf("oaiFinishOut(%q, %v) = %q, want %q", c.f, c.tools, got, c.want)
		}
	}
}

func TestOAIBuildResponse(t *testing.T) {
	cases := []struct {
		name        string
		req         *Request
		resp, wantB string
	}{
		{"anthropic usage and thinking", &Request{Model: "alias"},
			`{"id":"msg_01","model":"claude-x","parts":[{"kind":"thinking","text":"a","signature":"s"},{"kind":"redacted_thinking","data":"zz"},
			{"kind":"thinking","text":"b"},{"kind":"text","text":"Hel"},{"kind":"text","text":"lo"}],"finish":"stop",
			"usage":{"input":100,"cache_read":1000,"cache_write":200,"output":10},"has_usage":true}`,
			`{"id":"chatcmpl-msg_01","object":"chat.completion","created":1700000000,"model":"claude-x","choices":[{"index":0,
			"message":{"role":"assistant","content":"Hello","reasoning_content":"a\n\nb","refusal":null},"logprobs":null,"finish_reason":"stop"}],
			"usage":{"prompt_tokens":1300,"completion_tokens":10,"total_tokens":1310,"prompt_tokens_details":{"cached_tokens":1000,"cache_write_tokens":200},
			"completion_tokens_details":{"reasoning_tokens":0}}}`},
		{"gemini tool calls", &Request{Model: "alias"},
			`{"id":"","model":"","parts":[{"kind":"tool_call","tool_call":{"id":"call_0","name":"f","args":"{\"a\":\"<b>\"}"}},
			{"kind":"tool_call","tool_call":{"name":"g","args":""}}],"finish":"stop","usage":{"input":10,"output":50,"reasoning":30},"has_usage":true}`,
			`{"id":"chatcmpl-tollgate","object":"chat.completion","created":1700000000,"model":"alias","choices":[{"index":0,
			"message":{"role":"assistant","content":null,"refusal":null,"tool_calls":[{"id":"call_0","type":"function","function":{"name":"f","arguments":"{\"a\":\"<b>\"}"}},
			{"id":"call_1","type":"function","function":{"name":"g","arguments":"{}"}}]},"logprobs":null,"finish_reason":"tool_calls"}],
			"usage":{"prompt_tokens":10,"completion_tokens":50,"total_tokens":60,"prompt_tokens_details":{"cached_tokens":0},
			"completion_tokens_details":{"reasoning_tokens":30}}}`},
		{"empty answer at length", nil,
			`{"id":"chatcmpl-kept","model":"m","parts":[],"finish":"length","usage":{"input":0,"output":0}}`,
			`{"id":"chatcmpl-kept","object":"chat.completion","created":1700000000,"model":"m","choices":[{"index":0,
			"message":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":"length"}],
			"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0,"prompt_tokens_details":{"cached_tokens":0},
			"completion_tokens_details":{"reasoning_tokens":0}}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var r Response
			if err := json.Unmarshal([]byte(tc.resp), &r); err != nil {
				t.Fatal(err)
			}
			got, err := oaiTestCodec.BuildResponse(tc.req, &r)
			if err != nil {
				t.Fatal(err)
			}
			if ok, g, w := oaiJSONEqual(t, got, []byte(tc.wantB)); !ok {
				t.Fatalf("answer\n got %s\nwant %s", g, w)
			}
		})
	}
}

func TestOAIParseError(t *testing.T) {
	cases := []struct {
		status int
		body   string
		want   Error
	}{
		{400, `{"error":{"message":"bad","type":"invalid_request_error","param":"messages","code":null}}`, Error{400, ErrInvalidRequest, "", "bad"}},
		{400, `{"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}}`, Error{400, ErrInvalidRequest, "context_length_exceeded", "too long"}},
		{401, `{"error":{"message":"key","type":"invalid_request_error","code":"invalid_api_key"}}`, Error{401, ErrAuthentication, "invalid_api_key", "key"}},
		{401, `{"error":{"message":"key","type":"invalid_request_error"}}`, Error{401, ErrAuthentication, "", "key"}},
		{403, `{"error":{"message":"region","type":"permission_error"}}`, Error{403, ErrPermission, "", "region"}},
		{404, `{"error":{"message":"no model","type":"invalid_request_error","code":"model_not_found"}}`, Error{404, ErrNotFound, "model_not_found", "no model"}},
		{429, `{"error":{"message":"slow","type":"requests","code":"rate_limit_exceeded"}}`, Error{429, ErrRateLimit, "rate_limit_exceeded", "slow"}},
		{429, `{"error":{"message":"pay","type":"insufficient_quota","code":"insufficient_quota"}}`, Error{429, ErrQuota, "insufficient_quota", "pay"}},
		{413, `{"error":{"message":"big"}}`, Error{413, ErrTooLarge, "", "big"}},
		{500, `{"error":{"message":"oops","type":"server_error"}}`, Error{500, ErrServer, "", "oops"}},
		{503, `{"error":{"message":"busy","type":"server_error","code":"overloaded"}}`, Error{503, ErrOverloaded, "overloaded", "busy"}},
		{504, `upstream timed out`, Error{504, ErrTimeout, "", "upstream timed out"}},
		{0, `{"error":{"message":"mid-stream","type":"server_error","code":500}}`, Error{0, ErrServer, "500", "mid-stream"}},
		{0, `{"error":{"message":"refused"}}`, Error{0, ErrServer, "", "refused"}},
		{400, `{"error":"plain words"}`, Error{400, ErrInvalidRequest, "", "plain words"}},
		{429, `[{"error":{"message":"wrapped","code":429,"status":"RESOURCE_EXHAUSTED"}}]`, Error{429, ErrRateLimit, "429", "wrapped"}},
		{502, ``, Error{502, ErrServer, "", "Bad Gateway"}},
	}
	for _, tc := range cases {
		got := oaiTestCodec.ParseError(tc.status, []byte(tc.body))
		if got == nil || *got != tc.want {
			t.Errorf("ParseError(%d, %s) = %+v, want %+v", tc.status, tc.body, got, tc.want)
		}
	}
}

func TestOAIBuildError(t *testing.T) {
	cases := []struct {
		e    *Error
		want string
	}{
		{&Error{Status: 400, Type: ErrInvalidRequest, Message: "bad"}, `{"error":{"message":"bad","type":"invalid_request_error","param":null,"code":null}}`},
		{&Error{Status: 401, Type: ErrAuthentication, Message: "k"}, `{"error":{"message":"k","type":"authentication_error","param":null,"code":"invalid_api_key"}}`},
		{&Error{Status: 403, Type: ErrPermission, Message: "p"}, `{"error":{"message":"p","type":"permission_error","param":null,"code":null}}`},
		{&Error{Status: 404, Type: ErrNotFound, Code: "not_found_error", Message: "n"}, `{"error":{"message":"n","type":"not_found_error","param":null,"code":"not_found_error"}}`},
		{&Error{Status: 429, Type: ErrRateLimit, Message: "r"}, `{"error":{"message":"r","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}`},
		{&Error{Status: 429, Type: ErrQuota, Message: "q"}, `{"error":{"message":"q","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`},
		{&Error{Status: 413, Type: ErrTooLarge, Message: "t"}, `{"error":{"message":"t","type":"invalid_request_error","param":null,"code":"request_too_large"}}`},
		{&Error{Status: 529, Type: ErrOverloaded, Code: "overloaded_error", Message: "o"}, `{"error":{"message":"o","type":"server_error","param":null,"code":"overloaded_error"}}`},
		{&Error{Status: 504, Type: ErrTimeout, Message: "slow"}, `{"error":{"message":"slow","type":"server_error","param":null,"code":"timeout"}}`},
		{&Error{Status: 500, Type: ErrServer, Message: "<x>"}, `{"error":{"message":"<x>","type":"server_error","param":null,"code":null}}`},
		{nil, `{"error":{"message":"upstream error","type":"server_error","param":null,"code":null}}`},
	}
	for _, tc := range cases {
		got := oaiTestCodec.BuildError(tc.e)
		if string(got) != tc.want {
			t.Errorf("BuildError(%+v)\n got %s\nwant %s", tc.e, got, tc.want)
		}
		if tc.e != nil { // and back: the type survives
			if back := oaiTestCodec.ParseError(tc.e.Status, got); back.Type != tc.e.Type {
				t.Errorf("ParseError(BuildError(%v)).Type = %v", tc.e.Type, back.Type)
			}
		}
	}
}

package convert

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"

	"tollgate/relay/adaptor"
)

// antCodecT is the registered Anthropic codec, as the relay finds it.
func antCodecT(t testing.TB) Codec {
	t.Helper()
	c, ok := For(adaptor.Anthropic)
	if !ok || c.Protocol() != adaptor.Anthropic {
		t.Fatal("no Anthropic codec registered")
	}
	return c
}

// antPtrF, antPtrI and antPtrB are pointers for test values.
func antPtrF(f float64) *float64 { return &f }
func antPtrI(i int64) *int64     { return &i }
func antPtrB(b bool) *bool       { return &b }

// antParseCases are client request bodies and the canonical request each reads as (they also seed the fuzz
// test).
var antParseCases = []struct {
	name string
	body string
	want *Request
}{
	{"system string, user string", `{"model":"claude-x","max_tokens":100,"system":"be brief","messages":[{"role":"user","content":"hi"}]}`,
		&Request{Model: "claude-x", MaxTokens: 100, System: []Part{{Kind: PartText, Text: "be brief"}},
			Messages: []Message{{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "hi"}}}}}},
	{"system blocks with cache_control", `{"model":"m","max_tokens":1,"system":[{"type":"text","text":"a"},{"type":"text","text":"b","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"q","cache_control":{"type":"ephemeral","ttl":"1h"}}]}]}`,
		&Request{Model: "m", MaxTokens: 1,
			System: []Part{{Kind: PartText, Text: "a"}, {Kind: PartText, Text: "b", CacheControl: json.RawMessage(`{"type":"ephemeral"}`)}},
			Messages: []Message{{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "q",
				CacheControl: json.RawMessage(`{"type":"ephemeral","ttl":"1h"}`)}}}}}},
	{"images", `{"model":"m","messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBOR"}},{"type":"image","source":{"type":"url","url":"https://x/y.jpg"}}]}]}`,
		&Request{Model: "m", Messages: []Message{{Role: RoleUser, Parts: []Part{
			{Kind: PartImage, Image: &Image{MediaType: "image/png", Data: "iVBOR"}},
			{Kind: PartImage, Image: &Image{URL: "https://x/y.jpg"}}}}}}},
	{"tool use and results", `{"model":"m","messages":[{"role":"user","content":"weather?"},` +
		`{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"sig1"},{"type":"redacted_thinking","data":"enc"},{"type":"text","text":"checking"},{"type":"tool_use","id":"toolu_1","name":"get","input":{"city":"Paris"}},{"type":"tool_use","id":"toolu_2","name":"now","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"sunny"},{"type":"tool_result","tool_use_id":"toolu_2","is_error":true,"content":[{"type":"text","text":"no clock"},{"type":"image","source":{"type":"url","url":"https://c/l.png"}}]},{"type":"tool_result","tool_use_id":"toolu_3"}]}]}`,
		&Request{Model: "m", Messages: []Message{
			{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "weather?"}}},
			{Role: RoleAssistant, Parts: []Part{
				{Kind: PartThinking, Text: "hmm", Signature: "sig1"},
				{Kind: PartRedactedThinking, Data: "enc"},
				{Kind: PartText, Text: "checking"},
				{Kind: PartToolCall, ToolCall: &ToolCall{ID: "toolu_1", Name: "get", Args: `{"city":"Paris"}`}},
				{Kind: PartToolCall, ToolCall: &ToolCall{ID: "toolu_2", Name: "now", Args: `{}`}}}},
			{Role: RoleUser, Parts: []Part{
				{Kind: PartToolResult, ToolResult: &ToolResult{CallID: "toolu_1", Content: []Part{{Kind: PartText, Text: "sunny"}}}},
				{Kind: PartToolResult, ToolResult: &ToolResult{CallID: "toolu_2", IsError: true, Content: []Part{
					{Kind: PartText, Text: "no clock"}, {Kind: PartImage, Image: &Image{URL: "https://c/l.png"}}}}},
				{Kind: PartToolResult, ToolResult: &ToolResult{CallID: "toolu_3"}}}}}}},
	{"tools, tool_choice tool, no parallel", `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"name":"get","description":"d","input_schema":{"type":"object"},"strict":true},{"type":"custom","name":"b","input_schema":{"type":"object"}}],"tool_choice":{"type":"tool","name":"get","disable_parallel_tool_use":true}}`,
		&Request{Model: "m", Messages: []Message{{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "x"}}}},
			Tools: []Tool{{Name: "get", Description: "d", Parameters: json.RawMessage(`{"type":"object"}`), Strict: true},
				{Name: "b", Parameters: json.RawMessage(`{"type":"object"}`)}},
			ToolChoice: &ToolChoice{Mode: ToolNamed, Name: "get"}, ParallelToolCalls: antPtrB(false)}},
	{"tool_choice any", `{"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"any"}}`,
		&Request{Model: "m", Messages: []Message{{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "x"}}}}, ToolChoice: &ToolChoice{Mode: ToolRequired}}},
	{"tool_choice auto", `{"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"auto"}}`,
		&Request{Model: "m", Messages: []Message{{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "x"}}}}, ToolChoice: &ToolChoice{Mode: ToolAuto}}},
	{"tool_choice none", `{"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"none"}}`,
		&Request{Model: "m", Messages: []Message{{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "x"}}}}, ToolChoice: &ToolChoice{Mode: ToolNone}}},
	{"sampling, stop, user, stream", `{"model":"m","max_tokens":512,"temperature":0.3,"top_p":0.9,"top_k":40,"stop_sequences":["END"],"metadata":{"user_id":"u-1"},"stream":true,"service_tier":"auto","messages":[{"role":"user","content":"x"}]}`,
		&Request{Model: "m", MaxTokens: 512, Temperature: antPtrF(0.3), TopP: antPtrF(0.9), TopK: antPtrI(40), Stop: []string{"END"},
			User: "u-1", Stream: true, Messages: []Message{{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "x"}}}}}},
	{"thinking enabled", `{"model":"m","max_tokens":4000,"thinking":{"type":"enabled","budget_tokens":2000},"messages":[{"role":"user","content":"x"}]}`,
		&Request{Model: "m", MaxTokens: 4000, Reasoning: &Reasoning{Enabled: true, Budget: 2000, Summary: true},
			Messages: []Message{{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "x"}}}}}},
	{"thinking disabled", `{"model":"m","thinking":{"type":"disabled"},"messages":[{"role":"user","content":"x"}]}`,
		&Request{Model: "m", Reasoning: &Reasoning{Enabled: false}, Messages: []Message{{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "x"}}}}}},
	{"adaptive thinking with effort", `{"model":"m","thinking":{"type":"adaptive"},"output_config":{"effort":"low"},"messages":[{"role":"user","content":"x"}]}`,
		&Request{Model: "m", Reasoning: &Reasoning{Enabled: true, Effort: "low", Summary: true}, Messages: []Message{{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "x"}}}}}},
	{"adaptive thinking default effort", `{"model":"m","thinking":{"type":"adaptive"},"messages":[{"role":"user","content":"x"}]}`,
		&Request{Model: "m", Reasoning: &Reasoning{Enabled: true, Effort: "high", Summary: true}, Messages: []Message{{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "x"}}}}}},
	{"structured output", `{"model":"m","output_config":{"format":{"type":"json_schema","schema":{"type":"object"}}},"messages":[{"role":"user","content":"x"}]}`,
		&Request{Model: "m", ResponseFormat: &ResponseFormat{Type: "json_schema", Schema: json.RawMessage(`{"type":"object"}`), Strict: true},
			Messages: []Message{{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "x"}}}}}},
	{"legacy output_format", `{"model":"m","output_format":{"type":"json_schema","schema":{"type":"object"}},"messages":[{"role":"user","content":"x"}]}`,
		&Request{Model: "m", ResponseFormat: &ResponseFormat{Type: "json_schema", Schema: json.RawMessage(`{"type":"object"}`), Strict: true},
			Messages: []Message{{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "x"}}}}}},
}

func TestAntParseRequest(t *testing.T) {
	c := antCodecT(t)
	for _, tc := range antParseCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := c.ParseRequest([]byte(tc.body))
			if err != nil {
				t.Fatalf("ParseRequest: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(tc.want)
				t.Fatalf("got  %s\nwant %s", g, w)
			}
		})
	}
}

// antParseErrorCases are client bodies ParseRequest refuses, with the error kind and field.
var antParseErrorCases = []struct {
	name, body  string
	unsupported bool // else *Invalid
	field       string
}{
	{"document block", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"document","source":{"type":"text","data":"x","media_type":"text/plain"}}]}]}`, true, "messages[0].content[1].type"},
	{"unknown block", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"server_tool_use","id":"s","name":"web_search","input":{}}]}]}`, true, "messages[1].content[0].type"},
	{"block without type", `{"model":"m","messages":[{"role":"user","content":[{"text":"a"}]}]}`, false, "messages[0].content[0].type"},
	{"search_result in a tool result", `{"model":"m","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"search_result","source":"s","title":"t","content":[]}]}]}]}`, true, "messages[0].content[0].content[0].type"},
	{"server tool", `{"model":"m","messages":[{"role":"user","content":"a"}],"tools":[{"name":"f","input_schema":{"type":"object"}},{"type":"web_search_20250305","name":"web_search"}]}`, true, "tools[1].type"},
	{"bash tool", `{"model":"m","messages":[{"role":"user","content":"a"}],"tools":[{"type":"bash_20250124","name":"bash"}]}`, true, "tools[0].type"},
	{"mcp servers", `{"model":"m","messages":[{"role":"user","content":"a"}],"mcp_servers":[{"type":"url","url":"https://x","name":"x"}]}`, true, "mcp_servers"},
	{"file image", `{"model":"m","messages":[{"role":"user","content":[{"type":"image","source":{"type":"file","file_id":"f"}}]}]}`, true, "messages[0].content[0].source.type"},
	{"missing messages", `{"model":"m","max_tokens":5}`, false, "messages"},
	{"empty messages", `{"model":"m","messages":[]}`, false, "messages"},
	{"messages not an array", `{"model":"m","messages":"hi"}`, false, "messages"},
	{"max_tokens a string", `{"model":"m","max_tokens":"5","messages":[{"role":"user","content":"a"}]}`, false, "max_tokens"},
	{"temperature a string", `{"model":"m","temperature":"hot","messages":[{"role":"user","content":"a"}]}`, false, "temperature"},
	{"text not a string", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":5}]}]}`, false, "messages[0].content[0].text"},
	{"content a number", `{"model":"m","messages":[{"role":"user","content":5}]}`, false, "messages[0].content"},
	{"content missing", `{"model":"m","messages":[{"role":"user"}]}`, false, "messages[0].content"},
	{"role system", `{"model":"m","messages":[{"role":"system","content":"a"}]}`, false, "messages[0].role"},
	{"tool input a string", `{"model":"m","messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":"{\"a\":1}"}]}]}`, false, "messages[0].content[0].input"},
	{"tool use without id", `{"model":"m","messages":[{"role":"assistant","content":[{"type":"tool_use","name":"f","input":{}}]}]}`, false, "messages[0].content[0]"},
	{"tool result without id", `{"model":"m","messages":[{"role":"user","content":[{"type":"tool_result","content":"x"}]}]}`, false, "messages[0].content[0].tool_use_id"},
	{"tool without name", `{"model":"m","messages":[{"role":"user","content":"a"}],"tools":[{"input_schema":{}}]}`, false, "tools[0].name"},
	{"tool_choice tool without name", `{"model":"m","messages":[{"role":"user","content":"a"}],"tool_choice":{"type":"tool"}}`, false, "tool_choice.name"},
	{"tool_choice unknown", `{"model":"m","messages":[{"role":"user","content":"a"}],"tool_choice":{"type":"some"}}`, false, "tool_choice.type"},
	{"thinking unknown", `{"model":"m","messages":[{"role":"user","content":"a"}],"thinking":{"type":"maybe"}}`, false, "thinking.type"},
	{"system image", `{"model":"m","system":[{"type":"image"}],"messages":[{"role":"user","content":"a"}]}`, false, "system[0].type"},
	{"image without source", `{"model":"m","messages":[{"role":"user","content":[{"type":"image"}]}]}`, false, "messages[0].content[0].source"},
	{"not JSON", `{"model":`, false, "body"},
}

func TestAntParseRequestErrors(t *testing.T) {
	c := antCodecT(t)
	for _, tc := range antParseErrorCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.ParseRequest([]byte(tc.body))
			var u *Unsupported
			var inv *Invalid
			switch {
			case tc.unsupported && errors.As(err, &u):
				if u.Field != tc.field {
					t.Fatalf("Unsupported.Field = %q, want %q (%v)", u.Field, tc.field, err)
				}
			case !tc.unsupported && errors.As(err, &inv):
				if inv.Field != tc.field {
					t.Fatalf("Invalid.Field = %q, want %q (%v)", inv.Field, tc.field, err)
				}
			default:
				t.Fatalf("err = %T %v, want unsupported=%v on %s", err, err, tc.unsupported, tc.field)
			}
		})
	}
}

// antUser is a canonical user message of one text part.
func antUser(text string) Message {
	return Message{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: text}}}
}

// antBuildCases are canonical requests and the Messages body each builds as.
var antBuildCases = []struct {
	name string
	req  *Request
	want string
}{
	{"defaults: max_tokens 8192, system with cache_control, sampling, user",
		&Request{Model: "claude-x", Stream: true, User: "u-1", Temperature: antPtrF(0.5), TopP: antPtrF(0.8), TopK: antPtrI(20), Stop: []string{"END"},
			System:   []Part{{Kind: PartText, Text: "a"}, {Kind: PartText, Text: ""}, {Kind: PartText, Text: "b", CacheControl: json.RawMessage(`{"type":"ephemeral"}`)}},
			Messages: []Message{antUser("hi")}, N: 1, PresencePenalty: antPtrF(0), FrequencyPenalty: antPtrF(0), LogitBias: json.RawMessage(`{}`), IncludeUsage: true},
		`{"model":"claude-x","max_tokens":8192,"stream":true,"metadata":{"user_id":"u-1"},"temperature":0.5,"top_p":0.8,"top_k":20,"stop_sequences":["END"],
		  "system":[{"type":"text","text":"a"},{"type":"text","text":"b","cache_control":{"type":"ephemeral"}}],
		  "messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`},
	{"merged roles, tool results first, empty and unsigned parts dropped, ids sanitized",
		&Request{Model: "m", MaxTokens: 100, Messages: []Message{
			antUser("q1"), antUser("q2"),
			{Role: RoleAssistant, Parts: []Part{{Kind: PartThinking, Text: "unsigned"}, {Kind: PartThinking, Text: "t", Signature: "s"},
				{Kind: PartRedactedThinking, Data: "enc"}, {Kind: PartText, Text: ""},
				{Kind: PartToolCall, ToolCall: &ToolCall{ID: "functions.get:0", Name: "get", Args: `{"a":1}`}},
				{Kind: PartToolCall, ToolCall: &ToolCall{ID: "call_2", Name: "now", Args: ""}}}},
			{Role: RoleUser, Parts: []Part{{Kind: PartToolResult, ToolResult: &ToolResult{CallID: "functions.get:0", Content: []Part{{Kind: PartText, Text: "r1"}}}}}},
			{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "and?"}, {Kind: PartToolResult, ToolResult: &ToolResult{CallID: "call_2", IsError: true,
				Content: []Part{{Kind: PartText, Text: "boom"}, {Kind: PartImage, Image: &Image{URL: "https://i/x.png"}}}},
				CacheControl: json.RawMessage(`{"type":"ephemeral"}`)}}},
			{Role: RoleAssistant, Parts: []Part{{Kind: PartText, Text: ""}}},
			{Role: RoleUser, Parts: []Part{{Kind: PartToolResult, ToolResult: &ToolResult{CallID: "c3"}}}},
		}},
		`{"model":"m","max_tokens":100,"messages":[
		  {"role":"user","content":[{"type":"text","text":"q1"},{"type":"text","text":"q2"}]},
		  {"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"redacted_thinking","data":"enc"},
		    {"type":"tool_use","id":"functions_get_0","name":"get","input":{"a":1}},{"type":"tool_use","id":"call_2","name":"now","input":{}}]},
		  {"role":"user","content":[{"type":"tool_result","tool_use_id":"functions_get_0","content":[{"type":"text","text":"r1"}]},
		    {"type":"tool_result","tool_use_id":"call_2","is_error":true,"cache_control":{"type":"ephemeral"},"content":[{"type":"text","text":"boom"},{"type":"image","source":{"type":"url","url":"https://i/x.png"}}]},
		    {"type":"tool_result","tool_use_id":"c3"},
		    {"type":"text","text":"and?"}]}]}`},
	{"images: data URL, base64 with and without media type, URL",
		&Request{Model: "m", Messages: []Message{{Role: RoleUser, Parts: []Part{
			{Kind: PartImage, Image: &Image{URL: "data:image/webp;base64,UklGxx", Detail: "high"}},
			{Kind: PartImage, Image: &Image{MediaType: "image/gif", Data: "R0lGxx"}},
			{Kind: PartImage, Image: &Image{Data: "/9j/xx"}},
			{Kind: PartImage, Image: &Image{URL: "https://i/y.jpg"}, CacheControl: json.RawMessage(`{"type":"ephemeral"}`)}}}}},
		`{"model":"m","max_tokens":8192,"messages":[{"role":"user","content":[
		  {"type":"image","source":{"type":"base64","media_type":"image/webp","data":"UklGxx"}},
		  {"type":"image","source":{"type":"base64","media_type":"image/gif","data":"R0lGxx"}},
		  {"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"/9j/xx"}},
		  {"type":"image","source":{"type":"url","url":"https://i/y.jpg"},"cache_control":{"type":"ephemeral"}}]}]}`},
	{"tools, required choice, no parallel",
		&Request{Model: "m", Messages: []Message{antUser("x")}, ParallelToolCalls: antPtrB(false), ToolChoice: &ToolChoice{Mode: ToolRequired},
			Tools: []Tool{{Name: "get", Description: "d", Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`), Strict: true},
				{Name: "none"}, {Name: "empty", Parameters: json.RawMessage(`{}`)}}},
		`{"model":"m","max_tokens":8192,"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}],
		  "tools":[{"name":"get","description":"d","input_schema":{"type":"object","properties":{"a":{"type":"string"}}},"strict":true},
		    {"name":"none","input_schema":{"type":"object","properties":{}}},{"name":"empty","input_schema":{"type":"object","properties":{}}}],
		  "tool_choice":{"type":"any","disable_parallel_tool_use":true}}`},
	{"named tool choice",
		&Request{Model: "m", Messages: []Message{antUser("x")}, Tools: []Tool{{Name: "get"}}, ToolChoice: &ToolChoice{Mode: ToolNamed, Name: "get"}},
		`{"model":"m","max_tokens":8192,"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}],
		  "tools":[{"name":"get","input_schema":{"type":"object","properties":{}}}],"tool_choice":{"type":"tool","name":"get"}}`},
	{"none tool choice",
		&Request{Model: "m", Messages: []Message{antUser("x")}, Tools: []Tool{{Name: "get"}}, ToolChoice: &ToolChoice{Mode: ToolNone}, ParallelToolCalls: antPtrB(false)},
		`{"model":"m","max_tokens":8192,"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}],
		  "tools":[{"name":"get","input_schema":{"type":"object","properties":{}}}],"tool_choice":{"type":"none"}}`},
	{"auto default, parallel off",
		&Request{Model: "m", Messages: []Message{antUser("x")}, Tools: []Tool{{Name: "get"}}, ParallelToolCalls: antPtrB(false)},
		`{"model":"m","max_tokens":8192,"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}],
		  "tools":[{"name":"get","input_schema":{"type":"object","properties":{}}}],"tool_choice":{"type":"auto","disable_parallel_tool_use":true}}`},
	{"tool choice without tools is dropped",
		&Request{Model: "m", Messages: []Message{antUser("x")}, ToolChoice: &ToolChoice{Mode: ToolNone}},
		`{"model":"m","max_tokens":8192,"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}]}`},
	{"thinking budget, no max_tokens",
		&Request{Model: "m", Messages: []Message{antUser("x")}, Reasoning: &Reasoning{Enabled: true, Budget: 10000}},
		`{"model":"m","max_tokens":14096,"thinking":{"type":"enabled","budget_tokens":10000},"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}]}`},
	{"thinking small budget raised to 1024, default max_tokens",
		&Request{Model: "m", Messages: []Message{antUser("x")}, Reasoning: &Reasoning{Enabled: true, Budget: 500}},
		`{"model":"m","max_tokens":8192,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}]}`},
	{"thinking effort only",
		&Request{Model: "m", MaxTokens: 30000, Messages: []Message{antUser("x")}, Reasoning: &Reasoning{Enabled: true, Effort: "high"}},
		`{"model":"m","max_tokens":30000,"thinking":{"type":"enabled","budget_tokens":24576},"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}]}`},
	{"thinking effort high, no max_tokens",
		&Request{Model: "m", Messages: []Message{antUser("x")}, Reasoning: &Reasoning{Enabled: true, Effort: "high"}},
		`{"model":"m","max_tokens":28672,"thinking":{"type":"enabled","budget_tokens":24576},"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}]}`},
	{"thinking budget clamped under max_tokens",
		&Request{Model: "m", MaxTokens: 2000, Messages: []Message{antUser("x")}, Reasoning: &Reasoning{Enabled: true, Effort: "medium"}},
		`{"model":"m","max_tokens":2000,"thinking":{"type":"enabled","budget_tokens":1999},"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}]}`},
	{"thinking disabled",
		&Request{Model: "m", MaxTokens: 50, Messages: []Message{antUser("x")}, Reasoning: &Reasoning{Enabled: false}},
		`{"model":"m","max_tokens":50,"thinking":{"type":"disabled"},"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}]}`},
	{"structured output",
		&Request{Model: "m", Messages: []Message{antUser("x")}, ResponseFormat: &ResponseFormat{Type: "json_schema", Name: "out", Schema: json.RawMessage(`{"type":"object","additionalProperties":false}`)}},
		`{"model":"m","max_tokens":8192,"output_config":{"format":{"type":"json_schema","schema":{"type":"object","additionalProperties":false}}},"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}]}`},
	{"text response format is the default",
		&Request{Model: "m", Messages: []Message{antUser("x")}, ResponseFormat: &ResponseFormat{Type: "text"}},
		`{"model":"m","max_tokens":8192,"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}]}`},
}

func TestAntBuildRequest(t *testing.T) {
	c := antCodecT(t)
	for _, tc := range antBuildCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := c.BuildRequest(tc.req)
			if err != nil {
				t.Fatalf("BuildRequest: %v", err)
			}
			if !jsonEqual(t, got, []byte(tc.want)) {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
			// What we build, we read back (the fields Messages carries survive the round trip).
			if _, err := c.ParseRequest(got); err != nil {
				t.Fatalf("the built body does not parse back: %v", err)
			}
		})
	}
}

func TestAntBuildRequestRefusals(t *testing.T) {
	c := antCodecT(t)
	base := func(mod func(r *Request)) *Request {
		r := &Request{Model: "m", Messages: []Message{antUser("x")}}
		mod(r)
		return r
	}
	cases := []struct {
		name  string
		req   *Request
		field string
	}{
		{"n", base(func(r *Request) { r.N = 2 }), "n"},
		{"logprobs", base(func(r *Request) { r.Logprobs = true }), "logprobs"},
		{"top_logprobs", base(func(r *Request) { r.TopLogprobs = 3 }), "logprobs"},
		{"logit_bias", base(func(r *Request) { r.LogitBias = json.RawMessage(`{"50256":-100}`) }), "logit_bias"},
		{"seed", base(func(r *Request) { r.Seed = antPtrI(7) }), "seed"},
		{"presence_penalty", base(func(r *Request) { r.PresencePenalty = antPtrF(0.5) }), "presence_penalty"},
		{"frequency_penalty", base(func(r *Request) { r.FrequencyPenalty = antPtrF(-0.5) }), "frequency_penalty"},
		{"temperature above 1", base(func(r *Request) { r.Temperature = antPtrF(1.5) }), "temperature"},
		{"json_object", base(func(r *Request) { r.ResponseFormat = &ResponseFormat{Type: "json_object"} }), "response_format"},
		{"json_schema without schema", base(func(r *Request) { r.ResponseFormat = &ResponseFormat{Type: "json_schema"} }), "response_format"},
		{"thinking with max_tokens too small", base(func(r *Request) {
			r.MaxTokens = 1000
			r.Reasoning = &Reasoning{Enabled: true, Effort: "low"}
		}), "max_tokens"},
		{"tool arguments not an object", base(func(r *Request) {
			r.Messages = append(r.Messages, Message{Role: RoleAssistant, Parts: []Part{{Kind: PartToolCall, ToolCall: &ToolCall{ID: "c", Name: "f", Args: `[1]`}}}})
		}), "messages[1].tool_calls[0].arguments"},
		{"non-base64 data URL", base(func(r *Request) {
			r.Messages[0].Parts = append(r.Messages[0].Parts, Part{Kind: PartImage, Image: &Image{URL: "data:image/svg+xml,<svg/>"}})
		}), "messages[0].content[1]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.BuildRequest(tc.req)
			var u *Unsupported
			if !errors.As(err, &u) {
				t.Fatalf("err = %v, want *Unsupported", err)
			}
			if u.Field != tc.field || u.Target != adaptor.Anthropic || u.Why == "" {
				t.Fatalf("Unsupported = %+v, want field %q for anthropic", u, tc.field)
			}
		})
	}
}

// antParseResponseCases are upstream answers and what each reads as.
var antParseResponseCases = []struct {
	name, body string
	want       *Response
}{
	{"text, thinking, tool use, cached usage",
		`{"id":"msg_01","type":"message","role":"assistant","model":"claude-x","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"redacted_thinking","data":"enc"},{"type":"text","text":"hi","citations":null},{"type":"tool_use","id":"toolu_9","name":"get","input":{"a":1}},{"type":"server_tool_use","id":"srv","name":"web_search","input":{}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":100,"cache_read_input_tokens":1000,"cache_creation_input_tokens":200,"output_tokens":10}}`,
		&Response{ID: "msg_01", Model: "claude-x", Finish: FinishToolCalls, HasUsage: true, Usage: Usage{Input: 100, CacheRead: 1000, CacheWrite: 200, Output: 10},
			Parts: []Part{{Kind: PartThinking, Text: "t", Signature: "s"}, {Kind: PartRedactedThinking, Data: "enc"}, {Kind: PartText, Text: "hi"},
				{Kind: PartToolCall, ToolCall: &ToolCall{ID: "toolu_9", Name: "get", Args: `{"a":1}`}}}}},
	{"stop sequence", `{"id":"msg_02","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"a"}],"stop_reason":"stop_sequence","stop_sequence":"END","usage":{"input_tokens":1,"output_tokens":2}}`,
		&Response{ID: "msg_02", Model: "m", Finish: FinishStop, StopSequence: "END", HasUsage: true, Usage: Usage{Input: 1, Output: 2},
			Parts: []Part{{Kind: PartText, Text: "a"}}}},
	{"max tokens, tool without input", `{"id":"msg_03","type":"message","content":[{"type":"tool_use","id":"t","name":"f"}],"stop_reason":"max_tokens"}`,
		&Response{ID: "msg_03", Finish: FinishLength, Parts: []Part{{Kind: PartToolCall, ToolCall: &ToolCall{ID: "t", Name: "f", Args: "{}"}}}}},
	{"refusal", `{"id":"msg_04","type":"message","content":[],"stop_reason":"refusal","usage":{"input_tokens":3,"output_tokens":0}}`,
		&Response{ID: "msg_04", Finish: FinishFilter, HasUsage: true, Usage: Usage{Input: 3}, Parts: []Part{}}},
	{"end turn", `{"id":"msg_05","type":"message","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}`,
		&Response{ID: "msg_05", Finish: FinishStop, HasUsage: true, Usage: Usage{Input: 3, Output: 1}, Parts: []Part{{Kind: PartText, Text: "ok"}}}},
}

func TestAntParseResponse(t *testing.T) {
	c := antCodecT(t)
	for _, tc := range antParseResponseCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := c.ParseResponse([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(tc.want)
				t.Fatalf("got  %s\nwant %s", g, w)
			}
		})
	}
	for _, bad := range []string{`not json`, `{"type":"error","error":{"type":"api_error","message":"x"}}`, `{"content":"text"}`} {
		if _, err := c.ParseResponse([]byte(bad)); err == nil {
			t.Errorf("ParseResponse(%s) gave no error", bad)
		}
	}
}

func TestAntBuildResponse(t *testing.T) {
	c := antCodecT(t)
	cases := []struct {
		name string
		resp *Response
		want string
	}{
		{"text, thinking, tool calls, usage",
			&Response{ID: "chatcmpl-1", Model: "gpt-x", Finish: FinishToolCalls, HasUsage: true,
				Usage: Usage{Input: 100, CacheRead: 1000, CacheWrite: 200, Output: 10, Reasoning: 4},
				Parts: []Part{{Kind: PartThinking, Text: "t", Signature: "s"}, {Kind: PartRedactedThinking, Data: "enc"}, {Kind: PartText, Text: "hi"},
					{Kind: PartToolCall, ToolCall: &ToolCall{ID: "call_1", Name: "get", Args: `{"a":1}`}},
					{Kind: PartToolCall, ToolCall: &ToolCall{Name: "now", Args: ""}}}},
			`{"id":"msg_chatcmpl-1","type":"message","role":"assistant","model":"gpt-x","content":[
			  {"type":"thinking","thinking":"t","signature":"s"},{"type":"redacted_thinking","data":"enc"},{"type":"text","text":"hi"},
			  {"type":"tool_use","id":"call_1","name":"get","input":{"a":1}},{"type":"tool_use","id":"toolu_4","name":"now","input":{}}],
			  "stop_reason":"tool_use","stop_sequence":null,
			  "usage":{"input_tokens":100,"cache_read_input_tokens":1000,"cache_creation_input_tokens":200,"output_tokens":10}}`},
		{"stop sequence, model from the request",
			&Response{ID: "msg_x", Finish: FinishStop, StopSequence: "END", Parts: []Part{{Kind: PartText, Text: ""}}},
			`{"id":"msg_x","type":"message","role":"assistant","model":"asked","content":[{"type":"text","text":""}],"stop_reason":"stop_sequence","stop_sequence":"END",
			  "usage":{"input_tokens":0,"cache_read_input_tokens":0,"cache_creation_input_tokens":0,"output_tokens":0}}`},
		{"length", &Response{ID: "r", Model: "m", Finish: FinishLength, Parts: nil},
			`{"id":"msg_r","type":"message","role":"assistant","model":"m","content":[],"stop_reason":"max_tokens","stop_sequence":null,
			  "usage":{"input_tokens":0,"cache_read_input_tokens":0,"cache_creation_input_tokens":0,"output_tokens":0}}`},
		{"content filter is refusal", &Response{ID: "r", Model: "m", Finish: FinishFilter},
			`{"id":"msg_r","type":"message","role":"assistant","model":"m","content":[],"stop_reason":"refusal","stop_sequence":null,
			  "usage":{"input_tokens":0,"cache_read_input_tokens":0,"cache_creation_input_tokens":0,"output_tokens":0}}`},
		{"a STOP with tool calls is tool_use", &Response{ID: "", Model: "gemini", Finish: FinishStop,
			Parts: []Part{{Kind: PartToolCall, ToolCall: &ToolCall{ID: "call_0", Name: "f", Args: `{}`}}}},
			`{"id":"msg_tollgate","type":"message","role":"assistant","model":"gemini","content":[{"type":"tool_use","id":"call_0","name":"f","input":{}}],"stop_reason":"tool_use","stop_sequence":null,
			  "usage":{"input_tokens":0,"cache_read_input_tokens":0,"cache_creation_input_tokens":0,"output_tokens":0}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := c.BuildResponse(&Request{Model: "asked"}, tc.resp)
			if err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(t, got, []byte(tc.want)) {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
			var m anthropic.Message // the official SDK reads it
			if err := json.Unmarshal(got, &m); err != nil || m.Type != "message" {
				t.Fatalf("SDK: %v %+v", err, m)
			}
		})
	}
	_, err := c.BuildResponse(nil, &Response{Parts: []Part{{Kind: PartToolCall, ToolCall: &ToolCall{ID: "c", Name: "f", Args: `"text"`}}}})
	if err == nil {
		t.Fatal("a tool call whose arguments are not an object built an answer")
	}
}

// TestAntUsageBothWays: canonical Input excludes the cache; the answer and the stream carry each count in its
// own field, and reading them back gives the same canonical usage.
func TestAntUsageBothWays(t *testing.T) {
	c := antCodecT(t)
	u := Usage{Input: 100, CacheRead: 1000, CacheWrite: 200, Output: 10}
	b, err := c.BuildResponse(nil, &Response{ID: "x", Usage: u, HasUsage: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.ParseResponse(b)
	if err != nil || r.Usage != u || r.Usage.Prompt() != 1300 {
		t.Fatalf("round trip usage = %+v (%v), want %+v", r.Usage, err, u)
	}
}

func TestAntErrors(t *testing.T) {
	c := antCodecT(t)
	parse := []struct {
		status int
		word   string
		typ    ErrorType
	}{
		{400, "invalid_request_error", ErrInvalidRequest},
		{401, "authentication_error", ErrAuthentication},
		{403, "permission_error", ErrPermission},
		{404, "not_found_error", ErrNotFound},
		{413, "request_too_large", ErrTooLarge},
		{429, "rate_limit_error", ErrRateLimit},
		{500, "api_error", ErrServer},
		{529, "overloaded_error", ErrOverloaded},
		{402, "billing_error", ErrQuota},
		{504, "timeout_error", ErrTimeout},
	}
	for _, tc := range parse {
		body := fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":"m %d"}}`, tc.word, tc.status)
		e := c.ParseError(tc.status, []byte(body))
		want := &Error{Status: tc.status, Type: tc.typ, Code: tc.word, Message: fmt.Sprintf("m %d", tc.status)}
		if !reflect.DeepEqual(e, want) {
			t.Errorf("ParseError(%d, %s) = %+v, want %+v", tc.status, tc.word, e, want)
		}
		// And back: the canonical type gives the same word.
		out := c.BuildError(e)
		if !jsonEqual(t, out, []byte(body)) {
			t.Errorf("BuildError(%+v) = %s, want %s", e, out, body)
		}
	}
	// Bodies of another shape are typed by their status.
	for _, tc := range []struct {
		status int
		body   string
		want   Error
	}{
		{503, `upstream connect error`, Error{Status: 503, Type: ErrOverloaded, Message: "upstream connect error"}},
		{429, `{"message":"slow down"}`, Error{Status: 429, Type: ErrRateLimit, Message: "slow down"}},
		{422, `{"error":{"type":"weird","message":"x"}}`, Error{Status: 422, Type: ErrInvalidRequest, Code: "weird", Message: "x"}},
		{0, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, Error{Type: ErrOverloaded, Code: "overloaded_error", Message: "Overloaded"}},
	} {
		if e := c.ParseError(tc.status, []byte(tc.body)); *e != tc.want {
			t.Errorf("ParseError(%d, %s) = %+v, want %+v", tc.status, tc.body, *e, tc.want)
		}
	}
	// Errors from other protocols: their canonical type, else their status.
	for _, tc := range []struct {
		e    Error
		want string
	}{
		{Error{Status: 502, Type: ErrServer, Message: "bad gateway"}, `{"type":"error","error":{"type":"api_error","message":"bad gateway"}}`},
		{Error{Status: 429, Type: ErrQuota, Code: "insufficient_quota", Message: "q"}, `{"type":"error","error":{"type":"billing_error","message":"q"}}`},
		{Error{Status: 503, Message: "busy"}, `{"type":"error","error":{"type":"overloaded_error","message":"busy"}}`},
		{Error{Status: 404, Message: "nf"}, `{"type":"error","error":{"type":"not_found_error","message":"nf"}}`},
		{Error{Status: 400, Message: "bad"}, `{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`},
	} {
		if got := c.BuildError(&tc.e); !jsonEqual(t, got, []byte(tc.want)) {
			t.Errorf("BuildError(%+v) = %s, want %s", tc.e, got, tc.want)
		}
	}
}

// antSSE is one SSE event of a test stream.
type antSSE struct{ name, data string }

// antSplitSSE splits SSE bytes into events (name and joined data lines), as the relay does.
func antSplitSSE(b []byte) []antSSE {
	var out []antSSE
	for _, chunk := range strings.Split(string(b), "\n\n") {
		if strings.TrimSpace(chunk) == "" {
			continue
		}
		var ev antSSE
		var data []string
		for _, line := range strings.Split(chunk, "\n") {
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				ev.name = v
			} else if v, ok := strings.CutPrefix(line, "data: "); ok {
				data = append(data, v)
			}
		}
		ev.data = strings.Join(data, "\n")
		out = append(out, ev)
	}
	return out
}

// antSDKRead reads a stream the way the official Go SDK does (its SSE decoder, then Message.Accumulate):
// the message, and the SDK's error (an accumulation error, or the stream's error event).
func antSDKRead(sse []byte) (anthropic.Message, error) {
	res := &http.Response{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(bytes.NewReader(sse))}
	st := ssestream.NewStream[anthropic.MessageStreamEventUnion](ssestream.NewDecoder(res), nil)
	var msg anthropic.Message
	for st.Next() {
		if err := msg.Accumulate(st.Current()); err != nil {
			return msg, err
		}
	}
	return msg, st.Err()
}

// antCheckStream checks what Anthropic's clients rely on in a stream: every event named as its data's type;
// message_start first and once; blocks started at the next index, their deltas and stops only while open,
// all closed before message_delta; then message_delta and message_stop, or one error event, last.
func antCheckStream(sse []byte) error {
	evs := antSplitSSE(sse)
	if len(evs) == 0 {
		return nil
	}
	open := map[int64]bool{}
	next := int64(0)
	for i, ev := range evs {
		var d struct {
			Type  string `json:"type"`
			Index *int64 `json:"index"`
		}
		if err := json.Unmarshal([]byte(ev.data), &d); err != nil {
			return fmt.Errorf("event %d: %v", i, err)
		}
		if d.Type != ev.name {
			return fmt.Errorf("event %d named %q holds %q", i, ev.name, d.Type)
		}
		if (i == 0) != (d.Type == "message_start") && d.Type != "error" {
			return fmt.Errorf("event %d is %s: message_start must come first, once", i, d.Type)
		}
		last := i == len(evs)-1
		switch d.Type {
		case "content_block_start", "content_block_delta", "content_block_stop":
			if d.Index == nil {
				return fmt.Errorf("event %d: %s without index", i, d.Type)
			}
			switch {
			case d.Type == "content_block_start" && *d.Index != next:
				return fmt.Errorf("event %d: block %d started, want %d", i, *d.Index, next)
			case d.Type == "content_block_start":
				open[next] = true
				next++
			case !open[*d.Index]:
				return fmt.Errorf("event %d: %s for block %d, which is not open", i, d.Type, *d.Index)
			case d.Type == "content_block_stop":
				delete(open, *d.Index)
			}
		case "message_delta":
			if len(open) > 0 {
				return fmt.Errorf("event %d: message_delta with blocks open %v", i, open)
			}
			if i != len(evs)-2 || evs[len(evs)-1].name != "message_stop" {
				return fmt.Errorf("event %d: message_delta must be followed by message_stop, last", i)
			}
		case "message_stop":
			if !last {
				return fmt.Errorf("event %d: message_stop is not last", i)
			}
		case "error":
			if !last || len(open) > 0 {
				return fmt.Errorf("event %d: error must be last, blocks closed (open %v)", i, open)
			}
		}
	}
	if l := evs[len(evs)-1].name; l != "message_stop" && l != "error" {
		return fmt.Errorf("the stream ends with %s", l)
	}
	return nil
}

// antUpstream is an Anthropic stream as the API sends it: thinking with a signature, text, a tool call with
// its arguments in fragments, usage across message_start and message_delta, pings, an unknown event.
const antUpstream = "event: message_start\n" +
	`data: {"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":100,"cache_creation_input_tokens":200,"cache_read_input_tokens":1000,"output_tokens":1}}}` + "\n\n" +
	"event: content_block_start\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}` + "\n\n" +
	"event: ping\ndata: {\"type\": \"ping\"}\n\n" +
	"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me"}}` + "\n\n" +
	"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQB"}}` + "\n\n" +
	"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":0}` + "\n\n" +
	"event: content_block_start\n" + `data: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}` + "\n\n" +
	"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Checking."}}` + "\n\n" +
	"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":1}` + "\n\n" +
	"event: content_block_start\n" + `data: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_01","name":"get","input":{}}}` + "\n\n" +
	"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}` + "\n\n" +
	"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"city\": "}}` + "\n\n" +
	"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"\"Paris\"}"}}` + "\n\n" +
	"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":2}` + "\n\n" +
	"event: future_event\ndata: {\"type\":\"future_event\",\"x\":1}\n\n" +
	"event: message_delta\n" + `data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":42}}` + "\n\n" +
	"event: message_stop\n" + `data: {"type":"message_stop"}` + "\n\n"

// antDecodeAll runs a stream through a fresh decoder, then Finish(ended).
func antDecodeAll(t testing.TB, sse string, ended bool) ([]Event, error) {
	t.Helper()
	d := antCodecT(t).NewDecoder()
	var out []Event
	for _, ev := range antSplitSSE([]byte(sse)) {
		evs, err := d.Decode(ev.name, []byte(ev.data))
		if err != nil {
			return out, err
		}
		out = append(out, evs...)
	}
	return append(out, d.Finish(ended)...), nil
}

// antUsageP is a pointer to a usage.
func antUsageP(u Usage) *Usage { return &u }

func TestAntDecoder(t *testing.T) {
	start := Usage{Input: 100, CacheWrite: 200, CacheRead: 1000, Output: 1}
	got, err := antDecodeAll(t, antUpstream, true)
	if err != nil {
		t.Fatal(err)
	}
	want := []Event{
		{Type: EvStart, ID: "msg_01", Model: "claude-x", Usage: antUsageP(start)},
		{Type: EvUsage, Usage: antUsageP(start)},
		{Type: EvBlockStart, Index: 0, Part: &Part{Kind: PartThinking}},
		{Type: EvThinkingDelta, Index: 0, Text: "Let me"},
		{Type: EvSignature, Index: 0, Signature: "EqQB"},
		{Type: EvBlockStop, Index: 0},
		{Type: EvBlockStart, Index: 1, Part: &Part{Kind: PartText}},
		{Type: EvTextDelta, Index: 1, Text: "Checking."},
		{Type: EvBlockStop, Index: 1},
		{Type: EvBlockStart, Index: 2, Part: &Part{Kind: PartToolCall, ToolCall: &ToolCall{ID: "toolu_01", Name: "get"}}},
		{Type: EvArgsDelta, Index: 2, Text: `{"city": `},
		{Type: EvArgsDelta, Index: 2, Text: `"Paris"}`},
		{Type: EvBlockStop, Index: 2},
		{Type: EvFinish, Finish: FinishToolCalls},
		{Type: EvUsage, Usage: antUsageP(Usage{Input: 100, CacheWrite: 200, CacheRead: 1000, Output: 42})},
		{Type: EvEnd},
	}
	antSameEvents(t, got, want)
}

// antSameEvents fails unless got and want are the same canonical events.
func antSameEvents(t *testing.T, got, want []Event) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Fatalf("got  %s\nwant %s", g, w)
	}
}

// antToleranceCases are upstream streams out of order or with surprises, and the events each decodes as
// (they also seed the decoder's fuzz test).
var antToleranceCases = []struct {
	name  string
	sse   string
	ended bool
	want  []Event
}{
	{"delta before any start, stop for an unknown block, cut stream",
		"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}` + "\n\n" +
			"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":7}` + "\n\n" +
			"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{}"}}` + "\n\n",
		false,
		[]Event{{Type: EvStart}, {Type: EvBlockStart, Index: 0, Part: &Part{Kind: PartText}}, {Type: EvTextDelta, Index: 0, Text: "hi"},
			{Type: EvBlockStart, Index: 1, Part: &Part{Kind: PartToolCall, ToolCall: &ToolCall{ID: "toolu_1"}}}, {Type: EvArgsDelta, Index: 1, Text: "{}"},
			{Type: EvBlockStop, Index: 0}, {Type: EvBlockStop, Index: 1}}},
	{"server tool blocks skipped, citations ignored, message_delta usage with input counts",
		"event: message_start\n" + `data: {"type":"message_start","message":{"id":"m","model":"x","usage":{"input_tokens":5,"output_tokens":0}}}` + "\n\n" +
			"event: content_block_start\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"s","name":"web_search","input":{}}}` + "\n\n" +
			"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"q\":1}"}}` + "\n\n" +
			"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":0}` + "\n\n" +
			"event: content_block_start\n" + `data: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":"pre"}}` + "\n\n" +
			"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":1,"delta":{"type":"citations_delta","citation":{}}}` + "\n\n" +
			"event: message_delta\n" + `data: {"type":"message_delta","delta":{"stop_reason":"stop_sequence","stop_sequence":"END"},"usage":{"input_tokens":50,"cache_read_input_tokens":7,"output_tokens":9}}` + "\n\n",
		true,
		[]Event{{Type: EvStart, ID: "m", Model: "x", Usage: antUsageP(Usage{Input: 5})}, {Type: EvUsage, Usage: antUsageP(Usage{Input: 5})},
			{Type: EvBlockStart, Index: 0, Part: &Part{Kind: PartText}}, {Type: EvTextDelta, Index: 0, Text: "pre"},
			{Type: EvFinish, Finish: FinishStop, StopSequence: "END"}, {Type: EvUsage, Usage: antUsageP(Usage{Input: 50, CacheRead: 7, Output: 9})},
			{Type: EvBlockStop, Index: 0}, {Type: EvEnd}}},
	{"redacted thinking, a second block at the same index, a delta of another kind, refusal",
		"event: content_block_start\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"enc"}}` + "\n\n" +
			"event: content_block_start\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"t0","signature":"s0"}}` + "\n\n" +
			"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}` + "\n\n" +
			"event: message_delta\n" + `data: {"type":"message_delta","delta":{"stop_reason":"refusal"}}` + "\n\n",
		true,
		[]Event{{Type: EvStart}, {Type: EvBlockStart, Index: 0, Part: &Part{Kind: PartRedactedThinking, Data: "enc"}}, {Type: EvBlockStop, Index: 0},
			{Type: EvBlockStart, Index: 1, Part: &Part{Kind: PartThinking}}, {Type: EvThinkingDelta, Index: 1, Text: "t0"}, {Type: EvSignature, Index: 1, Signature: "s0"},
			{Type: EvBlockStop, Index: 1}, {Type: EvBlockStart, Index: 2, Part: &Part{Kind: PartText}}, {Type: EvTextDelta, Index: 2, Text: "x"},
			{Type: EvFinish, Finish: FinishFilter}, {Type: EvBlockStop, Index: 2}, {Type: EvEnd}}},
	{"max tokens; events named only in data; nothing but pings",
		"data: {\"type\":\"ping\"}\n\n" + "event: ping\ndata: \n\n" +
			`data: {"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":3}}` + "\n\n",
		true,
		[]Event{{Type: EvStart}, {Type: EvFinish, Finish: FinishLength}, {Type: EvUsage, Usage: antUsageP(Usage{Output: 3})}, {Type: EvEnd}}},
	{"error event: EvError, then nothing",
		"event: message_start\n" + `data: {"type":"message_start","message":{"id":"m","model":"x"}}` + "\n\n" +
			"event: content_block_start\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n" +
			"event: error\n" + `data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}` + "\n\n" +
			"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"late"}}` + "\n\n",
		true,
		[]Event{{Type: EvStart, ID: "m", Model: "x"}, {Type: EvBlockStart, Index: 0, Part: &Part{Kind: PartText}},
			{Type: EvError, Err: &Error{Type: ErrOverloaded, Code: "overloaded_error", Message: "Overloaded"}}}},
	{"only pings, ended: start and end", "event: ping\ndata: {\"type\":\"ping\"}\n\n", true, []Event{{Type: EvStart}, {Type: EvEnd}}},
}

func TestAntDecoderTolerance(t *testing.T) {
	for _, tc := range antToleranceCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := antDecodeAll(t, tc.sse, tc.ended)
			if err != nil {
				t.Fatal(err)
			}
			antSameEvents(t, got, tc.want)
		})
	}
}

func TestAntDecoderMalformed(t *testing.T) {
	for _, ev := range []antSSE{
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{`},
		{"message_start", `not json`},
		{"", `{"type":"message_delta",`},
		{"error", `{"type":"error"`},
	} {
		d := antCodecT(t).NewDecoder()
		if _, err := d.Decode(ev.name, []byte(ev.data)); err == nil {
			t.Errorf("Decode(%q, %s) gave no error", ev.name, ev.data)
		}
	}
	d := antCodecT(t).NewDecoder()
	for _, ev := range []antSSE{{"future", `not json`}, {"", `[1,2]`}, {"ping", ``}, {"message_stop", ``}} {
		if evs, err := d.Decode(ev.name, []byte(ev.data)); err != nil || len(evs) != 0 {
			t.Errorf("Decode(%q, %s) = %v, %v; want nothing", ev.name, ev.data, evs, err)
		}
	}
}

// antEncodeAll runs canonical events through a fresh encoder for a client that asked for model "asked".
func antEncodeAll(t testing.TB, evs []Event) []byte {
	t.Helper()
	e := antCodecT(t).NewEncoder(&Request{Model: "asked"})
	var out []byte
	for _, ev := range evs {
		out = e.Encode(out, ev)
	}
	return out
}

func TestAntEncoderExact(t *testing.T) {
	got := antEncodeAll(t, []Event{
		{Type: EvStart, ID: "chatcmpl-9", Model: "gpt-x", Usage: antUsageP(Usage{Input: 100, CacheRead: 1000})},
		{Type: EvBlockStart, Index: 0, Part: &Part{Kind: PartText}},
		{Type: EvTextDelta, Index: 0, Text: "Hi"},
		{Type: EvBlockStop, Index: 0},
		{Type: EvBlockStart, Index: 1, Part: &Part{Kind: PartToolCall, ToolCall: &ToolCall{ID: "call_1", Name: "get"}}},
		{Type: EvArgsDelta, Index: 1, Text: `{"a":`},
		{Type: EvArgsDelta, Index: 1, Text: `1}`},
		{Type: EvFinish, Finish: FinishToolCalls},
		{Type: EvUsage, Usage: antUsageP(Usage{Input: 100, CacheRead: 1000, Output: 10})},
		{Type: EvEnd},
		{Type: EvTextDelta, Index: 0, Text: "after the end"},
	})
	want := "event: message_start\n" +
		`data: {"type":"message_start","message":{"id":"msg_chatcmpl-9","type":"message","role":"assistant","model":"gpt-x","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":100,"cache_creation_input_tokens":0,"cache_read_input_tokens":1000,"output_tokens":0}}}` + "\n\n" +
		"event: content_block_start\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n" +
		"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}` + "\n\n" +
		"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":0}` + "\n\n" +
		"event: content_block_start\n" + `data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"call_1","name":"get","input":{}}}` + "\n\n" +
		"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}` + "\n\n" +
		"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"1}"}}` + "\n\n" +
		"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":1}` + "\n\n" +
		"event: message_delta\n" + `data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"input_tokens":100,"cache_creation_input_tokens":0,"cache_read_input_tokens":1000,"output_tokens":10}}` + "\n\n" +
		"event: message_stop\n" + `data: {"type":"message_stop"}` + "\n\n"
	if string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// antEncodeCases are canonical event sequences, and what the official SDK must make of the stream written
// for them.
var antEncodeCases = []struct {
	name      string
	evs       []Event
	check     func(t *testing.T, m anthropic.Message, err error)
	wantError bool
}{
	{"thinking with signature, usage after finish and twice, buffered to the end",
		[]Event{{Type: EvStart, ID: "resp_1", Model: "o3", Usage: antUsageP(Usage{Input: 7})},
			{Type: EvBlockStart, Index: 0, Part: &Part{Kind: PartThinking}}, {Type: EvThinkingDelta, Index: 0, Text: "th"},
			{Type: EvThinkingDelta, Index: 0, Text: "ink"}, {Type: EvSignature, Index: 0, Signature: "sig"}, {Type: EvBlockStop, Index: 0},
			{Type: EvBlockStart, Index: 1, Part: &Part{Kind: PartText}}, {Type: EvTextDelta, Index: 1, Text: "answer END"},
			{Type: EvFinish, Finish: FinishStop, StopSequence: "END"},
			{Type: EvUsage, Usage: antUsageP(Usage{Input: 7, Output: 3})}, {Type: EvUsage, Usage: antUsageP(Usage{Input: 7, CacheWrite: 2, Output: 30, Reasoning: 20})},
			{Type: EvEnd}},
		func(t *testing.T, m anthropic.Message, err error) {
			if err != nil || m.ID != "msg_resp_1" || m.Model != "o3" || len(m.Content) != 2 {
				t.Fatalf("%v %+v", err, m)
			}
			if c := m.Content[0]; c.Type != "thinking" || c.Thinking != "think" || c.Signature != "sig" {
				t.Fatalf("thinking block %+v", c)
			}
			if m.Content[1].Text != "answer END" || m.StopReason != "stop_sequence" || m.StopSequence != "END" {
				t.Fatalf("text %+v stop %q %q", m.Content[1], m.StopReason, m.StopSequence)
			}
			if u := m.Usage; u.InputTokens != 7 || u.OutputTokens != 30 || u.CacheCreationInputTokens != 2 {
				t.Fatalf("usage %+v", u)
			}
		}, false},
	{"no EvStart, no stops, parallel tools interleaved, STOP with tools is tool_use",
		[]Event{{Type: EvBlockStart, Index: 0, Part: &Part{Kind: PartToolCall, ToolCall: &ToolCall{ID: "call_0", Name: "a"}}},
			{Type: EvBlockStart, Index: 1, Part: &Part{Kind: PartToolCall, ToolCall: &ToolCall{ID: "call_1", Name: "b", Args: `{"y":2}`}}},
			{Type: EvArgsDelta, Index: 0, Text: `{"x":1}`}, {Type: EvFinish, Finish: FinishStop}, {Type: EvEnd}},
		func(t *testing.T, m anthropic.Message, err error) {
			if err != nil || m.Model != "asked" || !strings.HasPrefix(m.ID, "msg_") || len(m.Content) != 2 || m.StopReason != "tool_use" {
				t.Fatalf("%v %+v", err, m)
			}
			if a, b := m.Content[0], m.Content[1]; a.ID != "call_0" || string(a.Input) != `{"x":1}` || b.Name != "b" || string(b.Input) != `{"y":2}` {
				t.Fatalf("tools %+v %+v", a, b)
			}
		}, false},
	{"deltas without a block start one; late text reopens; a signature on a tool call is dropped; length",
		[]Event{{Type: EvStart, ID: "msg_x"}, {Type: EvTextDelta, Index: 3, Text: "a"}, {Type: EvBlockStop, Index: 3}, {Type: EvTextDelta, Index: 3, Text: "b"},
			{Type: EvBlockStart, Index: 4, Part: &Part{Kind: PartToolCall, ToolCall: &ToolCall{Name: "f"}}}, {Type: EvSignature, Index: 4, Signature: "gem"},
			{Type: EvBlockStart, Index: 5, Part: &Part{Kind: PartRedactedThinking, Data: "enc"}}, {Type: EvBlockStop, Index: 99},
			{Type: EvFinish, Finish: FinishLength}, {Type: EvEnd}},
		func(t *testing.T, m anthropic.Message, err error) {
			if err != nil || len(m.Content) != 4 || m.StopReason != "max_tokens" {
				t.Fatalf("%v %+v", err, m)
			}
			if m.Content[0].Text != "a" || m.Content[1].Text != "b" || m.Content[2].Type != "tool_use" || m.Content[2].ID != "toolu_2" ||
				m.Content[3].Type != "redacted_thinking" || m.Content[3].Data != "enc" {
				t.Fatalf("content %+v", m.Content)
			}
		}, false},
	{"error with a block open: block closed, error event last",
		[]Event{{Type: EvStart, ID: "msg_e"}, {Type: EvBlockStart, Index: 0, Part: &Part{Kind: PartText}}, {Type: EvTextDelta, Index: 0, Text: "par"},
			{Type: EvError, Err: &Error{Status: 502, Type: ErrServer, Message: "upstream cut"}}, {Type: EvEnd}, {Type: EvTextDelta, Index: 0, Text: "x"}},
		func(t *testing.T, m anthropic.Message, err error) {
			if err == nil || !strings.Contains(err.Error(), "api_error") || !strings.Contains(err.Error(), "upstream cut") || m.Content[0].Text != "par" {
				t.Fatalf("%v %+v", err, m)
			}
		}, true},
	{"error before anything: only the error event",
		[]Event{{Type: EvError, Err: &Error{Type: ErrOverloaded, Message: "Overloaded"}}},
		func(t *testing.T, m anthropic.Message, err error) {
			if err == nil || !strings.Contains(err.Error(), "overloaded_error") {
				t.Fatalf("%v", err)
			}
		}, true},
	{"end with nothing else: message_start, message_delta, message_stop",
		[]Event{{Type: EvEnd}},
		func(t *testing.T, m anthropic.Message, err error) {
			if err != nil || m.StopReason != "end_turn" || len(m.Content) != 0 || m.Model != "asked" {
				t.Fatalf("%v %+v", err, m)
			}
		}, false},
	{"content filter is refusal; text in the block start",
		[]Event{{Type: EvStart}, {Type: EvBlockStart, Index: 0, Part: &Part{Kind: PartText, Text: "no"}}, {Type: EvFinish, Finish: FinishFilter}, {Type: EvEnd}},
		func(t *testing.T, m anthropic.Message, err error) {
			if err != nil || m.StopReason != "refusal" || m.Content[0].Text != "no" {
				t.Fatalf("%v %+v", err, m)
			}
		}, false},
}

func TestAntEncoder(t *testing.T) {
	for _, tc := range antEncodeCases {
		t.Run(tc.name, func(t *testing.T) {
			out := antEncodeAll(t, tc.evs)
			if err := antCheckStream(out); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if last := antSplitSSE(out); (last[len(last)-1].name == "error") != tc.wantError {
				t.Fatalf("stream ends with %s\n%s", last[len(last)-1].name, out)
			}
			m, err := antSDKRead(out)
			tc.check(t, m, err)
		})
	}
}

// TestAntStreamRoundTrip: an Anthropic stream decoded and encoded again reads, through the official SDK, as
// the same message as the original.
func TestAntStreamRoundTrip(t *testing.T) {
	evs, err := antDecodeAll(t, antUpstream, true)
	if err != nil {
		t.Fatal(err)
	}
	out := antEncodeAll(t, evs)
	if err := antCheckStream(out); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want, err := antSDKRead([]byte(antUpstream))
	if err != nil {
		t.Fatal(err)
	}
	got, err := antSDKRead(out)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if !jsonEqual(t, g, w) {
		t.Fatalf("got  %s\nwant %s", g, w)
	}
	if got.Usage.InputTokens != 100 || got.Usage.CacheReadInputTokens != 1000 || got.Usage.OutputTokens != 42 || string(got.Content[2].Input) != `{"city": "Paris"}` {
		t.Fatalf("%+v", got)
	}
}

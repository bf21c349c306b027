package convert

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"tollgate/relay/adaptor"
)

// gemCodecT is the registered Gemini codec.
func gemCodecT(t testing.TB) Codec {
	t.Helper()
	c, ok := For(adaptor.Gemini)
	if !ok {
		t.Fatal("no Gemini codec registered")
	}
	return c
}

// gemCanonJSON is a canonical value as JSON, for comparing with a case's expectation.
func gemCanonJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// gemParseCases are Gemini request bodies and the canonical request each reads as.
var gemParseCases = []struct{ name, body, canon string }{
	{"text turns, system, sampling",
		`{"systemInstruction":{"parts":[{"text":"be brief"},{"text":"be kind"}]},
		  "contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"text":"hello"}]},{"parts":[{"text":"again"}]}],
		  "generationConfig":{"temperature":0.5,"topP":0.9,"topK":40,"maxOutputTokens":100,"stopSequences":["END"],"seed":7,
		    "presencePenalty":0.1,"frequencyPenalty":0.2},
		  "safetySettings":[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_NONE"}],"model":"ignored"}`,
		`{"model":"","system":[{"kind":"text","text":"be brief"},{"kind":"text","text":"be kind"}],
		  "messages":[{"role":"user","parts":[{"kind":"text","text":"hi"}]},{"role":"assistant","parts":[{"kind":"text","text":"hello"}]},
		    {"role":"user","parts":[{"kind":"text","text":"again"}]}],
		  "max_tokens":100,"temperature":0.5,"top_p":0.9,"top_k":40,"stop":["END"],"stream":false,
		  "presence_penalty":0.1,"frequency_penalty":0.2,"seed":7}`},
	{"snake_case everywhere",
		`{"system_instruction":{"parts":[{"text":"sys"}]},
		  "contents":[{"role":"user","parts":[{"inline_data":{"mime_type":"image/png","data":"iVBOR"}},{"file_data":{"file_uri":"https://x/a.webp"}}]}],
		  "tools":[{"function_declarations":[{"name":"f","parameters_json_schema":{"type":"object","properties":{"a":{"type":"string"}}}}]}],
		  "tool_config":{"function_calling_config":{"mode":"ANY","allowed_function_names":["f"]}},
		  "generation_config":{"max_output_tokens":"64","candidate_count":1,"response_mime_type":"application/json",
		    "thinking_config":{"thinking_budget":512,"include_thoughts":true}}}`,
		`{"model":"","system":[{"kind":"text","text":"sys"}],
		  "messages":[{"role":"user","parts":[{"kind":"image","image":{"media_type":"image/png","data":"iVBOR"}},
		    {"kind":"image","image":{"url":"https://x/a.webp","media_type":"image/webp"}}]}],
		  "tools":[{"name":"f","parameters":{"type":"object","properties":{"a":{"type":"string"}}}}],
		  "tool_choice":{"mode":"tool","name":"f"},"max_tokens":64,"response_format":{"type":"json_object"},
		  "reasoning":{"budget":512,"enabled":true,"summary":true},"stream":false}`},
	{"function calls and responses matched by id, then by name, then call_+name",
		`{"contents":[{"role":"user","parts":[{"text":"weather?"}]},
		  {"role":"model","parts":[{"functionCall":{"name":"w","args":{"city":"Oslo"}},"thoughtSignature":"c2ln"},
		    {"functionCall":{"name":"w","args":{"city":"Rome"}}},{"functionCall":{"id":"x9","name":"t"}}]},
		  {"role":"user","parts":[{"functionResponse":{"id":"x9","name":"t","response":{"ok":true}}},
		    {"functionResponse":{"name":"w","response":{"temp": 3}}},{"functionResponse":{"name":"w","response":{"error":"down"}}},
		    {"functionResponse":{"name":"zz","response":{"v":1}}}]}]}`,
		`{"model":"","messages":[{"role":"user","parts":[{"kind":"text","text":"weather?"}]},
		  {"role":"assistant","parts":[
		    {"kind":"tool_call","signature":"c2ln","tool_call":{"id":"call_0","name":"w","args":"{\"city\":\"Oslo\"}"}},
		    {"kind":"tool_call","tool_call":{"id":"call_1","name":"w","args":"{\"city\":\"Rome\"}"}},
		    {"kind":"tool_call","tool_call":{"id":"x9","name":"t","args":"{}"}}]},
		  {"role":"user","parts":[
		    {"kind":"tool_result","tool_result":{"call_id":"x9","name":"t","content":[{"kind":"text","text":"{\"ok\":true}"}]}},
		    {"kind":"tool_result","tool_result":{"call_id":"call_0","name":"w","content":[{"kind":"text","text":"{\"temp\":3}"}]}},
		    {"kind":"tool_result","tool_result":{"call_id":"call_1","name":"w","is_error":true,"content":[{"kind":"text","text":"{\"error\":\"down\"}"}]}},
		    {"kind":"tool_result","tool_result":{"call_id":"call_zz","name":"zz","content":[{"kind":"text","text":"{\"v\":1}"}]}}]}],
		  "stream":false}`},
	{"thought parts with signatures; a multimodal function response",
		`{"contents":[{"role":"user","parts":[{"text":"q"}]},
		  {"role":"model","parts":[{"text":"hmm","thought":true,"thoughtSignature":"dHM="},{"text":"a","thoughtSignature":"dDI="},{"text":""}]},
		  {"role":"function","parts":[{"functionResponse":{"name":"shot","response":{},"parts":[{"inlineData":{"mimeType":"image/jpeg","data":"/9j/"}}]}}]}]}`,
		`{"model":"","messages":[{"role":"user","parts":[{"kind":"text","text":"q"}]},
		  {"role":"assistant","parts":[{"kind":"thinking","text":"hmm","signature":"dHM="},{"kind":"text","text":"a","signature":"dDI="}]},
		  {"role":"user","parts":[{"kind":"tool_result","tool_result":{"call_id":"call_shot","name":"shot",
		    "content":[{"kind":"text","text":"{}"},{"kind":"image","image":{"media_type":"image/jpeg","data":"/9j/"}}]}}]}],"stream":false}`},
	{"OpenAPI parameters become JSON Schema; ANY with several names keeps those tools",
		`{"contents":[{"parts":[{"text":"x"}]}],
		  "tools":[{"functionDeclarations":[{"name":"a","description":"A","parameters":{"type":"OBJECT","propertyOrdering":["z","k"],
		    "properties":{"z":{"type":"STRING","nullable":true,"format":"enum","enum":["p","q"]},"k":{"type":"ARRAY","minItems":"1","items":{"type":"INTEGER","format":"int32"}},"u":{"type":["STRING","NULL"]}},
		    "required":["z"]}},{"name":"b"},{"name":"c"}]}],
		  "toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["a","c"]}}}`,
		`{"model":"","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],
		  "tools":[{"name":"a","description":"A","parameters":{"type":"object","properties":{"z":{"type":["string","null"],"enum":["p","q"]},
		    "k":{"type":"array","minItems":1,"items":{"type":"integer","format":"int32"}},"u":{"type":["string","null"]}},"required":["z"]}},{"name":"c"}],
		  "tool_choice":{"mode":"required"},"stream":false}`},
	{"tool modes AUTO and NONE",
		`{"contents":[{"parts":[{"text":"x"}]}],"toolConfig":{"functionCallingConfig":{"mode":"NONE"}}}`,
		`{"model":"","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"tool_choice":{"mode":"none"},"stream":false}`},
	{"tool mode AUTO",
		`{"contents":[{"parts":[{"text":"x"}]}],"toolConfig":{"functionCallingConfig":{"mode":"auto"}}}`,
		`{"model":"","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"tool_choice":{"mode":"auto"},"stream":false}`},
	{"ANY without names",
		`{"contents":[{"parts":[{"text":"x"}]}],"toolConfig":{"functionCallingConfig":{"mode":"ANY"}}}`,
		`{"model":"","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"tool_choice":{"mode":"required"},"stream":false}`},
	{"structured output from responseSchema, candidates, logprobs",
		`{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"responseMimeType":"application/json",
		  "responseSchema":{"type":"OBJECT","properties":{"n":{"type":"NUMBER"}}},"candidateCount":3,"responseLogprobs":true,"logprobs":2}}`,
		`{"model":"","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],
		  "response_format":{"type":"json_schema","name":"response","schema":{"type":"object","properties":{"n":{"type":"number"}}}},
		  "stream":false,"n":3,"logprobs":true,"top_logprobs":2}`},
	{"responseJsonSchema passes as is",
		`{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"responseMimeType":"application/json",
		  "responseJsonSchema":{"type":"object","properties":{"n":{"type":["number","null"]}},"additionalProperties":false}}}`,
		`{"model":"","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],
		  "response_format":{"type":"json_schema","name":"response","schema":{"type":"object","properties":{"n":{"type":["number","null"]}},"additionalProperties":false}},
		  "stream":false}`},
	{"thinking off",
		`{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"thinkingConfig":{"thinkingBudget":0}}}`,
		`{"model":"","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"reasoning":{"enabled":false},"stream":false}`},
	{"thinking dynamic",
		`{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"thinkingConfig":{"thinkingBudget":-1}}}`,
		`{"model":"","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"reasoning":{"enabled":true},"stream":false}`},
	{"thinking level",
		`{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"thinkingConfig":{"thinkingLevel":"HIGH","includeThoughts":true}}}`,
		`{"model":"","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"reasoning":{"effort":"high","enabled":true,"summary":true},"stream":false}`},
	{"includeThoughts false alone is the default",
		`{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"thinkingConfig":{"includeThoughts":false},"responseModalities":["TEXT"]}}`,
		`{"model":"","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"stream":false}`},
}

func TestGemParseRequest(t *testing.T) {
	c := gemCodecT(t)
	for _, tc := range gemParseCases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := c.ParseRequest([]byte(tc.body))
			if err != nil {
				t.Fatalf("ParseRequest: %v", err)
			}
			if got := gemCanonJSON(t, r); !jsonEqual(t, got, []byte(tc.canon)) {
				t.Errorf("got  %s\nwant %s", got, tc.canon)
			}
		})
	}
}

// gemParseErrorCases are bodies ParseRequest refuses: *Invalid (unsupported false) or *Unsupported, naming
// field.
var gemParseErrorCases = []struct {
	name, body, field string
	unsupported       bool
}{
	{"not an object", `[1]`, "body", false},
	{"no contents", `{"generationConfig":{}}`, "contents", false},
	{"contents not an array", `{"contents":{"parts":[]}}`, "contents", false},
	{"bad role", `{"contents":[{"role":"system","parts":[{"text":"x"}]}]}`, "contents[0].role", false},
	{"no parts", `{"contents":[{"role":"user"}]}`, "contents[0].parts", false},
	{"text not a string", `{"contents":[{"parts":[{"text":5}]}]}`, "contents[0].parts[0].text", false},
	{"args not an object", `{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f","args":"{}"}}]}]}`,
		"contents[0].parts[0].functionCall.args", false},
	{"call without name", `{"contents":[{"role":"model","parts":[{"functionCall":{"args":{}}}]}]}`,
		"contents[0].parts[0].functionCall.name", false},
	{"response not an object", `{"contents":[{"parts":[{"functionResponse":{"name":"f","response":[1]}}]}]}`,
		"contents[0].parts[0].functionResponse.response", false},
	{"temperature a string", `{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"temperature":"hot"}}`,
		"generationConfig.temperature", false},
	{"topK fractional", `{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"topK":1.5}}`, "generationConfig.topK", false},
	{"bad mode", `{"contents":[{"parts":[{"text":"x"}]}],"toolConfig":{"functionCallingConfig":{"mode":"SOMETIMES"}}}`,
		"toolConfig.functionCallingConfig.mode", false},
	{"bad level", `{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"thinkingConfig":{"thinkingLevel":"max"}}}`,
		"generationConfig.thinkingConfig.thinkingLevel", false},
	{"declaration without name", `{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"description":"d"}]}]}`,
		"tools[0].functionDeclarations[0].name", false},
	{"cachedContent", `{"cachedContent":"cachedContents/abc","contents":[{"parts":[{"text":"x"}]}]}`, "cachedContent", true},
	{"audio inline data", `{"contents":[{"parts":[{"inlineData":{"mimeType":"audio/wav","data":"UklG"}}]}]}`,
		"contents[0].parts[0].inlineData", true},
	{"pdf file", `{"contents":[{"parts":[{"fileData":{"mimeType":"application/pdf","fileUri":"gs://b/x.pdf"}}]}]}`,
		"contents[0].parts[0].fileData", true},
	{"google search tool", `{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"f"}]},{"googleSearch":{}}]}`,
		"tools[1].googleSearch", true},
	{"code execution tool", `{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"code_execution":{}}]}`, "tools[0].code_execution", true},
	{"url context tool", `{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"urlContext":{}}]}`, "tools[0].urlContext", true},
	{"executable code part", `{"contents":[{"role":"model","parts":[{"executableCode":{"code":"1"}}]}]}`,
		"contents[0].parts[0].executableCode", true},
	{"enum answers", `{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"responseMimeType":"text/x.enum"}}`,
		"generationConfig.responseMimeType", true},
	{"audio answers", `{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"responseModalities":["AUDIO"]}}`,
		"generationConfig.responseModalities", true},
	{"image in system", `{"systemInstruction":{"parts":[{"inlineData":{"mimeType":"image/png","data":"x"}}]},"contents":[{"parts":[{"text":"x"}]}]}`,
		"systemInstruction.parts[0]", true},
}

func TestGemParseRequestErrors(t *testing.T) {
	c := gemCodecT(t)
	for _, tc := range gemParseErrorCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.ParseRequest([]byte(tc.body))
			var inv *Invalid
			var uns *Unsupported
			switch {
			case tc.unsupported && errors.As(err, &uns):
				if uns.Field != tc.field {
					t.Errorf("Unsupported field %q, want %q", uns.Field, tc.field)
				}
			case !tc.unsupported && errors.As(err, &inv):
				if inv.Field != tc.field {
					t.Errorf("Invalid field %q, want %q", inv.Field, tc.field)
				}
			default:
				t.Errorf("err = %v (%T), want unsupported=%v on %s", err, err, tc.unsupported, tc.field)
			}
		})
	}
}

// gemBuildCases are canonical requests (JSON) and the generateContent body each is built as.
var gemBuildCases = []struct{ name, canon, want string }{
	{"roles, system, sampling; no model, no user, defaults left out",
		`{"model":"gemini-2.5-flash","system":[{"kind":"text","text":"sys"}],"user":"u1","stream":true,
		  "messages":[{"role":"user","parts":[{"kind":"text","text":"hi"}]},{"role":"assistant","parts":[{"kind":"text","text":"yo"}]},
		    {"role":"user","parts":[{"kind":"text","text":"more"},{"kind":"text","text":""}]}],
		  "max_tokens":50,"temperature":0,"top_p":1,"top_k":3,"stop":["a","b"],"n":1,"presence_penalty":0,"frequency_penalty":0.5,"seed":9}`,
		`{"systemInstruction":{"parts":[{"text":"sys"}]},
		  "contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"text":"yo"}]},{"role":"user","parts":[{"text":"more"}]}],
		  "generationConfig":{"temperature":0,"topP":1,"topK":3,"maxOutputTokens":50,"stopSequences":["a","b"],"frequencyPenalty":0.5,"seed":9}}`},
	{"tool calls and results: objects, result wrapping, names from the calls, one content per role",
		`{"model":"gemini-2.5-pro","messages":[{"role":"user","parts":[{"kind":"text","text":"go"}]},
		  {"role":"assistant","parts":[{"kind":"thinking","text":"plan","signature":"anthropic-sig"},{"kind":"redacted_thinking","data":"x"},
		    {"kind":"text","text":"calling"},
		    {"kind":"tool_call","signature":"Z3NpZw==","tool_call":{"id":"c1","name":"f","args":"{\"a\":1}"}},
		    {"kind":"tool_call","tool_call":{"id":"c2","name":"g","args":""}}]},
		  {"role":"user","parts":[{"kind":"tool_result","tool_result":{"call_id":"c1","content":[{"kind":"text","text":"{\"ok\":1}"}]}}]},
		  {"role":"user","parts":[{"kind":"tool_result","tool_result":{"call_id":"c2","is_error":true,"content":[{"kind":"text","text":"boom"}]}},
		    {"kind":"tool_result","tool_result":{"call_id":"c3","name":"h","content":[{"kind":"text","text":"plain"},{"kind":"image","image":{"url":"https://i/x.png"}}]}},
		    {"kind":"text","text":"next?"}]}],"stream":false}`,
		`{"contents":[{"role":"user","parts":[{"text":"go"}]},
		  {"role":"model","parts":[{"text":"calling"},{"functionCall":{"name":"f","args":{"a":1}},"thoughtSignature":"Z3NpZw=="},
		    {"functionCall":{"name":"g","args":{}}}]},
		  {"role":"user","parts":[{"functionResponse":{"name":"f","response":{"ok":1}}},{"functionResponse":{"name":"g","response":{"error":"boom"}}},
		    {"functionResponse":{"name":"h","response":{"result":"plain"}}},{"fileData":{"mimeType":"image/png","fileUri":"https://i/x.png"}},
		    {"text":"next?"}]}]}`},
	{"images: base64, data URL, URL with and without extension",
		`{"model":"m","messages":[{"role":"user","parts":[{"kind":"image","image":{"media_type":"image/webp","data":"UklGR"}},
		  {"kind":"image","image":{"data":"iVBORw0KGgoAAA"}},{"kind":"image","image":{"url":"data:image/gif;base64,R0lGOD"}},
		  {"kind":"image","image":{"url":"https://h/p.JPG?x=1"}},{"kind":"image","image":{"url":"https://h/p"}}]}],"stream":false}`,
		`{"contents":[{"role":"user","parts":[{"inlineData":{"mimeType":"image/webp","data":"UklGR"}},
		  {"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgoAAA"}},{"inlineData":{"mimeType":"image/gif","data":"R0lGOD"}},
		  {"fileData":{"mimeType":"image/jpeg","fileUri":"https://h/p.JPG?x=1"}},{"fileData":{"mimeType":"image/jpeg","fileUri":"https://h/p"}}]}]}`},
	{"tools as parametersJsonSchema; named choice",
		`{"model":"m","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],
		  "tools":[{"name":"f","description":"F","parameters":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]},"strict":true},
		    {"name":"n","parameters":{"type":"object","properties":{},"additionalProperties":false}},{"name":"e"}],
		  "tool_choice":{"mode":"tool","name":"f"},"parallel_tool_calls":true,"stream":false}`,
		`{"contents":[{"role":"user","parts":[{"text":"x"}]}],
		  "tools":[{"functionDeclarations":[{"name":"f","description":"F","parametersJsonSchema":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}},
		    {"name":"n"},{"name":"e"}]}],
		  "toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["f"]}}}`},
	{"tool choice required",
		`{"model":"m","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"tools":[{"name":"f"}],"tool_choice":{"mode":"required"},"stream":false}`,
		`{"contents":[{"role":"user","parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"f"}]}],
		  "toolConfig":{"functionCallingConfig":{"mode":"ANY"}}}`},
	{"tool choice none; auto",
		`{"model":"m","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"tools":[{"name":"f"}],"tool_choice":{"mode":"none"},"stream":false}`,
		`{"contents":[{"role":"user","parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"f"}]}],
		  "toolConfig":{"functionCallingConfig":{"mode":"NONE"}}}`},
	{"tool choice without tools says nothing",
		`{"model":"m","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"tool_choice":{"mode":"auto"},"parallel_tool_calls":false,"stream":false}`,
		`{"contents":[{"role":"user","parts":[{"text":"x"}]}]}`},
	{"json schema output, several candidates, a budget",
		`{"model":"m","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"n":2,
		  "response_format":{"type":"json_schema","name":"r","schema":{"type":"object","properties":{"a":{"type":"integer"}}}},
		  "reasoning":{"budget":3000,"enabled":true},"stream":false}`,
		`{"contents":[{"role":"user","parts":[{"text":"x"}]}],"generationConfig":{"candidateCount":2,"responseMimeType":"application/json",
		  "responseJsonSchema":{"type":"object","properties":{"a":{"type":"integer"}}},"thinkingConfig":{"thinkingBudget":3000,"includeThoughts":true}}}`},
	{"json object; an effort",
		`{"model":"m","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"response_format":{"type":"json_object"},
		  "reasoning":{"effort":"low","enabled":true},"stream":false}`,
		`{"contents":[{"role":"user","parts":[{"text":"x"}]}],"generationConfig":{"responseMimeType":"application/json",
		  "thinkingConfig":{"thinkingBudget":2048,"includeThoughts":true}}}`},
	{"thinking off",
		`{"model":"m","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"reasoning":{"enabled":false},"response_format":{"type":"text"},"stream":false}`,
		`{"contents":[{"role":"user","parts":[{"text":"x"}]}],"generationConfig":{"thinkingConfig":{"thinkingBudget":0}}}`},
	{"thinking on, dynamic",
		`{"model":"m","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]}],"reasoning":{"enabled":true,"summary":true},"stream":false}`,
		`{"contents":[{"role":"user","parts":[{"text":"x"}]}],"generationConfig":{"thinkingConfig":{"includeThoughts":true}}}`},
	{"Gemini 3 gets the stand-in signature on unsigned calls, only the first of parallel ones",
		`{"model":"gemini-3-pro-preview","messages":[{"role":"user","parts":[{"kind":"text","text":"x"}]},
		  {"role":"assistant","parts":[{"kind":"tool_call","tool_call":{"id":"a","name":"f","args":"{}"}},{"kind":"tool_call","tool_call":{"id":"b","name":"f","args":"{}"}}]},
		  {"role":"user","parts":[{"kind":"tool_result","tool_result":{"call_id":"a","content":[{"kind":"text","text":"1"}]}},
		    {"kind":"tool_result","tool_result":{"call_id":"b","content":[{"kind":"text","text":"2"}]}}]},
		  {"role":"assistant","parts":[{"kind":"tool_call","signature":"cmVhbA==","tool_call":{"id":"c","name":"f","args":"{}"}}]}],"stream":false}`,
		`{"contents":[{"role":"user","parts":[{"text":"x"}]},
		  {"role":"model","parts":[{"functionCall":{"name":"f","args":{}},"thoughtSignature":"skip_thought_signature_validator"},{"functionCall":{"name":"f","args":{}}}]},
		  {"role":"user","parts":[{"functionResponse":{"name":"f","response":{"result":"1"}}},{"functionResponse":{"name":"f","response":{"result":"2"}}}]},
		  {"role":"model","parts":[{"functionCall":{"name":"f","args":{}},"thoughtSignature":"cmVhbA=="}]}]}`},
}

func TestGemBuildRequest(t *testing.T) {
	c := gemCodecT(t)
	for _, tc := range gemBuildCases {
		t.Run(tc.name, func(t *testing.T) {
			var r Request
			if err := json.Unmarshal([]byte(tc.canon), &r); err != nil {
				t.Fatal(err)
			}
			got, err := c.BuildRequest(&r)
			if err != nil {
				t.Fatalf("BuildRequest: %v", err)
			}
			if !jsonEqual(t, got, []byte(tc.want)) {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// Codex CLI sends parallel_tool_calls false on every call: a Gemini upstream, which cannot be capped at one
// call per turn, gets the request without it rather than the caller a 400.
func TestGemBuildRequestDropsParallelToolCallsFalse(t *testing.T) {
	no := false
	r := &Request{Model: "m", Messages: []Message{{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "x"}}}},
		Tools: []Tool{{Name: "f"}}, ParallelToolCalls: &no}
	b, err := gemCodecT(t).BuildRequest(r)
	if err != nil || !strings.Contains(string(b), `"functionDeclarations"`) {
		t.Fatalf("body %s, err %v", b, err)
	}
}

func TestGemBuildRequestRefusals(t *testing.T) {
	c := gemCodecT(t)
	base := func() *Request {
		return &Request{Model: "m", Messages: []Message{{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "x"}}}}}
	}
	cases := []struct {
		field string
		edit  func(r *Request)
	}{
		{"logprobs", func(r *Request) { r.Logprobs = true }},
		{"top_logprobs", func(r *Request) { r.TopLogprobs = 3 }},
		{"logit_bias", func(r *Request) { r.LogitBias = json.RawMessage(`{"50256":-100}`) }},
		{"stop", func(r *Request) { r.Stop = []string{"1", "2", "3", "4", "5", "6"} }},
		{"messages[1].tool_calls[c].arguments", func(r *Request) {
			r.Messages = append(r.Messages, Message{Role: RoleAssistant,
				Parts: []Part{{Kind: PartToolCall, ToolCall: &ToolCall{ID: "c", Name: "f", Args: "[1]"}}}})
		}},
		{"messages[1].tool_call_id", func(r *Request) {
			r.Messages = append(r.Messages, Message{Role: RoleUser,
				Parts: []Part{{Kind: PartToolResult, ToolResult: &ToolResult{CallID: "nope"}}}})
		}},
		{"messages[0].content[1]", func(r *Request) {
			r.Messages[0].Parts = append(r.Messages[0].Parts, Part{Kind: PartImage, Image: &Image{URL: "data:image/png,raw"}})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.field, func(t *testing.T) {
			r := base()
			tc.edit(r)
			_, err := c.BuildRequest(r)
			var u *Unsupported
			if !errors.As(err, &u) || u.Field != tc.field || u.Target != adaptor.Gemini {
				t.Fatalf("err = %v, want Unsupported %s", err, tc.field)
			}
		})
	}
	// Defaults are not refused: empty logit_bias, five stops, penalties of 0.
	r := base()
	r.LogitBias, r.Stop = json.RawMessage(`{}`), []string{"1", "2", "3", "4", "5"}
	zero := 0.0
	r.PresencePenalty, r.FrequencyPenalty = &zero, &zero
	if _, err := c.BuildRequest(r); err != nil {
		t.Fatalf("defaults refused: %v", err)
	}
}

// TestGemRequestRoundTrip checks that a Gemini body read and written again says the same thing (the path a
// Gemini caller's array stream takes to a Gemini upstream).
func TestGemRequestRoundTrip(t *testing.T) {
	c := gemCodecT(t)
	body := `{"systemInstruction":{"parts":[{"text":"s"}]},"contents":[{"role":"user","parts":[{"text":"q"}]},
	  {"role":"model","parts":[{"text":"t","thought":true,"thoughtSignature":"dA=="},{"functionCall":{"name":"f","args":{"x":[1,2]}},"thoughtSignature":"c2ln"}]},
	  {"role":"user","parts":[{"functionResponse":{"name":"f","response":{"v":"ok"}}}]}],
	  "tools":[{"functionDeclarations":[{"name":"f","parametersJsonSchema":{"type":"object","properties":{"x":{"type":"array"}}}}]}],
	  "generationConfig":{"temperature":1,"maxOutputTokens":10,"thinkingConfig":{"thinkingBudget":100,"includeThoughts":true}}}`
	want := `{"systemInstruction":{"parts":[{"text":"s"}]},"contents":[{"role":"user","parts":[{"text":"q"}]},
	  {"role":"model","parts":[{"functionCall":{"name":"f","args":{"x":[1,2]}},"thoughtSignature":"c2ln"}]},
	  {"role":"user","parts":[{"functionResponse":{"name":"f","response":{"v":"ok"}}}]}],
	  "tools":[{"functionDeclarations":[{"name":"f","parametersJsonSchema":{"type":"object","properties":{"x":{"type":"array"}}}}]}],
	  "generationConfig":{"temperature":1,"maxOutputTokens":10,"thinkingConfig":{"thinkingBudget":100,"includeThoughts":true}}}`
	r, err := c.ParseRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	r.Model = "gemini-3-flash-preview"
	got, err := c.BuildRequest(r)
	if err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(t, got, []byte(want)) {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// gemResponseCases are GenerateContentResponse bodies and the canonical answer each reads as.
var gemResponseCases = []struct{ name, body, canon string }{
	{"text, thoughts, calls with and without ids; STOP with calls is tool_calls; usage",
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"think","thought":true,"thoughtSignature":"c1"},{"text":"Hi"},
		  {"functionCall":{"name":"f","args":{"a":1}},"thoughtSignature":"c2"},{"functionCall":{"id":"own","name":"g"}}]},"finishReason":"STOP","index":0}],
		  "usageMetadata":{"promptTokenCount":1300,"cachedContentTokenCount":1000,"candidatesTokenCount":20,"thoughtsTokenCount":30,"totalTokenCount":1350},
		  "modelVersion":"gemini-2.5-flash","responseId":"r-1"}`,
		`{"id":"r-1","model":"gemini-2.5-flash","parts":[{"kind":"thinking","text":"think","signature":"c1"},{"kind":"text","text":"Hi"},
		  {"kind":"tool_call","signature":"c2","tool_call":{"id":"call_r-1_0","name":"f","args":"{\"a\":1}"}},
		  {"kind":"tool_call","tool_call":{"id":"own","name":"g","args":"{}"}}],
		  "finish":"tool_calls","usage":{"input":300,"cache_read":1000,"output":50,"reasoning":30},"has_usage":true}`},
	{"max tokens",
		`{"candidates":[{"content":{"parts":[{"text":"cut"}]},"finishReason":"MAX_TOKENS"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":20,"thoughtsTokenCount":30}}`,
		`{"id":"","model":"","parts":[{"kind":"text","text":"cut"}],"finish":"length","usage":{"input":10,"output":50,"reasoning":30},"has_usage":true}`},
	{"safety", `{"candidates":[{"finishReason":"SAFETY","index":0}]}`,
		`{"id":"","model":"","parts":null,"finish":"content_filter","usage":{"input":0,"output":0},"has_usage":false}`},
	{"recitation", `{"candidates":[{"content":{"parts":[{"text":"a"}]},"finishReason":"RECITATION"}]}`,
		`{"id":"","model":"","parts":[{"kind":"text","text":"a"}],"finish":"content_filter","usage":{"input":0,"output":0},"has_usage":false}`},
	{"other reasons are stop", `{"candidates":[{"content":{"parts":[{"text":"a"}]},"finishReason":"MALFORMED_FUNCTION_CALL"}]}`,
		`{"id":"","model":"","parts":[{"kind":"text","text":"a"}],"finish":"stop","usage":{"input":0,"output":0},"has_usage":false}`},
	{"blocked prompt", `{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"},"usageMetadata":{"promptTokenCount":5,"totalTokenCount":5}}`,
		`{"id":"","model":"","parts":null,"finish":"content_filter","usage":{"input":5,"output":0},"has_usage":true}`},
	{"second candidate ignored", `{"candidates":[{"content":{"parts":[{"text":"b"}]},"index":1},{"content":{"parts":[{"text":"a"}]},"index":0,"finishReason":"STOP"}]}`,
		`{"id":"","model":"","parts":[{"kind":"text","text":"a"}],"finish":"stop","usage":{"input":0,"output":0},"has_usage":false}`},
}

func TestGemParseResponse(t *testing.T) {
	c := gemCodecT(t)
	for _, tc := range gemResponseCases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := c.ParseResponse([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if got := gemCanonJSON(t, r); !jsonEqual(t, got, []byte(tc.canon)) {
				t.Errorf("got  %s\nwant %s", got, tc.canon)
			}
		})
	}
	for _, bad := range []string{`{`, `[]`, `{"error":{"code":500,"message":"x"}}`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":"x"}}]}}]}`} {
		if _, err := c.ParseResponse([]byte(bad)); err == nil {
			t.Errorf("ParseResponse(%s): no error", bad)
		}
	}
}

func TestGemBuildResponse(t *testing.T) {
	c := gemCodecT(t)
	resp := &Response{ID: "msg_1", Model: "claude-x", Finish: FinishToolCalls, HasUsage: true,
		Usage: Usage{Input: 100, CacheRead: 1000, CacheWrite: 200, Output: 10},
		Parts: []Part{{Kind: PartThinking, Text: "hm", Signature: "s"}, {Kind: PartRedactedThinking, Data: "d"},
			{Kind: PartText, Text: "ok"}, {Kind: PartToolCall, ToolCall: &ToolCall{ID: "toolu_1", Name: "f", Args: `{"a":1}`}}}}
	got, err := c.BuildResponse(&Request{}, resp)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"},{"functionCall":{"id":"toolu_1","name":"f","args":{"a":1}}}]},
	  "finishReason":"STOP","index":0}],
	  "usageMetadata":{"promptTokenCount":1300,"candidatesTokenCount":10,"totalTokenCount":1310,"cachedContentTokenCount":1000},
	  "modelVersion":"claude-x","responseId":"msg_1"}`
	if !jsonEqual(t, got, []byte(want)) {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Thoughts are shown to a caller that asked for them; reasoning tokens are split out of the candidates.
	resp = &Response{Finish: FinishLength, HasUsage: true, Usage: Usage{Input: 10, Output: 50, Reasoning: 30},
		Parts: []Part{{Kind: PartThinking, Text: "hm", Signature: "s"}, {Kind: PartText, Text: "ok"}}}
	got, err = c.BuildResponse(&Request{Reasoning: &Reasoning{Enabled: true, Summary: true}}, resp)
	if err != nil {
		t.Fatal(err)
	}
	want = `{"candidates":[{"content":{"role":"model","parts":[{"text":"hm","thought":true,"thoughtSignature":"s"},{"text":"ok"}]},
	  "finishReason":"MAX_TOKENS","index":0}],
	  "usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":20,"totalTokenCount":60,"thoughtsTokenCount":30}}`
	if !jsonEqual(t, got, []byte(want)) {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	for f, word := range map[FinishReason]string{FinishStop: "STOP", FinishFilter: "SAFETY", FinishError: "OTHER", "": "STOP"} {
		got, _ := c.BuildResponse(nil, &Response{Finish: f})
		if !strings.Contains(string(got), `"finishReason":"`+word+`"`) || !strings.Contains(string(got), `"parts":[]`) {
			t.Errorf("finish %q: %s", f, got)
		}
	}
	if _, err := c.BuildResponse(nil, &Response{Parts: []Part{{Kind: PartToolCall, ToolCall: &ToolCall{Name: "f", Args: "[1]"}}}}); err == nil {
		t.Error("a call with array arguments was written")
	}
}

func TestGemErrors(t *testing.T) {
	c := gemCodecT(t)
	cases := []struct {
		status int
		body   string
		want   Error
	}{
		{400, `{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT","details":[]}}`, Error{400, ErrInvalidRequest, "INVALID_ARGUMENT", "bad"}},
		{400, `{"error":{"code":400,"message":"loc","status":"FAILED_PRECONDITION"}}`, Error{400, ErrInvalidRequest, "FAILED_PRECONDITION", "loc"}},
		{401, `{"error":{"code":401,"message":"k","status":"UNAUTHENTICATED"}}`, Error{401, ErrAuthentication, "UNAUTHENTICATED", "k"}},
		{403, `{"error":{"code":403,"message":"k","status":"PERMISSION_DENIED"}}`, Error{403, ErrPermission, "PERMISSION_DENIED", "k"}},
		{404, `{"error":{"code":404,"message":"m","status":"NOT_FOUND"}}`, Error{404, ErrNotFound, "NOT_FOUND", "m"}},
		{429, `{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}`, Error{429, ErrRateLimit, "RESOURCE_EXHAUSTED", "Resource has been exhausted"}},
		{429, `{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details.","status":"RESOURCE_EXHAUSTED"}}`,
			Error{429, ErrQuota, "RESOURCE_EXHAUSTED", "You exceeded your current quota, please check your plan and billing details."}},
		{429, `{"error":{"code":429,"message":"You exceeded your current quota","status":"RESOURCE_EXHAUSTED","details":[
		  {"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]},
		  {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"20s"}]}}`,
			Error{429, ErrRateLimit, "RESOURCE_EXHAUSTED", "You exceeded your current quota"}},
		{500, `{"error":{"code":500,"message":"i","status":"INTERNAL"}}`, Error{500, ErrServer, "INTERNAL", "i"}},
		{503, `[{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}]`, Error{503, ErrOverloaded, "UNAVAILABLE", "The model is overloaded."}},
		{504, `{"error":{"code":504,"message":"t","status":"DEADLINE_EXCEEDED"}}`, Error{504, ErrTimeout, "DEADLINE_EXCEEDED", "t"}},
		{413, `{"error":{"code":413,"message":"too big"}}`, Error{413, ErrTooLarge, "", "too big"}},
		{0, `{"error":{"code":429,"message":"slow","status":"RESOURCE_EXHAUSTED"}}`, Error{429, ErrRateLimit, "RESOURCE_EXHAUSTED", "slow"}},
		{502, `{"error":{"code":503,"message":"busy","status":"UNAVAILABLE"}}`, Error{503, ErrOverloaded, "UNAVAILABLE", "busy"}},
	}
	for _, tc := range cases {
		got := c.ParseError(tc.status, []byte(tc.body))
		if got == nil || *got != tc.want {
			t.Errorf("ParseError(%d, %s) = %+v, want %+v", tc.status, tc.body, got, tc.want)
		}
	}
	for _, body := range []string{`nope`, `{"message":"x"}`, ``} {
		if got := c.ParseError(502, []byte(body)); got != nil {
			t.Errorf("ParseError(%q) = %+v, want nil", body, got)
		}
	}
	builds := []struct {
		e    Error
		want string
	}{
		{Error{Status: 400, Type: ErrInvalidRequest, Message: "bad"}, `{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT","details":[]}}`},
		{Error{Type: ErrRateLimit, Message: "slow"}, `{"error":{"code":429,"message":"slow","status":"RESOURCE_EXHAUSTED","details":[]}}`},
		{Error{Status: 429, Type: ErrQuota, Code: "insufficient_quota", Message: "pay"}, `{"error":{"code":429,"message":"pay","status":"RESOURCE_EXHAUSTED","details":[]}}`},
		{Error{Status: 529, Type: ErrOverloaded, Code: "overloaded_error", Message: "busy"}, `{"error":{"code":529,"message":"busy","status":"UNAVAILABLE","details":[]}}`},
		{Error{Status: 400, Type: ErrInvalidRequest, Code: "FAILED_PRECONDITION", Message: "loc"}, `{"error":{"code":400,"message":"loc","status":"FAILED_PRECONDITION","details":[]}}`},
		{Error{Status: 401, Type: ErrAuthentication}, `{"error":{"code":401,"message":"Unauthorized","status":"UNAUTHENTICATED","details":[]}}`},
		{Error{Type: ErrTimeout, Message: "t"}, `{"error":{"code":504,"message":"t","status":"DEADLINE_EXCEEDED","details":[]}}`},
		{Error{Status: 502, Message: "x"}, `{"error":{"code":502,"message":"x","status":"INTERNAL","details":[]}}`},
	}
	for _, tc := range builds {
		if got := c.BuildError(&tc.e); !jsonEqual(t, got, []byte(tc.want)) {
			t.Errorf("BuildError(%+v) = %s, want %s", tc.e, got, tc.want)
		}
	}
	// Round trip: a Gemini error read and written again is the same error.
	body := []byte(`{"error":{"code":429,"message":"slow","status":"RESOURCE_EXHAUSTED","details":[]}}`)
	if got := c.BuildError(c.ParseError(429, body)); !jsonEqual(t, got, body) {
		t.Errorf("round trip: %s", got)
	}
}

// gemEv renders an event compactly for comparisons.
func gemEv(ev Event) string {
	switch ev.Type {
	case EvStart:
		return fmt.Sprintf("start %s %s", ev.ID, ev.Model)
	case EvBlockStart:
		s := fmt.Sprintf("block %d %s", ev.Index, ev.Part.Kind)
		if tc := ev.Part.ToolCall; tc != nil {
			s += " " + tc.ID + " " + tc.Name
		}
		if ev.Part.Signature != "" {
			s += " sig=" + ev.Part.Signature
		}
		return s
	case EvTextDelta:
		return fmt.Sprintf("text %d %s", ev.Index, ev.Text)
	case EvThinkingDelta:
		return fmt.Sprintf("think %d %s", ev.Index, ev.Text)
	case EvSignature:
		return fmt.Sprintf("sig %d %s", ev.Index, ev.Signature)
	case EvArgsDelta:
		return fmt.Sprintf("args %d %s", ev.Index, ev.Text)
	case EvBlockStop:
		return fmt.Sprintf("stop %d", ev.Index)
	case EvFinish:
		return "finish " + string(ev.Finish)
	case EvUsage:
		return fmt.Sprintf("usage %+v", *ev.Usage)
	case EvError:
		return fmt.Sprintf("error %+v", *ev.Err)
	case EvEnd:
		return "end"
	}
	return "?"
}

// gemDecodeAll feeds chunks (SSE data) to a decoder and finishes it (ended or cut).
func gemDecodeAll(t testing.TB, chunks []string, ended bool) []string {
	return decodeAll(t, gemCodecT(t).NewDecoder(), chunks, ended, gemEv)
}

// gemStreamChunks is a Gemini SSE stream: thoughts, text over two chunks, two whole calls, usage on the
// last chunk.
var gemStreamChunks = []string{
	`{"candidates":[{"content":{"role":"model","parts":[{"text":"plan","thought":true}]},"index":0}],"modelVersion":"gemini-2.5-pro","responseId":"R1"}`,
	`{"candidates":[{"content":{"role":"model","parts":[{"text":"","thought":true,"thoughtSignature":"U0lH"},{"text":"Hel"}]},"index":0}],"responseId":"R1"}`,
	`{"candidates":[{"content":{"role":"model","parts":[{"text":"lo","thoughtSignature":"dHh0"}]},"index":0}],"responseId":"R1"}`,
	`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f","args":{"a":1}},"thoughtSignature":"Zm4="},{"functionCall":{"id":"g1","name":"g"}}]},"finishReason":"STOP","index":0}],
	  "usageMetadata":{"promptTokenCount":12,"cachedContentTokenCount":2,"candidatesTokenCount":5,"thoughtsTokenCount":7,"totalTokenCount":24},"responseId":"R1"}`,
}

func TestGemDecoder(t *testing.T) {
	got := gemDecodeAll(t, gemStreamChunks, true)
	want := []string{
		"start R1 gemini-2.5-pro", "block 0 thinking", "think 0 plan",
		"sig 0 U0lH", "stop 0", "block 1 text", "text 1 Hel",
		"text 1 lo",
		"stop 1", "block 2 tool_call call_R1_0 f sig=Zm4=", `args 2 {"a":1}`, "stop 2", "block 3 tool_call g1 g", "args 3 {}", "stop 3",
		"finish tool_calls", "usage {Input:10 CacheRead:2 CacheWrite:0 Output:12 Reasoning:7}",
		"end",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestGemDecoderTolerance(t *testing.T) {
	cases := []struct {
		name   string
		chunks []string
		ended  bool
		want   []string
	}{
		{"no finishReason: finish derived, open block closed",
			[]string{`{"candidates":[{"content":{"parts":[{"text":"a"}]}}]}`}, true,
			[]string{"start  ", "block 0 text", "text 0 a", "stop 0", "finish stop", "end"}},
		{"cut stream: blocks closed, no end",
			[]string{`{"candidates":[{"content":{"parts":[{"text":"a"}]}}]}`}, false,
			[]string{"start  ", "block 0 text", "text 0 a", "stop 0"}},
		{"cumulative usage on every chunk; unknown fields and parts say nothing",
			[]string{`{"candidates":[{"content":{"parts":[{"text":"a"},{"inlineData":{"mimeType":"image/png","data":"x"}},{"executableCode":{}}]}}],"usageMetadata":{"promptTokenCount":3},"weird":1}`,
				`{"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":4}}`, `{"somethingNew":{}}`, `{"candidates":[{"content":{"parts":"x"}}]}`}, true,
			[]string{"start  ", "block 0 text", "text 0 a", "usage {Input:3 CacheRead:0 CacheWrite:0 Output:0 Reasoning:0}",
				"usage {Input:3 CacheRead:0 CacheWrite:0 Output:4 Reasoning:0}", "stop 0", "finish stop", "end"}},
		{"blocked prompt",
			[]string{`{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":3}}`}, true,
			[]string{"start  ", "finish content_filter", "usage {Input:3 CacheRead:0 CacheWrite:0 Output:0 Reasoning:0}", "end"}},
		{"error chunk mid-stream, nothing after it",
			[]string{`{"candidates":[{"content":{"parts":[{"text":"a"}]}}]}`, `{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}`,
				`{"candidates":[{"content":{"parts":[{"text":"b"}]}}]}`}, true,
			[]string{"start  ", "block 0 text", "text 0 a", "stop 0", "error {Status:503 Type:overloaded Code:UNAVAILABLE Message:overloaded}"}},
		{"max tokens", []string{`{"candidates":[{"content":{"parts":[{"text":"a"}]},"finishReason":"MAX_TOKENS"}]}`, ``}, true,
			[]string{"start  ", "block 0 text", "text 0 a", "stop 0", "finish length", "end"}},
		{"nothing at all", nil, true, []string{"start  ", "finish stop", "end"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := gemDecodeAll(t, tc.chunks, tc.ended)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestGemDecoderMalformed(t *testing.T) {
	for _, data := range []string{`{"candidates":[`, `[1]`, `"x"`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":[1]}}]}}]}`} {
		d := gemCodecT(t).NewDecoder()
		if _, err := d.Decode("", []byte(data)); err == nil {
			t.Errorf("Decode(%s): no error", data)
		}
	}
}

// gemEncodeAll encodes events with an encoder for req (the array framing when array).
func gemEncodeAll(t testing.TB, req *Request, array bool, evs []Event) string {
	t.Helper()
	enc := gemCodecT(t).NewEncoder(req)
	if array {
		enc = NewGeminiArrayEncoder(req)
	}
	var out []byte
	for _, ev := range evs {
		out = enc.Encode(out, ev)
	}
	return string(out)
}

// gemTextEvents is a short answer from another protocol: a thought, text, one call streamed in fragments.
var gemTextEvents = []Event{
	{Type: EvStart, ID: "msg_1", Model: "claude-x", Usage: &Usage{Input: 5, CacheRead: 10}},
	{Type: EvBlockStart, Index: 0, Part: &Part{Kind: PartThinking}},
	{Type: EvThinkingDelta, Index: 0, Text: "hm"},
	{Type: EvSignature, Index: 0, Signature: "sg"},
	{Type: EvBlockStop, Index: 0},
	{Type: EvBlockStart, Index: 1, Part: &Part{Kind: PartText}},
	{Type: EvTextDelta, Index: 1, Text: "Hi"},
	{Type: EvTextDelta, Index: 1, Text: ""},
	{Type: EvBlockStop, Index: 1},
	{Type: EvBlockStart, Index: 2, Part: &Part{Kind: PartToolCall, ToolCall: &ToolCall{ID: "toolu_1", Name: "f"}}},
	{Type: EvArgsDelta, Index: 2, Text: `{"a":`},
	{Type: EvArgsDelta, Index: 2, Text: `1}`},
	{Type: EvBlockStop, Index: 2},
	{Type: EvFinish, Finish: FinishToolCalls},
	{Type: EvUsage, Usage: &Usage{Input: 5, CacheRead: 10, Output: 7, Reasoning: 2}},
	{Type: EvEnd},
}

func TestGemEncoderSSE(t *testing.T) {
	got := gemEncodeAll(t, &Request{}, false, gemTextEvents)
	want := `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Hi"}]},"index":0}],"modelVersion":"claude-x","responseId":"msg_1"}` + "\n\n" +
		`data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"toolu_1","name":"f","args":{"a":1}}}]},"index":0}],"modelVersion":"claude-x","responseId":"msg_1"}` + "\n\n" +
		`data: {"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":15,"candidatesTokenCount":5,"totalTokenCount":22,"cachedContentTokenCount":10,"thoughtsTokenCount":2},"modelVersion":"claude-x","responseId":"msg_1"}` + "\n\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// A caller that asked for thoughts gets them, with the signature.
	got = gemEncodeAll(t, &Request{Reasoning: &Reasoning{Enabled: true, Summary: true}}, false, gemTextEvents[:5])
	want = `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"hm","thought":true}]},"index":0}],"modelVersion":"claude-x","responseId":"msg_1"}` + "\n\n" +
		`data: {"candidates":[{"content":{"role":"model","parts":[{"text":"","thought":true,"thoughtSignature":"sg"}]},"index":0}],"modelVersion":"claude-x","responseId":"msg_1"}` + "\n\n"
	if got != want {
		t.Errorf("thoughts: got\n%s\nwant\n%s", got, want)
	}
}

func TestGemEncoderArray(t *testing.T) {
	got := gemEncodeAll(t, nil, true, gemTextEvents)
	var arr []map[string]any
	if err := json.Unmarshal([]byte(got), &arr); err != nil || len(arr) != 3 {
		t.Fatalf("not an array of 3 chunks (%v):\n%s", err, got)
	}
	if !strings.HasPrefix(got, `[{"candidates"`) || strings.Count(got, "},\r\n{") != 2 || !strings.HasSuffix(got, `}]`) {
		t.Errorf("framing:\n%q", got)
	}
	cases := []struct {
		name string
		evs  []Event
		want string
	}{
		{"error before anything", []Event{{Type: EvError, Err: &Error{Type: ErrOverloaded, Message: "busy"}}, {Type: EvEnd}},
			`[{"error":{"code":503,"message":"busy","status":"UNAVAILABLE"}}]`},
		{"error after text; held call dropped", []Event{{Type: EvStart, ID: "i"}, {Type: EvTextDelta, Index: 0, Text: "a"},
			{Type: EvBlockStart, Index: 1, Part: &Part{Kind: PartToolCall, ToolCall: &ToolCall{ID: "c", Name: "f"}}},
			{Type: EvArgsDelta, Index: 1, Text: `{"x"`},
			{Type: EvError, Err: &Error{Status: 502, Type: ErrServer, Code: "upstream_error", Message: "cut"}}, {Type: EvTextDelta, Text: "late"}},
			`[{"candidates":[{"content":{"role":"model","parts":[{"text":"a"}]},"index":0}],"responseId":"i"},` + "\r\n" +
				`{"error":{"code":502,"message":"cut","status":"INTERNAL"}}]`},
		{"arguments that are not an object end the stream with an error", []Event{
			{Type: EvBlockStart, Index: 0, Part: &Part{Kind: PartToolCall, ToolCall: &ToolCall{ID: "c", Name: "f"}}},
			{Type: EvArgsDelta, Index: 0, Text: `[1,2]`}, {Type: EvBlockStop, Index: 0}, {Type: EvEnd}},
			`[{"error":{"code":500,"message":"the upstream sent arguments for tool call f that are not a JSON object","status":"INTERNAL"}}]`},
		{"a call still open at the end is written before the final chunk", []Event{
			{Type: EvBlockStart, Index: 0, Part: &Part{Kind: PartToolCall, Signature: "c2ln", ToolCall: &ToolCall{ID: "c", Name: "f"}}},
			{Type: EvArgsDelta, Index: 0, Text: `{}`}, {Type: EvEnd}, {Type: EvEnd}},
			`[{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"c","name":"f","args":{}},"thoughtSignature":"c2ln"}]},"index":0}]},` + "\r\n" +
				`{"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP","index":0}]}]`},
		{"deltas without a start; a filtered end", []Event{{Type: EvTextDelta, Index: 4, Text: "x"}, {Type: EvArgsDelta, Index: 9, Text: "{"},
			{Type: EvBlockStop, Index: 9}, {Type: EvFinish, Finish: FinishFilter}, {Type: EvEnd}},
			`[{"candidates":[{"content":{"role":"model","parts":[{"text":"x"}]},"index":0}]},` + "\r\n" +
				`{"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"SAFETY","index":0}]}]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := gemEncodeAll(t, nil, true, tc.evs); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestGemStreamRoundTrip decodes a Gemini stream and writes it again as the array a Gemini caller without
// alt=sse gets: the same text, calls (ids synthesized), signatures on calls, finish and usage.
func TestGemStreamRoundTrip(t *testing.T) {
	c := gemCodecT(t)
	d := c.NewDecoder()
	enc := NewGeminiArrayEncoder(&Request{Reasoning: &Reasoning{Enabled: true, Summary: true}})
	var out []byte
	for _, ch := range gemStreamChunks {
		evs, err := d.Decode("", []byte(ch))
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			out = enc.Encode(out, ev)
		}
	}
	for _, ev := range d.Finish(true) {
		out = enc.Encode(out, ev)
	}
	var chunks []json.RawMessage
	if err := json.Unmarshal(out, &chunks); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var parts []string
	for _, ch := range chunks {
		r, err := c.ParseResponse(ch)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range r.Parts {
			s := string(p.Kind) + ":" + p.Text + ":" + p.Signature
			if p.ToolCall != nil {
				s += ":" + p.ToolCall.ID + ":" + p.ToolCall.Args
			}
			parts = append(parts, s)
		}
	}
	want := []string{"thinking:plan:", "thinking::U0lH", "text:Hel:", "text:lo:", `tool_call::Zm4=:call_R1_0:{"a":1}`, "tool_call:::g1:{}"}
	if !reflect.DeepEqual(parts, want) {
		t.Errorf("parts %q, want %q", parts, want)
	}
	last, _ := c.ParseResponse(chunks[len(chunks)-1])
	if last.Finish != FinishStop || last.Usage != (Usage{Input: 10, CacheRead: 2, Output: 12, Reasoning: 7}) {
		t.Errorf("last chunk: %+v", last)
	}
}

package tokencount

import "testing"

// cookbookMessages is the example from OpenAI's cookbook "How to count tokens with tiktoken", whose published
// counts (129 for gpt-3.5-turbo-0613 / gpt-4-0613, 124 for gpt-4o / gpt-4o-mini) pin both the vocabularies
// and the per-message overhead.
const cookbookMessages = `{"model":"x","messages":[
 {"role": "system","content": "You are a helpful, pattern-following assistant that translates corporate jargon into plain English."},
 {"role": "system","name": "example_user","content": "New synergies will help drive top-line growth."},
 {"role": "system","name": "example_assistant","content": "Things working well together will increase revenue."},
 {"role": "system","name": "example_user","content": "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage."},
 {"role": "system","name": "example_assistant","content": "Let's talk later when we're less busy about how to do better."},
 {"role": "user","content": "This late pivot means we don't have time to boil the ocean for the client deliverable."}]}`

const weatherTool = `[{"type":"function","function":{"name":"get_weather","description":"Get the weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]`

func TestOpenAIChatPrompt(t *testing.T) {
	hw := 2 // "hello world" in both vocabularies
	toolTokens := counter.Text("gpt-4o", weatherTool)
	cases := []struct {
		name, model, body string
		want              int
	}{
		{"cookbook, cl100k", "gpt-4-0613", cookbookMessages, 129},
		{"cookbook, o200k", "gpt-4o", cookbookMessages, 124},
		{"string content", "gpt-4o", `{"messages":[{"role":"user","content":"hello world"}]}`, 3 + 1 + hw + 3},
		{"text and low-detail image parts", "gpt-4o",
			`{"messages":[{"role":"user","content":[{"type":"text","text":"hello world"},{"type":"image_url","image_url":{"url":"data:,","detail":"low"}}]}]}`,
			3 + 1 + hw + openAIImageLow + 3},
		{"image without detail counts high", "gpt-4o",
			`{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/y.png"}}]}]}`,
			3 + 1 + openAIImageHigh + 3},
		{"assistant tool call", "gpt-4o",
			`{"messages":[{"role":"assistant","content":null,"tool_calls":[{"type":"function","function":{"name":"hello","arguments":"hello world"}}]}]}`,
			3 + counter.Text("gpt-4o", "assistant") + 1 + hw + 3},
		{"tools add their JSON", "gpt-4o",
			`{"messages":[{"role":"user","content":"hello world"}],"tools":` + weatherTool + `}`, 3 + 1 + hw + 3 + toolTokens},
		{"responses string input", "gpt-4o", `{"input":"hello world"}`, 3 + hw + 3},
		{"responses instructions and items", "gpt-4.1",
			`{"instructions":"hello world","input":[{"role":"user","content":[{"type":"input_text","text":"hello world"}]},{"type":"function_call_output","call_id":"c","output":"hello world"}]}`,
			3 + hw + 3 + 1 + hw + 3 + hw + 3},
		{"embeddings string", "text-embedding-3-small", `{"input":"hello world"}`, hw},
		{"embeddings strings", "text-embedding-3-small", `{"input":["hello world","hello world"]}`, 2 * hw},
		{"embeddings token arrays", "text-embedding-3-small", `{"input":[[1,2,3],[4,5]]}`, 5},
		{"embeddings one token array", "text-embedding-ada-002", `{"input":[1,2,3]}`, 3},
		{"completions prompt", "gpt-3.5-turbo-instruct", `{"prompt":"hello world"}`, hw},
		{"completions prompt array", "gpt-3.5-turbo-instruct", `{"prompt":["hello world","hello world"]}`, 2 * hw},
		{"no prompt at all", "gpt-4o", `{"model":"gpt-4o"}`, 0},
		{"malformed body counts its text", "gpt-4o", `{"messages": hello world`, counter.Text("gpt-4o", `{"messages": hello world`)},
	}
	for _, tc := range cases {
		if got := counter.OpenAIChatPrompt(tc.model, []byte(tc.body)); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestAnthropicPrompt(t *testing.T) {
	const model = "claude-sonnet-4-5"
	hw := 2
	toolTokens := counter.Text(model, `[{"name":"get_weather","input_schema":{"type":"object"}}]`)
	cases := []struct {
		name, body string
		want       int
	}{
		{"strings", `{"system":"hello world","messages":[{"role":"user","content":"hello world"}]}`, hw + 3 + hw + 3},
		{"blocks", `{"system":[{"type":"text","text":"hello world"}],"messages":[{"role":"user","content":[
			{"type":"text","text":"hello world"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}]}]}`,
			hw + 3 + hw + anthropicImage + 3},
		{"tool use and result", `{"messages":[
			{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"hello","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"hello world"}]}]}]}`,
			3 + 1 + counter.Text(model, "{}") + 3 + hw + 3},
		{"thinking and text document", `{"messages":[{"role":"user","content":[
			{"type":"thinking","thinking":"hello world","signature":"x"},
			{"type":"document","source":{"type":"text","media_type":"text/plain","data":"hello world"}}]}]}`,
			3 + hw + hw + 3},
		{"tools add their JSON", `{"messages":[{"role":"user","content":"hello world"}],"tools":[{"name": "get_weather", "input_schema": {"type": "object"}}]}`,
			3 + hw + 3 + toolTokens},
		{"empty", `{}`, 0},
	}
	for _, tc := range cases {
		if got := counter.AnthropicPrompt(model, []byte(tc.body)); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

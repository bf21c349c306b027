package relay_test

// Done when (protocols): 4 client protocols × 3 upstream types × {stream, non-stream} × {text, tool call}
// through recording fake upstreams — every case answers in the caller's exact shape, read by the official
// SDK of the caller's protocol (openai-go for chat and Responses, anthropic-sdk-go, google.golang.org/genai);
// tool-call arguments arrive whole; each log row's tokens and cost equal the upstream's usage priced once.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
	"google.golang.org/genai"

	"tollgate/relay/relaytest"
)

const (
	matrixTool = "get_weather"
	matrixArgs = `{"city":"Paris","unit":"celsius"}`
)

// matrixAnswer is what one client call got, as its SDK read it.
type matrixAnswer struct {
	text             string
	toolName, args   string
	prompt, complete int64 // the usage the client was told
}

// matrixClient is one client protocol driven through its official SDK.
type matrixClient struct {
	name  string // its protocol, as the log's client_protocol says
	proto string
	call  func(t *testing.T, w *matrixWorld, model, reqID string, stream, tool bool) (matrixAnswer, error)
}

// matrixWorld is a node with one channel per upstream type, each on its own fake, serving
// mx-<type>-text (answers text) and mx-<type>-tool (answers one tool call).
type matrixWorld struct {
	*world
	key string
}

func newMatrixWorld(t *testing.T) *matrixWorld {
	w := newWorld(t)
	var rows []price
	for _, typ := range matrixUpstreams {
		up := fake(t, relaytest.ForModel("mx-"+typ+"-tool", relaytest.WithToolCall(matrixTool, matrixArgs)))
		models := []string{"mx-" + typ + "-text", "mx-" + typ + "-tool"}
		w.channel(chanSpec{Type: typ, Name: "mx-" + typ, BaseURL: up.URL, Keys: []string{"upstream-" + typ}, Models: models})
		for _, m := range models {
			rows = append(rows, price{Model: m, Input: "1", Output: "2"})
		}
	}
	w.prices(rows...)
	p := w.user("matrix", 10_000_000)
	return &matrixWorld{world: w, key: w.key(p, nil).Key}
}

// matrixUpstreams are the channel types: openai serves Responses natively, openai-compatible only chat.
var matrixUpstreams = []string{"openai", "openai-compatible", "anthropic", "gemini"}

// upstreamProtocol is what a channel of type up is sent for a caller speaking client.
func upstreamProtocol(client, up string) string {
	switch up {
	case "openai":
		if client == "responses" {
			return "responses"
		}
		return "openai"
	case "openai-compatible":
		return "openai"
	}
	return up
}

var matrixClients = []matrixClient{
	{name: "openai chat", proto: "openai", call: callOpenAIChat},
	{name: "responses", proto: "responses", call: callResponses},
	{name: "anthropic", proto: "anthropic", call: callAnthropic},
	{name: "gemini", proto: "gemini", call: callGemini},
}

func TestMatrix_EveryClientProtocolThroughEveryUpstreamType(t *testing.T) {
	w := newMatrixWorld(t)
	for _, cl := range matrixClients {
		for _, up := range matrixUpstreams {
			for _, stream := range []bool{false, true} {
				for _, tool := range []bool{false, true} {
					name := fmt.Sprintf("%s→%s stream=%v tool=%v", cl.proto, up, stream, tool)
					t.Run(name, func(t *testing.T) {
						model := "mx-" + up + "-text"
						if tool {
							model = "mx-" + up + "-tool"
						}
						id := newReqID("mx")
						got, err := cl.call(t, w, model, id, stream, tool)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						if tool {
							if got.toolName != matrixTool || !sameJSON(got.args, matrixArgs) {
								t.Fatalf("tool call = %q %q, want %s %s (text %q)", got.toolName, got.args, matrixTool, matrixArgs, got.text)
							}
						} else if !strings.HasPrefix(got.text, fullText) {
							t.Fatalf("text = %q, want the fake's %q", got.text, fullText)
						}
						if got.prompt != 10 || got.complete != 20 {
							t.Errorf("client was told usage %d+%d, want 10+20", got.prompt, got.complete)
						}
						l := w.logOf(id)
						wantBilled(t, l, 50, 10, 20)
						if want := upstreamProtocol(cl.proto, up); l.ClientProtocol != cl.proto || l.UpstreamProtocol != want {
							t.Fatalf("log protocols %s→%s, want %s→%s", l.ClientProtocol, l.UpstreamProtocol, cl.proto, want)
						}
					})
				}
			}
		}
	}
}

// sameJSON compares two JSON texts by value.
func sameJSON(a, b string) bool {
	na, nb := normJSON(a), normJSON(b)
	return na != "" && na == nb
}

func weatherSchema() map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{
		"city": map[string]any{"type": "string"}, "unit": map[string]any{"type": "string"}}, "required": []string{"city"}}
}

func callOpenAIChat(t *testing.T, w *matrixWorld, model, reqID string, stream, tool bool) (matrixAnswer, error) {
	c := openai.NewClient(option.WithBaseURL(w.node.URL+"/v1"), option.WithAPIKey(w.key), option.WithMaxRetries(0),
		option.WithHeader("X-Request-Id", reqID))
	p := openai.ChatCompletionNewParams{Model: model, Messages: []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage("You are terse."), openai.UserMessage("weather in Paris?")}}
	if tool {
		p.Tools = []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: matrixTool, Parameters: weatherSchema()})}
	}
	ctx := context.Background()
	var cc openai.ChatCompletion
	if stream {
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		st := c.Chat.Completions.NewStreaming(ctx, p)
		acc := openai.ChatCompletionAccumulator{}
		for st.Next() {
			acc.AddChunk(st.Current())
		}
		if err := st.Err(); err != nil {
			return matrixAnswer{}, err
		}
		cc = acc.ChatCompletion
	} else {
		resp, err := c.Chat.Completions.New(ctx, p)
		if err != nil {
			return matrixAnswer{}, err
		}
		cc = *resp
	}
	if len(cc.Choices) != 1 {
		return matrixAnswer{}, fmt.Errorf("%d choices", len(cc.Choices))
	}
	m := cc.Choices[0].Message
	a := matrixAnswer{text: m.Content, prompt: cc.Usage.PromptTokens, complete: cc.Usage.CompletionTokens}
	want := "stop"
	if len(m.ToolCalls) > 0 {
		a.toolName, a.args, want = m.ToolCalls[0].Function.Name, m.ToolCalls[0].Function.Arguments, "tool_calls"
		if m.ToolCalls[0].ID == "" {
			return a, fmt.Errorf("tool call without an id")
		}
	}
	if cc.Choices[0].FinishReason != want {
		return a, fmt.Errorf("finish_reason %q, want %q", cc.Choices[0].FinishReason, want)
	}
	return a, nil
}

func callResponses(t *testing.T, w *matrixWorld, model, reqID string, stream, tool bool) (matrixAnswer, error) {
	c := openai.NewClient(option.WithBaseURL(w.node.URL+"/v1"), option.WithAPIKey(w.key), option.WithMaxRetries(0),
		option.WithHeader("X-Request-Id", reqID))
	p := responses.ResponseNewParams{Model: model, Instructions: openai.String("You are terse."),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("weather in Paris?")}}
	if tool {
		p.Tools = []responses.ToolUnionParam{responses.ToolParamOfFunction(matrixTool, weatherSchema(), false)}
	}
	ctx := context.Background()
	var resp responses.Response
	if stream {
		st := c.Responses.NewStreaming(ctx, p)
		var deltas strings.Builder
		var argDeltas strings.Builder
		done := false
		for st.Next() {
			ev := st.Current()
			switch ev.Type {
			case "response.output_text.delta":
				deltas.WriteString(ev.Delta)
			case "response.function_call_arguments.delta":
				argDeltas.WriteString(ev.Delta)
			case "response.completed":
				resp, done = ev.Response, true
			}
		}
		if err := st.Err(); err != nil {
			return matrixAnswer{}, err
		}
		if !done {
			return matrixAnswer{}, fmt.Errorf("no response.completed")
		}
		if deltas.String() != resp.OutputText() {
			return matrixAnswer{}, fmt.Errorf("text deltas %q differ from the completed text %q", deltas.String(), resp.OutputText())
		}
		if tool && !sameJSON(argDeltas.String(), matrixArgs) {
			return matrixAnswer{}, fmt.Errorf("argument deltas %q", argDeltas.String())
		}
	} else {
		r, err := c.Responses.New(ctx, p)
		if err != nil {
			return matrixAnswer{}, err
		}
		resp = *r
	}
	if resp.Status != "completed" {
		return matrixAnswer{}, fmt.Errorf("status %q", resp.Status)
	}
	a := matrixAnswer{text: resp.OutputText(), prompt: resp.Usage.InputTokens, complete: resp.Usage.OutputTokens}
	for _, it := range resp.Output {
		if it.Type == "function_call" {
			a.toolName, a.args = it.Name, it.Arguments.OfString
			if it.CallID == "" {
				return a, fmt.Errorf("function_call without call_id")
			}
		}
	}
	return a, nil
}

func callAnthropic(t *testing.T, w *matrixWorld, model, reqID string, stream, tool bool) (matrixAnswer, error) {
	c := anthropic.NewClient(aoption.WithoutEnvironmentDefaults(), aoption.WithBaseURL(w.node.URL), aoption.WithAPIKey(w.key),
		aoption.WithMaxRetries(0), aoption.WithHeader("X-Request-Id", reqID))
	p := anthropic.MessageNewParams{Model: anthropic.Model(model), MaxTokens: 256,
		System:   []anthropic.TextBlockParam{{Text: "You are terse."}},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("weather in Paris?"))}}
	if tool {
		p.Tools = []anthropic.ToolUnionParam{anthropic.ToolUnionParamOfTool(anthropic.ToolInputSchemaParam{
			Properties: weatherSchema()["properties"], Required: []string{"city"}}, matrixTool)}
	}
	ctx := context.Background()
	var msg anthropic.Message
	if stream {
		st := c.Messages.NewStreaming(ctx, p)
		for st.Next() {
			if err := msg.Accumulate(st.Current()); err != nil {
				return matrixAnswer{}, err
			}
		}
		if err := st.Err(); err != nil {
			return matrixAnswer{}, err
		}
	} else {
		m, err := c.Messages.New(ctx, p)
		if err != nil {
			return matrixAnswer{}, err
		}
		msg = *m
	}
	a := matrixAnswer{prompt: msg.Usage.InputTokens + msg.Usage.CacheReadInputTokens + msg.Usage.CacheCreationInputTokens,
		complete: msg.Usage.OutputTokens}
	want := anthropic.StopReasonEndTurn
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			a.text += b.Text
		case "tool_use":
			a.toolName, a.args, want = b.Name, string(b.Input), anthropic.StopReasonToolUse
			if b.ID == "" {
				return a, fmt.Errorf("tool_use without an id")
			}
		}
	}
	if msg.StopReason != want {
		return a, fmt.Errorf("stop_reason %q, want %q", msg.StopReason, want)
	}
	return a, nil
}

func callGemini(t *testing.T, w *matrixWorld, model, reqID string, stream, tool bool) (matrixAnswer, error) {
	ctx := context.Background()
	c, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: w.key, Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: w.node.URL + "/", Headers: http.Header{"X-Request-Id": {reqID}}}})
	if err != nil {
		return matrixAnswer{}, err
	}
	cfg := &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText("You are terse.", genai.RoleUser)}
	if tool {
		cfg.Tools = []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: matrixTool,
			ParametersJsonSchema: weatherSchema()}}}}
	}
	contents := genai.Text("weather in Paris?")
	var chunks []*genai.GenerateContentResponse
	if stream {
		for r, err := range c.Models.GenerateContentStream(ctx, model, contents, cfg) {
			if err != nil {
				return matrixAnswer{}, err
			}
			chunks = append(chunks, r)
		}
	} else {
		r, err := c.Models.GenerateContent(ctx, model, contents, cfg)
		if err != nil {
			return matrixAnswer{}, err
		}
		chunks = append(chunks, r)
	}
	var a matrixAnswer
	finished := false
	for _, r := range chunks {
		a.text += r.Text()
		for _, fc := range r.FunctionCalls() {
			a.toolName, a.args = fc.Name, string(mustMarshal(fc.Args))
		}
		if r.UsageMetadata != nil {
			a.prompt = int64(r.UsageMetadata.PromptTokenCount)
			a.complete = int64(r.UsageMetadata.CandidatesTokenCount + r.UsageMetadata.ThoughtsTokenCount)
		}
		if len(r.Candidates) > 0 && r.Candidates[0].FinishReason != "" {
			finished = true
		}
	}
	if !finished {
		return a, fmt.Errorf("no chunk carried a finishReason")
	}
	return a, nil
}

// normJSON is a JSON text re-marshalled with sorted keys ("" when it is not JSON).
func normJSON(s string) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return ""
	}
	return string(mustMarshal(v))
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

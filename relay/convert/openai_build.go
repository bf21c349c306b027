package convert

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"tollgate/relay/adaptor"
)

// oaiOutRequest is the chat completions body BuildRequest writes for an upstream.
type oaiOutRequest struct {
	Model               string          `json:"model"`
	Messages            []oaiOutMessage `json:"messages"`
	Tools               []oaiOutTool    `json:"tools,omitempty"`
	ToolChoice          any             `json:"tool_choice,omitempty"`
	ParallelToolCalls   *bool           `json:"parallel_tool_calls,omitempty"`
	MaxCompletionTokens int64           `json:"max_completion_tokens,omitempty"`
	Temperature         *float64        `json:"temperature,omitempty"`
	TopP                *float64        `json:"top_p,omitempty"`
	Stop                []string        `json:"stop,omitempty"`
	ResponseFormat      any             `json:"response_format,omitempty"`
	ReasoningEffort     string          `json:"reasoning_effort,omitempty"`
	Stream              bool            `json:"stream,omitempty"`
	StreamOptions       any             `json:"stream_options,omitempty"`
	User                string          `json:"user,omitempty"`
	N                   int64           `json:"n,omitempty"`
	PresencePenalty     *float64        `json:"presence_penalty,omitempty"`
	FrequencyPenalty    *float64        `json:"frequency_penalty,omitempty"`
	Seed                *int64          `json:"seed,omitempty"`
	Logprobs            bool            `json:"logprobs,omitempty"`
	TopLogprobs         int64           `json:"top_logprobs,omitempty"`
	LogitBias           json.RawMessage `json:"logit_bias,omitempty"`
}

// oaiOutMessage is one message BuildRequest writes. Content is a string, an array of parts, or nil (null: an
// assistant message of tool calls only).
type oaiOutMessage struct {
	Role       string        `json:"role"`
	Content    any           `json:"content"`
	ToolCalls  []oaiToolCall `json:"tool_calls,omitempty"`
	ToolCallID string        `json:"tool_call_id,omitempty"`
}

// oaiOutPart is one content part BuildRequest writes: text or image_url.
type oaiOutPart struct {
	Type     string       `json:"type"`
	Text     *string      `json:"text,omitempty"`
	ImageURL *oaiImageURL `json:"image_url,omitempty"`
}

// oaiOutTool is one function tool BuildRequest writes.
type oaiOutTool struct {
	Type     string      `json:"type"`
	Function oaiFunction `json:"function"`
}

// BuildRequest implements Codec: canonical → a chat completions body. The output limit is sent as
// max_completion_tokens (max_tokens is deprecated and refused by reasoning models); a stream always asks for
// the usage chunk. Thinking parts in history are dropped (chat completions has no input form for them);
// images in tool results, which tool messages cannot hold, follow the tool messages in a user message. top_k
// has no chat completions form: it is dropped and named in r.Dropped.
func (oaiCodec) BuildRequest(r *Request) ([]byte, error) {
	if r.TopK != nil {
		r.Dropped = append(r.Dropped, "top_k")
	}
	w := oaiOutRequest{Model: r.Model, MaxCompletionTokens: r.MaxTokens, Temperature: r.Temperature, TopP: r.TopP,
		Stop: r.Stop, Stream: r.Stream, User: r.User, PresencePenalty: r.PresencePenalty,
		FrequencyPenalty: r.FrequencyPenalty, Seed: r.Seed, Logprobs: r.Logprobs, TopLogprobs: r.TopLogprobs,
		LogitBias: r.LogitBias}
	if r.N > 1 {
		w.N = r.N
	}
	if r.Stream {
		w.StreamOptions = map[string]bool{"include_usage": true}
	}
	if rs := r.Reasoning; rs != nil && rs.Enabled {
		w.ReasoningEffort = rs.Effort
		if w.ReasoningEffort == "" && rs.Budget > 0 {
			w.ReasoningEffort = BudgetEffort(rs.Budget)
		}
	}
	if f := r.ResponseFormat; f != nil {
		w.ResponseFormat = oaiBuildFormat(f)
	}
	for _, t := range r.Tools {
		f := oaiFunction{Name: t.Name, Description: t.Description}
		if len(t.Parameters) > 0 && string(t.Parameters) != "null" {
			f.Parameters = t.Parameters
		}
		if t.Strict {
			f.Strict = &t.Strict
		}
		w.Tools = append(w.Tools, oaiOutTool{Type: "function", Function: f})
	}
	if len(w.Tools) > 0 { // OpenAI refuses parallel_tool_calls without tools
		w.ParallelToolCalls = r.ParallelToolCalls
	}
	if tc := r.ToolChoice; tc != nil {
		switch tc.Mode {
		case ToolNamed:
			w.ToolChoice = map[string]any{"type": "function", "function": map[string]string{"name": tc.Name}}
		case ToolAuto, ToolNone, ToolRequired:
			w.ToolChoice = string(tc.Mode)
		}
	}
	var err error
	if w.Messages, err = oaiBuildMessages(r); err != nil {
		return nil, err
	}
	return json.Marshal(w)
}

// oaiBuildFormat is response_format for a canonical ResponseFormat (a json_schema needs a name: "response").
func oaiBuildFormat(f *ResponseFormat) any {
	if f.Type != "json_schema" {
		return map[string]string{"type": f.Type}
	}
	js := map[string]any{"name": f.Name}
	if f.Name == "" {
		js["name"] = "response"
	}
	if len(f.Schema) > 0 {
		js["schema"] = f.Schema
	}
	if f.Strict {
		js["strict"] = true
	}
	return map[string]any{"type": "json_schema", "json_schema": js}
}

// oaiBuildMessages writes System as one system message and the conversation, with tool results as tool
// messages. Calls without an id get one ("call_<message>_<part>"), and results without a call id answer the
// latest call of their tool name.
func oaiBuildMessages(r *Request) ([]oaiOutMessage, error) {
	out := []oaiOutMessage{}
	if len(r.System) > 0 {
		texts := make([]string, 0, len(r.System))
		for j, p := range r.System {
			if p.Kind != PartText {
				return nil, &Unsupported{Field: fmt.Sprintf("system[%d]", j), Target: adaptor.OpenAI, Why: "system instructions can only be text"}
			}
			texts = append(texts, p.Text)
		}
		out = append(out, oaiOutMessage{Role: "system", Content: strings.Join(texts, "\n\n")})
	}
	byName := map[string]string{}
	for i, m := range r.Messages {
		var err error
		if m.Role == RoleAssistant {
			var msg oaiOutMessage
			if msg, err = oaiBuildAssistant(m, i, byName); err == nil {
				out = append(out, msg)
			}
		} else {
			out, err = oaiBuildUser(out, m, i, byName)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// oaiBuildAssistant writes an assistant message: text content (a string, or text parts when there are
// several), tool calls; thinking is dropped.
func oaiBuildAssistant(m Message, i int, byName map[string]string) (oaiOutMessage, error) {
	msg := oaiOutMessage{Role: "assistant"}
	var texts []oaiOutPart
	for j, p := range m.Parts {
		switch p.Kind {
		case PartText:
			texts = append(texts, oaiOutPart{Type: "text", Text: &p.Text})
		case PartThinking, PartRedactedThinking:
		case PartToolCall:
			tc := p.ToolCall
			if tc == nil {
				continue
			}
			id := tc.ID
			if id == "" {
				id = "call_" + strconv.Itoa(i) + "_" + strconv.Itoa(j)
			}
			byName[tc.Name] = id
			args := tc.Args
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			msg.ToolCalls = append(msg.ToolCalls, oaiToolCall{ID: id, Type: "function", Function: oaiCall{Name: tc.Name, Arguments: args}})
		default:
			return msg, &Unsupported{Field: fmt.Sprintf("messages[%d].content[%d]", i, j), Target: adaptor.OpenAI,
				Why: fmt.Sprintf("assistant messages cannot hold %s parts", p.Kind)}
		}
	}
	switch {
	case len(texts) == 1:
		msg.Content = *texts[0].Text
	case len(texts) > 1:
		msg.Content = texts
	case len(msg.ToolCalls) == 0:
		msg.Content = ""
	}
	return msg, nil
}

// oaiBuildUser appends a user message: its tool results first, as tool messages (OpenAI wants them right
// after the assistant's calls), then the rest (text, images, and any images the results held) as one user
// message — its content a string when it is a single text.
func oaiBuildUser(out []oaiOutMessage, m Message, i int, byName map[string]string) ([]oaiOutMessage, error) {
	var rest []oaiOutPart
	var restParts int
	add := func(p Part, field string) error {
		switch p.Kind {
		case PartText:
			rest = append(rest, oaiOutPart{Type: "text", Text: &p.Text})
		case PartImage:
			if p.Image == nil {
				return nil
			}
			rest = append(rest, oaiOutPart{Type: "image_url", ImageURL: oaiImageOut(p.Image)})
		default:
			return &Unsupported{Field: field, Target: adaptor.OpenAI, Why: fmt.Sprintf("user messages cannot hold %s parts", p.Kind)}
		}
		restParts++
		return nil
	}
	for j, p := range m.Parts {
		field := fmt.Sprintf("messages[%d].content[%d]", i, j)
		switch p.Kind {
		case PartToolResult:
			tr := p.ToolResult
			if tr == nil {
				continue
			}
			id := tr.CallID
			if id == "" {
				id = byName[tr.Name]
			}
			var texts []oaiOutPart
			for k, c := range tr.Content {
				switch c.Kind {
				case PartText:
					texts = append(texts, oaiOutPart{Type: "text", Text: &c.Text})
				case PartImage:
					if err := add(c, fmt.Sprintf("%s.content[%d]", field, k)); err != nil {
						return nil, err
					}
				default:
					return nil, &Unsupported{Field: fmt.Sprintf("%s.content[%d]", field, k), Target: adaptor.OpenAI,
						Why: fmt.Sprintf("tool results cannot hold %s parts", c.Kind)}
				}
			}
			var content any = ""
			if len(texts) == 1 {
				content = *texts[0].Text
			} else if len(texts) > 1 {
				content = texts
			}
			out = append(out, oaiOutMessage{Role: "tool", Content: content, ToolCallID: id})
		case PartThinking, PartRedactedThinking:
		default:
			if err := add(p, field); err != nil {
				return nil, err
			}
		}
	}
	switch {
	case restParts == 1 && rest[0].Type == "text":
		out = append(out, oaiOutMessage{Role: "user", Content: *rest[0].Text})
	case restParts > 0:
		out = append(out, oaiOutMessage{Role: "user", Content: rest})
	case len(m.Parts) == 0:
		out = append(out, oaiOutMessage{Role: "user", Content: ""})
	}
	return out, nil
}

// oaiImageOut is a canonical image as an image_url: its URL, or a data: URL of its base64 data.
func oaiImageOut(img *Image) *oaiImageURL {
	u := &oaiImageURL{URL: img.URL, Detail: img.Detail}
	if img.Data != "" {
		mt := img.MediaType
		if mt == "" {
			mt = "image/png"
		}
		u.URL = "data:" + mt + ";base64," + img.Data
	}
	return u
}

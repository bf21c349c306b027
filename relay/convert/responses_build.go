package convert

import (
	"encoding/json"
	"strings"

	"tollgate/relay/adaptor"
)

// rspRequestOut is a Responses request body as written for an upstream.
type rspRequestOut struct {
	Model             string           `json:"model"`
	Instructions      string           `json:"instructions,omitempty"`
	Input             []any            `json:"input"`
	Tools             []rspFuncToolOut `json:"tools,omitempty"`
	ToolChoice        any              `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool            `json:"parallel_tool_calls,omitempty"`
	MaxOutputTokens   int64            `json:"max_output_tokens,omitempty"`
	Temperature       *float64         `json:"temperature,omitempty"`
	TopP              *float64         `json:"top_p,omitempty"`
	Text              *rspTextOut      `json:"text,omitempty"`
	Reasoning         *rspReasoningOut `json:"reasoning,omitempty"`
	Include           []string         `json:"include,omitempty"`
	Store             bool             `json:"store"`
	Stream            bool             `json:"stream,omitempty"`
	User              string           `json:"user,omitempty"`
}

// rspFuncToolOut is a function tool, flat as Responses declares it. Strict is always written: Responses
// makes function tools strict unless told otherwise.
type rspFuncToolOut struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

// rspTextOut is the text options: the output format.
type rspTextOut struct {
	Format rspFormatOut `json:"format"`
}

// rspFormatOut is text.format.
type rspFormatOut struct {
	Type   string          `json:"type"`
	Name   string          `json:"name,omitempty"`
	Schema json.RawMessage `json:"schema,omitempty"`
	Strict *bool           `json:"strict,omitempty"`
}

// rspReasoningOut is the reasoning options.
type rspReasoningOut struct {
	Effort  string `json:"effort,omitempty"`
	Summary string `json:"summary,omitempty"`
}

// rspMessageOut is an input message item.
type rspMessageOut struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	Content []any  `json:"content"`
}

// rspTextPartOut is an input_text or output_text part.
type rspTextPartOut struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// rspImagePartOut is an input_image part.
type rspImagePartOut struct {
	Type     string `json:"type"`
	ImageURL string `json:"image_url"`
	Detail   string `json:"detail"`
}

// rspCallOut is a function_call input item.
type rspCallOut struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// rspCallOutputOut is a function_call_output input item; Output is a string or an array of parts.
type rspCallOutputOut struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output any    `json:"output"`
}

// rspReasoningItemOut is a reasoning input item carrying a Responses upstream's encrypted reasoning back.
type rspReasoningItemOut struct {
	Type             string           `json:"type"`
	Summary          []rspTextPartOut `json:"summary"`
	EncryptedContent string           `json:"encrypted_content"`
}

// BuildRequest implements Codec: a canonical request as a Responses body. Thinking parts go back only when
// they came from a Responses upstream (their Signature is its encrypted_content, see rspSigPrefix): another
// protocol's signature means nothing to OpenAI, so those parts are dropped from the history.
func (rspCodec) BuildRequest(r *Request) ([]byte, error) {
	if err := rspRefuseBuild(r); err != nil {
		return nil, err
	}
	out := rspRequestOut{Model: r.Model, ParallelToolCalls: r.ParallelToolCalls, MaxOutputTokens: r.MaxTokens,
		Temperature: r.Temperature, TopP: r.TopP, Stream: r.Stream, User: r.User, Input: []any{}}
	var sys []string
	for _, p := range r.System {
		if p.Kind == PartText && p.Text != "" {
			sys = append(sys, p.Text)
		}
	}
	out.Instructions = strings.Join(sys, "\n\n")
	for _, m := range r.Messages {
		out.Input = rspBuildMessage(out.Input, m)
	}
	for _, t := range r.Tools {
		params := t.Parameters
		if !rspPresent(params) || string(params) == "{}" {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out.Tools = append(out.Tools, rspFuncToolOut{Type: "function", Name: t.Name, Description: t.Description, Parameters: params, Strict: t.Strict})
	}
	if tc := r.ToolChoice; tc != nil {
		switch tc.Mode {
		case ToolNamed:
			out.ToolChoice = rspToolChoiceIn{Type: "function", Name: tc.Name}
		case ToolAuto, ToolNone, ToolRequired:
			out.ToolChoice = string(tc.Mode)
		}
	}
	if rf := r.ResponseFormat; rf != nil {
		f := rspFormatOut{Type: rf.Type}
		if rf.Type == "json_schema" {
			f.Name, f.Schema = rf.Name, rf.Schema
			if f.Name == "" {
				f.Name = "response"
			}
			if !rspPresent(f.Schema) {
				f.Schema = json.RawMessage(`{"type":"object"}`)
			}
			strict := rf.Strict
			f.Strict = &strict
		}
		out.Text = &rspTextOut{Format: f}
	}
	if rs := r.Reasoning; rs != nil && rs.Enabled {
		ro := &rspReasoningOut{Effort: rs.Effort}
		if ro.Effort == "" && rs.Budget > 0 {
			ro.Effort = BudgetEffort(rs.Budget)
		}
		if rs.Summary {
			ro.Summary = "auto"
		}
		if ro.Effort != "" || ro.Summary != "" {
			out.Reasoning = ro
		}
		// The gateway stores nothing, so reasoning can only come back encrypted.
		out.Include = []string{"reasoning.encrypted_content"}
	}
	return json.Marshal(out)
}

// rspRefuseBuild refuses canonical fields a Responses upstream cannot express.
func rspRefuseBuild(r *Request) error {
	refuse := func(field, why string) error {
		return &Unsupported{Field: field, Target: adaptor.ResponsesAPI, Why: why}
	}
	switch {
	case r.N > 1:
		return refuse("n", "Responses generates one answer per call")
	case r.TopK != nil:
		return refuse("top_k", "Responses has no top-k sampling")
	case len(r.Stop) > 0:
		return refuse("stop", "Responses has no stop sequences")
	case r.PresencePenalty != nil && *r.PresencePenalty != 0:
		return refuse("presence_penalty", "Responses has no presence penalty")
	case r.FrequencyPenalty != nil && *r.FrequencyPenalty != 0:
		return refuse("frequency_penalty", "Responses has no frequency penalty")
	case r.Logprobs || r.TopLogprobs > 0:
		return refuse("logprobs", "translated answers carry no log probabilities")
	case rspPresent(r.LogitBias) && string(r.LogitBias) != "{}":
		return refuse("logit_bias", "Responses has no logit bias")
	}
	return nil
}

// rspBuildMessage appends one canonical message's input items: content parts gather into message items,
// tool calls and results are items of their own.
func rspBuildMessage(items []any, m Message) []any {
	role, textType := "user", "input_text"
	if m.Role == RoleAssistant {
		role, textType = "assistant", "output_text"
	}
	var cur *rspMessageOut
	flush := func() {
		if cur != nil {
			items = append(items, *cur)
			cur = nil
		}
	}
	content := func(c any) {
		if cur == nil {
			cur = &rspMessageOut{Type: "message", Role: role}
		}
		cur.Content = append(cur.Content, c)
	}
	for _, p := range m.Parts {
		switch p.Kind {
		case PartText:
			content(rspTextPartOut{Type: textType, Text: p.Text})
		case PartImage:
			if p.Image != nil {
				content(rspImageOut(p.Image))
			}
		case PartToolCall:
			if p.ToolCall != nil {
				flush()
				args := p.ToolCall.Args
				if args == "" {
					args = "{}"
				}
				items = append(items, rspCallOut{Type: "function_call", CallID: p.ToolCall.ID, Name: p.ToolCall.Name, Arguments: args})
			}
		case PartToolResult:
			if p.ToolResult != nil {
				flush()
				items = append(items, rspCallOutputOut{Type: "function_call_output", CallID: p.ToolResult.CallID, Output: rspResultOutput(p.ToolResult.Content)})
			}
		case PartThinking:
			enc, ok := strings.CutPrefix(p.Signature, rspSigPrefix)
			if !ok || enc == "" {
				continue // not a Responses upstream's reasoning: it cannot go back to one
			}
			flush()
			ri := rspReasoningItemOut{Type: "reasoning", Summary: []rspTextPartOut{}, EncryptedContent: enc}
			if p.Text != "" {
				ri.Summary = append(ri.Summary, rspTextPartOut{Type: "summary_text", Text: p.Text})
			}
			items = append(items, ri)
		}
	}
	flush()
	return items
}

// rspImageOut is an image as an input_image part.
func rspImageOut(img *Image) rspImagePartOut {
	url := img.URL
	if url == "" {
		url = "data:" + img.MediaType + ";base64," + img.Data
	}
	detail := img.Detail
	if detail == "" {
		detail = "auto"
	}
	return rspImagePartOut{Type: "input_image", ImageURL: url, Detail: detail}
}

// rspResultOutput is a tool result's content as a function_call_output's output: a string when it is only
// text, else an array of input_text / input_image parts.
func rspResultOutput(content []Part) any {
	texts := make([]string, 0, len(content))
	for _, p := range content {
		if p.Kind == PartImage && p.Image != nil {
			parts := make([]any, 0, len(content))
			for _, q := range content {
				switch {
				case q.Kind == PartText:
					parts = append(parts, rspTextPartOut{Type: "input_text", Text: q.Text})
				case q.Kind == PartImage && q.Image != nil:
					parts = append(parts, rspImageOut(q.Image))
				}
			}
			return parts
		}
		if p.Kind == PartText {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

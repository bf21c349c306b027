package convert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"tollgate/relay/adaptor"
)

// antUnsupported is a canonical field an Anthropic request cannot express.
func antUnsupported(field, why string) error {
	return &Unsupported{Field: field, Target: adaptor.Anthropic, Why: why}
}

// antRefuse checks the canonical fields Messages has no words for; defaults pass.
func antRefuse(r *Request) error {
	switch {
	case r.N > 1:
		return antUnsupported("n", "Anthropic answers with one message per request")
	case r.Logprobs || r.TopLogprobs > 0:
		return antUnsupported("logprobs", "Anthropic does not return token log probabilities")
	case len(r.LogitBias) > 0 && string(bytes.TrimSpace(r.LogitBias)) != "{}" && !antIsNull(r.LogitBias):
		return antUnsupported("logit_bias", "Anthropic has no token biasing")
	case r.Seed != nil:
		return antUnsupported("seed", "Anthropic has no sampling seed")
	case r.PresencePenalty != nil && *r.PresencePenalty != 0:
		return antUnsupported("presence_penalty", "Anthropic has no presence penalty")
	case r.FrequencyPenalty != nil && *r.FrequencyPenalty != 0:
		return antUnsupported("frequency_penalty", "Anthropic has no frequency penalty")
	case r.Temperature != nil && (*r.Temperature < 0 || *r.Temperature > 1):
		return antUnsupported("temperature", "Anthropic takes a temperature from 0 to 1")
	}
	if f := r.ResponseFormat; f != nil {
		switch f.Type {
		case "json_object":
			return antUnsupported("response_format", "Anthropic's JSON output needs a schema (json_schema), not bare json_object")
		case "json_schema":
			if antIsNull(f.Schema) {
				return antUnsupported("response_format", "json_schema without a schema")
			}
		}
	}
	return nil
}

// BuildRequest implements Codec: a canonical request as a Messages body.
func (antCodec) BuildRequest(r *Request) ([]byte, error) {
	if err := antRefuse(r); err != nil {
		return nil, err
	}
	out := antRequestOut{Model: r.Model, MaxTokens: r.MaxTokens, Temperature: r.Temperature, TopP: r.TopP, TopK: r.TopK,
		StopSequences: r.Stop, Stream: r.Stream}
	if r.User != "" {
		out.Metadata = &antMetadata{UserID: antStr(r.User)}
	}
	for i, p := range r.System {
		if p.Kind != PartText && p.Kind != "" {
			return nil, antUnsupported(fmt.Sprintf("system[%d]", i), "Anthropic system prompts are text only")
		}
		if p.Text != "" {
			out.System = append(out.System, antBlock{Type: "text", Text: antStr(p.Text), CacheControl: antCache(p.CacheControl)})
		}
	}
	var err error
	if out.Messages, err = antBuildMessages(r.Messages); err != nil {
		return nil, err
	}
	for _, t := range r.Tools {
		schema := antCache(t.Parameters)
		if s := bytes.TrimSpace(schema); len(s) == 0 || string(s) == "{}" {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out.Tools = append(out.Tools, antTool{Name: t.Name, Description: t.Description, InputSchema: schema, Strict: t.Strict})
	}
	out.ToolChoice = antBuildToolChoice(r)
	if err := antBuildThinking(r, &out); err != nil {
		return nil, err
	}
	if f := r.ResponseFormat; f != nil && f.Type == "json_schema" {
		out.OutputConfig = &antOutputConfig{Format: &antOutputFormat{Type: "json_schema", Schema: f.Schema}}
	}
	return json.Marshal(out)
}

// antBuildToolChoice is tool_choice for r (nil: Anthropic's default, auto). It is only written with tools.
func antBuildToolChoice(r *Request) *antToolChoice {
	if len(r.Tools) == 0 {
		return nil
	}
	serial := r.ParallelToolCalls != nil && !*r.ParallelToolCalls
	tc := &antToolChoice{Type: "auto", DisableParallelToolUse: serial}
	if r.ToolChoice != nil {
		switch r.ToolChoice.Mode {
		case ToolNone:
			return &antToolChoice{Type: "none"}
		case ToolRequired:
			tc.Type = "any"
		case ToolNamed:
			tc.Type, tc.Name = "tool", r.ToolChoice.Name
		}
	} else if !serial {
		return nil
	}
	return tc
}

// antBuildThinking writes thinking and max_tokens: a budget (from Budget, or EffortBudget of the effort) of
// at least 1024 and below max_tokens. With no max_tokens given, max_tokens is 8192, or the budget plus
// antThinkingRoom when thinking is on; a max_tokens given too small to think within is refused.
func antBuildThinking(r *Request, out *antRequestOut) error {
	rs := r.Reasoning
	on := rs != nil && rs.Enabled && rs.Effort != "none"
	if rs != nil && !on {
		out.Thinking = &antThinking{Type: "disabled"}
	}
	if !on {
		if out.MaxTokens <= 0 {
			out.MaxTokens = antDefaultMaxTokens
		}
		return nil
	}
	budget := rs.Budget
	if budget <= 0 {
		budget = EffortBudget(rs.Effort)
	}
	budget = max(budget, antMinBudget)
	switch {
	case out.MaxTokens <= 0:
		out.MaxTokens = max(antDefaultMaxTokens, budget+antThinkingRoom)
	case out.MaxTokens <= antMinBudget:
		return antUnsupported("max_tokens", fmt.Sprintf("Anthropic thinking needs max_tokens above its minimum budget of %d tokens", antMinBudget))
	case budget >= out.MaxTokens:
		budget = out.MaxTokens - 1
	}
	out.Thinking = &antThinking{Type: "enabled", BudgetTokens: budget}
	return nil
}

// antBuildMessages writes the conversation: empty text and unsigned thinking (which Anthropic would reject)
// dropped, consecutive same-role messages merged (Anthropic requires alternation), tool_result blocks first
// in each user message.
func antBuildMessages(msgs []Message) ([]antMessage, error) {
	out := make([]antMessage, 0, len(msgs))
	for i, m := range msgs {
		role := "user"
		if m.Role == RoleAssistant {
			role = "assistant"
		}
		var blocks []antBlock
		for j, p := range m.Parts {
			b, ok, err := antBuildPart(p, i, j)
			if err != nil {
				return nil, err
			}
			if ok {
				blocks = append(blocks, b)
			}
		}
		if len(blocks) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
		} else {
			out = append(out, antMessage{Role: role, Content: blocks})
		}
	}
	for _, m := range out {
		if m.Role == "user" {
			sort.SliceStable(m.Content, func(a, b int) bool {
				return m.Content[a].Type == "tool_result" && m.Content[b].Type != "tool_result"
			})
		}
	}
	return out, nil
}

// antBuildPart writes one canonical part of messages[i] as a block (ok false: nothing to send).
func antBuildPart(p Part, i, j int) (antBlock, bool, error) {
	cache := antCache(p.CacheControl)
	switch p.Kind {
	case PartText, "":
		if p.Text == "" {
			return antBlock{}, false, nil
		}
		return antBlock{Type: "text", Text: antStr(p.Text), CacheControl: cache}, true, nil
	case PartImage:
		if p.Image == nil {
			return antBlock{}, false, nil
		}
		src, err := antBuildImage(p.Image, fmt.Sprintf("messages[%d].content[%d]", i, j))
		return antBlock{Type: "image", Source: src, CacheControl: cache}, err == nil, err
	case PartToolCall:
		if p.ToolCall == nil {
			return antBlock{}, false, nil
		}
		input, ok := antArgs(p.ToolCall.Args)
		if !ok {
			return antBlock{}, false, antUnsupported(fmt.Sprintf("messages[%d].tool_calls[%d].arguments", i, j),
				"Anthropic takes tool arguments as a JSON object")
		}
		return antBlock{Type: "tool_use", ID: antToolID(p.ToolCall.ID), Name: p.ToolCall.Name, Input: input, CacheControl: cache}, true, nil
	case PartToolResult:
		if p.ToolResult == nil {
			return antBlock{}, false, nil
		}
		b := antBlock{Type: "tool_result", ToolUseID: antToolID(p.ToolResult.CallID), IsError: p.ToolResult.IsError, CacheControl: cache}
		var content []antBlock
		for k, c := range p.ToolResult.Content {
			cb, ok, err := antBuildPart(Part{Kind: c.Kind, Text: c.Text, Image: c.Image}, i, j)
			if err != nil {
				return antBlock{}, false, err
			}
			if ok && (cb.Type == "text" || cb.Type == "image") {
				content = append(content, cb)
			} else if ok {
				return antBlock{}, false, antUnsupported(fmt.Sprintf("messages[%d].content[%d].content[%d]", i, j, k),
					"Anthropic tool results hold text and images")
			}
		}
		if len(content) > 0 {
			b.Content, _ = json.Marshal(content)
		}
		return b, true, nil
	case PartThinking:
		if p.Signature == "" { // Anthropic rejects thinking it did not sign; it reads none from earlier turns anyway
			return antBlock{}, false, nil
		}
		return antBlock{Type: "thinking", Thinking: antStr(p.Text), Signature: antStr(p.Signature)}, true, nil
	case PartRedactedThinking:
		if p.Data == "" {
			return antBlock{}, false, nil
		}
		return antBlock{Type: "redacted_thinking", Data: p.Data}, true, nil
	}
	return antBlock{}, false, antUnsupported(fmt.Sprintf("messages[%d].content[%d]", i, j), fmt.Sprintf("Anthropic has no %q content", p.Kind))
}

// antArgs is canonical tool arguments as the input object Anthropic carries ("" and null are {}).
func antArgs(args string) (json.RawMessage, bool) {
	if t := strings.TrimSpace(args); t == "null" {
		return json.RawMessage(`{}`), true
	}
	return argsObject(args)
}

// antBuildImage writes an image source: base64 (a data: URL is split into its media type and data) or a URL.
func antBuildImage(img *Image, path string) (*antSource, error) {
	if img.Data != "" {
		mt := img.MediaType
		if mt == "" {
			mt = antSniffImage(img.Data)
		}
		return &antSource{Type: "base64", MediaType: mt, Data: img.Data}, nil
	}
	if rest, ok := strings.CutPrefix(img.URL, "data:"); ok {
		meta, data, found := strings.Cut(rest, ",")
		mt, isB64 := strings.CutSuffix(meta, ";base64")
		if !found || !isB64 {
			return nil, antUnsupported(path, "Anthropic takes images as base64 data or an http(s) URL")
		}
		if mt == "" {
			mt = antSniffImage(data)
		}
		return &antSource{Type: "base64", MediaType: mt, Data: data}, nil
	}
	if img.URL == "" {
		return nil, antUnsupported(path, "an image with neither data nor a URL")
	}
	return &antSource{Type: "url", URL: img.URL}, nil
}

// antSniffImage guesses the media type of base64 image data from its first bytes (png when unknown).
func antSniffImage(b64 string) string {
	switch {
	case strings.HasPrefix(b64, "/9j/"):
		return "image/jpeg"
	case strings.HasPrefix(b64, "R0lG"):
		return "image/gif"
	case strings.HasPrefix(b64, "UklG"):
		return "image/webp"
	}
	return "image/png"
}

// antToolID is a tool call id as Anthropic accepts it (^[a-zA-Z0-9_-]+$): other characters become _, so a
// call and its result still pair; an empty id is toolu_none.
func antToolID(id string) string {
	if id == "" {
		return "toolu_none"
	}
	clean := true
	for i := 0; i < len(id); i++ {
		if !antIDByte(id[i]) {
			clean = false
			break
		}
	}
	if clean {
		return id
	}
	b := []byte(id)
	for i := range b {
		if !antIDByte(b[i]) {
			b[i] = '_'
		}
	}
	return string(b)
}

// antIDByte says whether c may appear in an Anthropic tool id.
func antIDByte(c byte) bool {
	return c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

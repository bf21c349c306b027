package convert

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"tollgate/relay/adaptor"
)

// antCodec is the Anthropic Messages codec (/v1/messages): requests here, answers and errors in
// anthropic_answer.go, streams in anthropic_stream.go.
type antCodec struct{}

func init() { register(antCodec{}) }

// Protocol implements Codec.
func (antCodec) Protocol() adaptor.Protocol { return adaptor.Anthropic }

// antDefaultMaxTokens is the max_tokens a built request carries when the caller gave none (Anthropic requires
// one); with thinking on it is raised to leave antThinkingRoom above the budget.
const antDefaultMaxTokens = 8192

// antThinkingRoom is what a built request leaves for the answer above the thinking budget when the caller
// gave no max_tokens. It keeps the "high" effort budget (24576) under the 32000-token output cap of the
// smallest-capped thinking models.
const antThinkingRoom = 4096

// antMinBudget is the smallest thinking budget Anthropic accepts.
const antMinBudget = 1024

// antBlock is one Messages content block, read from callers and upstreams and written to both; which fields
// are set depends on Type. Pointer fields are the ones Anthropic requires even when empty.
type antBlock struct {
	Type         string          `json:"type"`
	Text         *string         `json:"text,omitempty"`
	Source       *antSource      `json:"source,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Content      json.RawMessage `json:"content,omitempty"` // tool_result: a string or text and image blocks
	IsError      bool            `json:"is_error,omitempty"`
	Thinking     *string         `json:"thinking,omitempty"`
	Signature    *string         `json:"signature,omitempty"`
	Data         string          `json:"data,omitempty"` // redacted_thinking
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

// antSource is an image block's source: base64 data with its media type, a URL, or a Files API id.
type antSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
	FileID    string `json:"file_id,omitempty"`
}

// antMessage is one turn of a built request; content is always an array of blocks.
type antMessage struct {
	Role    string     `json:"role"`
	Content []antBlock `json:"content"`
}

// antTool is a client tool definition (server tools carry a Type such as web_search_20250305).
type antTool struct {
	Type         string          `json:"type,omitempty"`
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema,omitempty"`
	Strict       bool            `json:"strict,omitempty"`
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

// antToolChoice is tool_choice: auto, any, tool (Name) or none.
type antToolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitempty"`
}

// antThinking is the thinking parameter: enabled with a budget, disabled, or adaptive (read only).
type antThinking struct {
	Type         string `json:"type"`
	BudgetTokens int64  `json:"budget_tokens,omitempty"`
}

// antOutputConfig is output_config: the effort (read only) and the structured-output format.
type antOutputConfig struct {
	Effort string           `json:"effort,omitempty"`
	Format *antOutputFormat `json:"format,omitempty"`
}

// antOutputFormat is a structured-output format: {"type":"json_schema","schema":{...}}.
type antOutputFormat struct {
	Type   string          `json:"type"`
	Schema json.RawMessage `json:"schema,omitempty"`
}

// antMetadata is the request metadata; only user_id exists.
type antMetadata struct {
	UserID *string `json:"user_id,omitempty"`
}

// antRequestIn is a Messages request as a client writes it; polymorphic fields stay raw until read.
type antRequestIn struct {
	Model         string            `json:"model"`
	System        json.RawMessage   `json:"system"`
	Messages      []json.RawMessage `json:"messages"`
	Tools         []json.RawMessage `json:"tools"`
	ToolChoice    *antToolChoice    `json:"tool_choice"`
	MaxTokens     int64             `json:"max_tokens"`
	Temperature   *float64          `json:"temperature"`
	TopP          *float64          `json:"top_p"`
	TopK          *int64            `json:"top_k"`
	StopSequences []string          `json:"stop_sequences"`
	Stream        bool              `json:"stream"`
	Metadata      *antMetadata      `json:"metadata"`
	Thinking      *antThinking      `json:"thinking"`
	OutputConfig  *antOutputConfig  `json:"output_config"`
	OutputFormat  *antOutputFormat  `json:"output_format"` // the structured-outputs beta's name for output_config.format
	MCPServers    []json.RawMessage `json:"mcp_servers"`
}

// antRequestOut is a Messages request as BuildRequest writes it.
type antRequestOut struct {
	Model         string           `json:"model"`
	MaxTokens     int64            `json:"max_tokens"`
	System        []antBlock       `json:"system,omitempty"`
	Messages      []antMessage     `json:"messages"`
	Tools         []antTool        `json:"tools,omitempty"`
	ToolChoice    *antToolChoice   `json:"tool_choice,omitempty"`
	Temperature   *float64         `json:"temperature,omitempty"`
	TopP          *float64         `json:"top_p,omitempty"`
	TopK          *int64           `json:"top_k,omitempty"`
	StopSequences []string         `json:"stop_sequences,omitempty"`
	Stream        bool             `json:"stream,omitempty"`
	Metadata      *antMetadata     `json:"metadata,omitempty"`
	Thinking      *antThinking     `json:"thinking,omitempty"`
	OutputConfig  *antOutputConfig `json:"output_config,omitempty"`
}

// antStr is a pointer to s, for the fields Anthropic requires even when empty.
func antStr(s string) *string { return &s }

// antDeref is *p, or "" for nil.
func antDeref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// antIsNull says whether a raw JSON value is absent or null.
func antIsNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// antCache is a block's cache_control as canonical keeps it (nil when absent or null).
func antCache(raw json.RawMessage) json.RawMessage {
	if antIsNull(raw) {
		return nil
	}
	return raw
}

// antInvalid turns a decoding error of the value at path into *Invalid naming the field.
func antInvalid(path string, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		f := path
		if te.Field != "" {
			if f != "" {
				f += "."
			}
			f += te.Field
		}
		if f == "" {
			f = "body"
		}
		return &Invalid{Field: f, Why: "wrong type: got a JSON " + te.Value}
	}
	if path == "" {
		path = "body"
	}
	return &Invalid{Field: path, Why: "not valid JSON: " + err.Error()}
}

// antUnsupportedIn is a caller's field the canonical form cannot carry to another protocol. The target is
// not known while parsing; Target says Anthropic, and Why says what is missing.
func antUnsupportedIn(field, why string) error {
	return &Unsupported{Field: field, Target: adaptor.Anthropic, Why: why}
}

// ParseRequest implements Codec: a Messages request body to canonical form.
func (antCodec) ParseRequest(body []byte) (*Request, error) {
	var in antRequestIn
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, antInvalid("", err)
	}
	if len(in.Messages) == 0 {
		return nil, &Invalid{Field: "messages", Why: "at least one message is required"}
	}
	if len(in.MCPServers) > 0 {
		return nil, antUnsupportedIn("mcp_servers", "MCP servers run inside Anthropic's API; other protocols have no equivalent")
	}
	r := &Request{Model: in.Model, MaxTokens: in.MaxTokens, Temperature: in.Temperature, TopP: in.TopP, TopK: in.TopK,
		Stop: in.StopSequences, Stream: in.Stream}
	if in.Metadata != nil {
		r.User = antDeref(in.Metadata.UserID)
	}
	var err error
	if r.System, err = antParseSystem(in.System); err != nil {
		return nil, err
	}
	r.Messages = make([]Message, 0, len(in.Messages))
	for i, raw := range in.Messages {
		m, err := antParseMessage(raw, i)
		if err != nil {
			return nil, err
		}
		r.Messages = append(r.Messages, m)
	}
	if r.Tools, err = antParseTools(in.Tools); err != nil {
		return nil, err
	}
	if tc := in.ToolChoice; tc != nil {
		switch tc.Type {
		case "auto":
			r.ToolChoice = &ToolChoice{Mode: ToolAuto}
		case "any":
			r.ToolChoice = &ToolChoice{Mode: ToolRequired}
		case "none":
			r.ToolChoice = &ToolChoice{Mode: ToolNone}
		case "tool":
			if tc.Name == "" {
				return nil, &Invalid{Field: "tool_choice.name", Why: "required when tool_choice.type is tool"}
			}
			r.ToolChoice = &ToolChoice{Mode: ToolNamed, Name: tc.Name}
		default:
			return nil, &Invalid{Field: "tool_choice.type", Why: fmt.Sprintf("unknown tool choice %q", tc.Type)}
		}
		if tc.DisableParallelToolUse {
			f := false
			r.ParallelToolCalls = &f
		}
	}
	if r.Reasoning, err = antParseThinking(in.Thinking, in.OutputConfig); err != nil {
		return nil, err
	}
	format := in.OutputFormat
	field := "output_format"
	if in.OutputConfig != nil && in.OutputConfig.Format != nil {
		format, field = in.OutputConfig.Format, "output_config.format"
	}
	if format != nil {
		if format.Type != "json_schema" {
			return nil, &Invalid{Field: field + ".type", Why: fmt.Sprintf("unknown output format %q", format.Type)}
		}
		r.ResponseFormat = &ResponseFormat{Type: "json_schema", Schema: antCache(format.Schema), Strict: true}
	}
	return r, nil
}

// antParseSystem reads system: a string, or an array of text blocks (cache_control kept on the part).
func antParseSystem(raw json.RawMessage) ([]Part, error) {
	raw = bytes.TrimSpace(raw)
	if antIsNull(raw) {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, antInvalid("system", err)
		}
		if s == "" {
			return nil, nil
		}
		return []Part{{Kind: PartText, Text: s}}, nil
	}
	var blocks []antBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, antInvalid("system", err)
	}
	parts := make([]Part, 0, len(blocks))
	for i, b := range blocks {
		if b.Type != "text" {
			return nil, &Invalid{Field: fmt.Sprintf("system[%d].type", i), Why: "system blocks must be text"}
		}
		parts = append(parts, Part{Kind: PartText, Text: antDeref(b.Text), CacheControl: antCache(b.CacheControl)})
	}
	return parts, nil
}

// antParseMessage reads messages[i]: a role and string or block content.
func antParseMessage(raw json.RawMessage, i int) (Message, error) {
	path := fmt.Sprintf("messages[%d]", i)
	var m struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return Message{}, antInvalid(path, err)
	}
	var msg Message
	switch m.Role {
	case "user":
		msg.Role = RoleUser
	case "assistant":
		msg.Role = RoleAssistant
	default:
		return Message{}, &Invalid{Field: path + ".role", Why: fmt.Sprintf("role must be user or assistant, not %q", m.Role)}
	}
	if antIsNull(m.Content) {
		return Message{}, &Invalid{Field: path + ".content", Why: "required"}
	}
	var err error
	msg.Parts, err = antParseContent(m.Content, path+".content", false)
	return msg, err
}

// antParseContent reads content at path: a string (one text part) or an array of blocks. inResult: the
// content of a tool_result, which holds text and image blocks only.
func antParseContent(raw json.RawMessage, path string, inResult bool) ([]Part, error) {
	raw = bytes.TrimSpace(raw)
	if antIsNull(raw) {
		return nil, nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, antInvalid(path, err)
		}
		if inResult && s == "" {
			return nil, nil
		}
		return []Part{{Kind: PartText, Text: s}}, nil
	case '[':
	default:
		return nil, &Invalid{Field: path, Why: "must be a string or an array of content blocks"}
	}
	var blocks []json.RawMessage
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, antInvalid(path, err)
	}
	parts := make([]Part, 0, len(blocks))
	for j, b := range blocks {
		p, err := antParseBlock(b, fmt.Sprintf("%s[%d]", path, j), inResult)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// antParseBlock reads one content block at path.
func antParseBlock(raw json.RawMessage, path string, inResult bool) (Part, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return Part{}, antInvalid(path, err)
	}
	switch head.Type {
	case "":
		return Part{}, &Invalid{Field: path + ".type", Why: "required"}
	case "text", "image":
	case "tool_use", "tool_result", "thinking", "redacted_thinking":
		if inResult {
			return Part{}, antUnsupportedIn(path+".type", fmt.Sprintf("tool results carry only text and image blocks across protocols, not %q", head.Type))
		}
	default: // blocks of other shapes (document, search_result, server tool blocks...) are not read further
		where := "the relay translates text, image, tool and thinking blocks"
		if inResult {
			where = "tool results carry only text and image blocks across protocols"
		}
		return Part{}, antUnsupportedIn(path+".type", fmt.Sprintf("%s, not %q blocks", where, head.Type))
	}
	var b antBlock
	if err := json.Unmarshal(raw, &b); err != nil {
		return Part{}, antInvalid(path, err)
	}
	cache := antCache(b.CacheControl)
	switch b.Type {
	case "text":
		return Part{Kind: PartText, Text: antDeref(b.Text), CacheControl: cache}, nil
	case "image":
		img, err := antParseImage(b.Source, path)
		return Part{Kind: PartImage, Image: img, CacheControl: cache}, err
	case "tool_use":
		if b.ID == "" || b.Name == "" {
			return Part{}, &Invalid{Field: path, Why: "tool_use needs an id and a name"}
		}
		args := "{}"
		if in := bytes.TrimSpace(b.Input); !antIsNull(in) {
			if in[0] != '{' {
				return Part{}, &Invalid{Field: path + ".input", Why: "must be a JSON object"}
			}
			args = string(in)
		}
		return Part{Kind: PartToolCall, ToolCall: &ToolCall{ID: b.ID, Name: b.Name, Args: args}, CacheControl: cache}, nil
	case "tool_result":
		if b.ToolUseID == "" {
			return Part{}, &Invalid{Field: path + ".tool_use_id", Why: "required"}
		}
		content, err := antParseContent(b.Content, path+".content", true)
		if err != nil {
			return Part{}, err
		}
		return Part{Kind: PartToolResult, ToolResult: &ToolResult{CallID: b.ToolUseID, Content: content, IsError: b.IsError},
			CacheControl: cache}, nil
	case "thinking":
		return Part{Kind: PartThinking, Text: antDeref(b.Thinking), Signature: antDeref(b.Signature)}, nil
	}
	return Part{Kind: PartRedactedThinking, Data: b.Data}, nil // redacted_thinking, the one type left
}

// antParseImage reads an image block's source.
func antParseImage(s *antSource, path string) (*Image, error) {
	if s == nil {
		return nil, &Invalid{Field: path + ".source", Why: "required"}
	}
	switch s.Type {
	case "base64":
		if s.Data == "" {
			return nil, &Invalid{Field: path + ".source.data", Why: "required"}
		}
		return &Image{MediaType: s.MediaType, Data: s.Data}, nil
	case "url":
		if s.URL == "" {
			return nil, &Invalid{Field: path + ".source.url", Why: "required"}
		}
		return &Image{URL: s.URL}, nil
	case "file":
		return nil, antUnsupportedIn(path+".source.type", "files uploaded to Anthropic's Files API exist only there")
	}
	return nil, &Invalid{Field: path + ".source.type", Why: fmt.Sprintf("unknown image source %q", s.Type)}
}

// antParseTools reads tools: client tools become canonical Tools; server tools (a type other than custom)
// cannot be carried and are refused naming tools[i].type.
func antParseTools(raws []json.RawMessage) ([]Tool, error) {
	if len(raws) == 0 {
		return nil, nil
	}
	tools := make([]Tool, 0, len(raws))
	for i, raw := range raws {
		path := fmt.Sprintf("tools[%d]", i)
		var t antTool
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, antInvalid(path, err)
		}
		if t.Type != "" && t.Type != "custom" {
			return nil, antUnsupportedIn(path+".type", fmt.Sprintf("%q is an Anthropic server tool; other protocols have no equivalent", t.Type))
		}
		if t.Name == "" {
			return nil, &Invalid{Field: path + ".name", Why: "required"}
		}
		tools = append(tools, Tool{Name: t.Name, Description: t.Description, Parameters: antCache(t.InputSchema), Strict: t.Strict})
	}
	return tools, nil
}

// antParseThinking reads thinking and output_config.effort into canonical Reasoning (nil: neither given).
// Adaptive thinking is on with the effort (Anthropic's default effort is high); max is the canonical high.
func antParseThinking(t *antThinking, oc *antOutputConfig) (*Reasoning, error) {
	effort := ""
	if oc != nil {
		effort = oc.Effort
	}
	switch effort {
	case "max", "xhigh":
		effort = "high"
	}
	if t == nil {
		if effort == "" {
			return nil, nil
		}
		return &Reasoning{Enabled: true, Effort: effort, Summary: true}, nil
	}
	switch t.Type {
	case "enabled":
		return &Reasoning{Enabled: true, Budget: t.BudgetTokens, Effort: effort, Summary: true}, nil
	case "adaptive":
		if effort == "" {
			effort = "high"
		}
		return &Reasoning{Enabled: true, Effort: effort, Summary: true}, nil
	case "disabled":
		return &Reasoning{Enabled: false}, nil
	}
	return nil, &Invalid{Field: "thinking.type", Why: fmt.Sprintf("must be enabled, adaptive or disabled, not %q", t.Type)}
}

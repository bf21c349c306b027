package convert

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"tollgate/relay/adaptor"
)

// oaiCodec is the OpenAI chat completions codec: requests read here and built in openai_build.go, answers and
// errors in openai_answer.go, streams in openai_stream.go. now stamps the created field of answers and
// chunks (nil: the wall clock); tests fix it.
type oaiCodec struct {
	now func() time.Time
}

// init registers the codec for adaptor.OpenAI.
func init() { register(oaiCodec{}) }

// Protocol implements Codec.
func (oaiCodec) Protocol() adaptor.Protocol { return adaptor.OpenAI }

// unix is the created timestamp of an answer or a stream, in unix seconds.
func (c oaiCodec) unix() int64 {
	if c.now != nil {
		return c.now().Unix()
	}
	return time.Now().Unix()
}

// oaiRequest is a chat completions request body as a client sends it. Fields that take several shapes are
// kept raw and read by ParseRequest; fields that do not change the answer (store, metadata, service_tier,
// prompt_cache_key, safety_identifier, prediction, ...) are not read at all.
type oaiRequest struct {
	Model               string          `json:"model"`
	Messages            []oaiMessage    `json:"messages"`
	Tools               []oaiTool       `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	ParallelToolCalls   *bool           `json:"parallel_tool_calls"`
	MaxTokens           *int64          `json:"max_tokens"`
	MaxCompletionTokens *int64          `json:"max_completion_tokens"`
	Temperature         *float64        `json:"temperature"`
	TopP                *float64        `json:"top_p"`
	Stop                json.RawMessage `json:"stop"`
	ResponseFormat      *oaiFormat      `json:"response_format"`
	ReasoningEffort     string          `json:"reasoning_effort"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	User             string          `json:"user"`
	N                *int64          `json:"n"`
	PresencePenalty  *float64        `json:"presence_penalty"`
	FrequencyPenalty *float64        `json:"frequency_penalty"`
	Seed             *int64          `json:"seed"`
	Logprobs         *bool           `json:"logprobs"`
	TopLogprobs      *int64          `json:"top_logprobs"`
	LogitBias        json.RawMessage `json:"logit_bias"`
	// The legacy function-calling fields, read as tools.
	Functions    []oaiFunction   `json:"functions"`
	FunctionCall json.RawMessage `json:"function_call"`
	// Fields that change the answer and that no other protocol expresses: refused when set.
	Modalities       []string        `json:"modalities"`
	Audio            json.RawMessage `json:"audio"`
	WebSearchOptions json.RawMessage `json:"web_search_options"`
	Verbosity        string          `json:"verbosity"`
}

// oaiMessage is one entry of messages, whatever its role. Content is a string, an array of parts or null.
type oaiMessage struct {
	Role         string          `json:"role"`
	Content      json.RawMessage `json:"content"`
	ToolCalls    []oaiToolCall   `json:"tool_calls"`
	ToolCallID   string          `json:"tool_call_id"`
	Name         string          `json:"name"`
	FunctionCall *oaiCall        `json:"function_call"`
	Refusal      string          `json:"refusal"`
	Audio        json.RawMessage `json:"audio"`
}

// oaiToolCall is an assistant tool call: {id, type "function", function {name, arguments}}.
type oaiToolCall struct {
	ID       string  `json:"id"`
	Type     string  `json:"type,omitempty"`
	Function oaiCall `json:"function"`
}

// oaiCall is a function call's name and its arguments as a JSON text.
type oaiCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// oaiPart is one content part: text, image_url, refusal, or a kind no other protocol carries (input_audio,
// file). image_url is {url, detail} (a bare string is accepted too).
type oaiPart struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Refusal  string          `json:"refusal"`
	ImageURL json.RawMessage `json:"image_url"`
}

// oaiImageURL is an image_url part's object.
type oaiImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

// oaiTool is one entry of tools: {type "function", function {...}} (custom tools are refused).
type oaiTool struct {
	Type     string       `json:"type"`
	Function *oaiFunction `json:"function"`
}

// oaiFunction is a function tool's definition (also the legacy functions entries).
type oaiFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// oaiFormat is response_format: text, json_object, or json_schema {name, schema, strict}.
type oaiFormat struct {
	Type       string `json:"type"`
	JSONSchema *struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"schema"`
		Strict *bool           `json:"strict"`
	} `json:"json_schema"`
}

// oaiGiven says whether a raw field holds a value (absent and null are both "not given").
func oaiGiven(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && string(raw) != "null"
}

// ParseRequest implements Codec: a chat completions body in canonical form. System and developer messages go
// to System in order (wherever they stood); tool messages become tool results in user messages (consecutive
// ones in one message); reasoning_content the caller sends back in history is not the caller's content and is
// not read. A malformed body is *Invalid; a field canonical cannot carry (audio, files, custom tools, web
// search, a non-default verbosity) is *Unsupported.
func (oaiCodec) ParseRequest(body []byte) (*Request, error) {
	var w oaiRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, oaiDecodeError(err)
	}
	if w.Messages == nil {
		return nil, &Invalid{Field: "messages", Why: "is required"}
	}
	if len(w.Messages) == 0 {
		return nil, &Invalid{Field: "messages", Why: "must hold at least one message"}
	}
	if err := oaiRefuseExtras(&w); err != nil {
		return nil, err
	}
	r := &Request{Model: w.Model, Stream: w.Stream, User: w.User, ParallelToolCalls: w.ParallelToolCalls,
		Temperature: w.Temperature, TopP: w.TopP, PresencePenalty: w.PresencePenalty,
		FrequencyPenalty: w.FrequencyPenalty, Seed: w.Seed}
	if w.StreamOptions != nil {
		r.IncludeUsage = w.StreamOptions.IncludeUsage
	}
	switch {
	case w.MaxCompletionTokens != nil:
		r.MaxTokens = *w.MaxCompletionTokens
	case w.MaxTokens != nil:
		r.MaxTokens = *w.MaxTokens
	}
	if w.N != nil {
		r.N = *w.N
	}
	if w.Logprobs != nil {
		r.Logprobs = *w.Logprobs
	}
	if w.TopLogprobs != nil {
		r.TopLogprobs = *w.TopLogprobs
	}
	if oaiGiven(w.LogitBias) {
		var m map[string]float64
		if json.Unmarshal(w.LogitBias, &m) != nil {
			return nil, &Invalid{Field: "logit_bias", Why: "must be an object of token ids to numbers"}
		}
		if len(m) > 0 {
			r.LogitBias = w.LogitBias
		}
	}
	var err error
	if r.Stop, err = oaiParseStop(w.Stop); err != nil {
		return nil, err
	}
	if r.ResponseFormat, err = oaiParseFormat(w.ResponseFormat); err != nil {
		return nil, err
	}
	switch w.ReasoningEffort {
	case "":
	case "none":
		r.Reasoning = &Reasoning{Enabled: false}
	default:
		r.Reasoning = &Reasoning{Effort: w.ReasoningEffort, Enabled: true}
	}
	if r.Tools, err = oaiParseTools(w.Tools, w.Functions); err != nil {
		return nil, err
	}
	if r.ToolChoice, err = oaiParseToolChoice(w.ToolChoice, "tool_choice"); err != nil {
		return nil, err
	}
	if r.ToolChoice == nil && oaiGiven(w.FunctionCall) {
		if r.ToolChoice, err = oaiParseToolChoice(w.FunctionCall, "function_call"); err != nil {
			return nil, err
		}
	}
	if err = oaiParseMessages(r, w.Messages); err != nil {
		return nil, err
	}
	return r, nil
}

// oaiDecodeError turns an encoding/json failure into the *Invalid naming the field that had the wrong type.
func oaiDecodeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "body"
		}
		return &Invalid{Field: field, Why: "must be " + oaiTypeWord(te.Type.Kind().String()) + ", not a JSON " + te.Value}
	}
	return &Invalid{Field: "body", Why: "is not valid JSON: " + err.Error()}
}

// oaiTypeWord names a Go kind as the JSON type the caller should have sent.
func oaiTypeWord(kind string) string {
	switch {
	case kind == "string":
		return "a string"
	case kind == "bool":
		return "a boolean"
	case strings.HasPrefix(kind, "int"), strings.HasPrefix(kind, "uint"):
		return "an integer"
	case strings.HasPrefix(kind, "float"):
		return "a number"
	case kind == "slice":
		return "an array"
	}
	return "an object"
}

// oaiUnsupported is a caller's field that canonical cannot carry, so no translation can send it (the relay
// answers 400 naming it, whatever the channel).
func oaiUnsupported(field, why string) error {
	return &Unsupported{Field: field, Target: adaptor.OpenAI, Why: why}
}

// oaiRefuseExtras refuses the request fields that change the answer and that canonical cannot carry: audio
// output, built-in web search, and a non-default verbosity.
func oaiRefuseExtras(w *oaiRequest) error {
	for _, m := range w.Modalities {
		if m != "text" {
			return oaiUnsupported("modalities", "only text output can be translated to another protocol")
		}
	}
	if oaiGiven(w.Audio) {
		return oaiUnsupported("audio", "audio output cannot be translated to another protocol")
	}
	if oaiGiven(w.WebSearchOptions) {
		return oaiUnsupported("web_search_options", "built-in web search cannot be translated to another protocol")
	}
	if w.Verbosity != "" && w.Verbosity != "medium" {
		return oaiUnsupported("verbosity", "a non-default verbosity cannot be translated to another protocol")
	}
	return nil
}

// oaiParseStop reads stop: a string, an array of strings, or null.
func oaiParseStop(raw json.RawMessage) ([]string, error) {
	if !oaiGiven(raw) {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if one == "" {
			return nil, nil
		}
		return []string{one}, nil
	}
	var many []string
	if json.Unmarshal(raw, &many) != nil {
		return nil, &Invalid{Field: "stop", Why: "must be a string or an array of strings"}
	}
	return many, nil
}

// oaiParseFormat reads response_format.
func oaiParseFormat(f *oaiFormat) (*ResponseFormat, error) {
	if f == nil {
		return nil, nil
	}
	switch f.Type {
	case "text", "json_object":
		return &ResponseFormat{Type: f.Type}, nil
	case "json_schema":
		if f.JSONSchema == nil {
			return nil, &Invalid{Field: "response_format.json_schema", Why: "is required when type is json_schema"}
		}
		rf := &ResponseFormat{Type: "json_schema", Name: f.JSONSchema.Name, Strict: f.JSONSchema.Strict != nil && *f.JSONSchema.Strict}
		if oaiGiven(f.JSONSchema.Schema) {
			rf.Schema = f.JSONSchema.Schema
		}
		return rf, nil
	}
	return nil, &Invalid{Field: "response_format.type", Why: fmt.Sprintf("%q is not text, json_object or json_schema", f.Type)}
}

// oaiParseTools reads tools (function tools only) and the legacy functions list.
func oaiParseTools(tools []oaiTool, functions []oaiFunction) ([]Tool, error) {
	var out []Tool
	for i, t := range tools {
		if t.Type != "" && t.Type != "function" {
			return nil, oaiUnsupported(fmt.Sprintf("tools[%d].type", i), fmt.Sprintf("%q tools cannot be translated to another protocol", t.Type))
		}
		if t.Function == nil || t.Function.Name == "" {
			return nil, &Invalid{Field: fmt.Sprintf("tools[%d].function.name", i), Why: "is required"}
		}
		out = append(out, oaiTool2Canon(t.Function))
	}
	for i, f := range functions {
		if f.Name == "" {
			return nil, &Invalid{Field: fmt.Sprintf("functions[%d].name", i), Why: "is required"}
		}
		out = append(out, oaiTool2Canon(&f))
	}
	return out, nil
}

// oaiTool2Canon is one function definition in canonical form.
func oaiTool2Canon(f *oaiFunction) Tool {
	t := Tool{Name: f.Name, Description: f.Description, Strict: f.Strict != nil && *f.Strict}
	if oaiGiven(f.Parameters) {
		t.Parameters = f.Parameters
	}
	return t
}

// oaiParseToolChoice reads tool_choice ("auto", "none", "required", {type function, function {name}}) or the
// legacy function_call ("auto", "none", {name}); field names the one being read.
func oaiParseToolChoice(raw json.RawMessage, field string) (*ToolChoice, error) {
	if !oaiGiven(raw) {
		return nil, nil
	}
	var word string
	if json.Unmarshal(raw, &word) == nil {
		switch word {
		case "auto":
			return &ToolChoice{Mode: ToolAuto}, nil
		case "none":
			return &ToolChoice{Mode: ToolNone}, nil
		case "required":
			if field == "tool_choice" {
				return &ToolChoice{Mode: ToolRequired}, nil
			}
		}
		return nil, &Invalid{Field: field, Why: fmt.Sprintf("%q is not a tool choice", word)}
	}
	var obj struct {
		Type     string `json:"type"`
		Name     string `json:"name"`
		Function *struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &obj) != nil {
		return nil, &Invalid{Field: field, Why: "must be a string or an object"}
	}
	name := obj.Name
	if obj.Function != nil {
		name = obj.Function.Name
	}
	if obj.Type != "" && obj.Type != "function" {
		return nil, oaiUnsupported(field+".type", fmt.Sprintf("%q tool choices cannot be translated to another protocol", obj.Type))
	}
	if name == "" {
		return nil, &Invalid{Field: field + ".function.name", Why: "is required"}
	}
	return &ToolChoice{Mode: ToolNamed, Name: name}, nil
}

// oaiParseMessages reads messages into r.System and r.Messages.
func oaiParseMessages(r *Request, msgs []oaiMessage) error {
	names := map[string]string{}  // tool call id -> function name, for the results (Gemini matches by name)
	lastFn := map[string]string{} // legacy function_call: function name -> the id synthesized for its last call
	for i, m := range msgs {
		at := fmt.Sprintf("messages[%d]", i)
		switch m.Role {
		case "system", "developer":
			parts, err := oaiTextParts(m.Content, at+".content")
			if err != nil {
				return err
			}
			r.System = append(r.System, parts...)
		case "user":
			parts, err := oaiUserParts(m.Content, at+".content")
			if err != nil {
				return err
			}
			r.Messages = append(r.Messages, Message{Role: RoleUser, Parts: parts})
		case "assistant":
			if oaiGiven(m.Audio) {
				return oaiUnsupported(at+".audio", "audio answers cannot be translated to another protocol")
			}
			parts, err := oaiAssistantParts(&m, at, i, names, lastFn)
			if err != nil {
				return err
			}
			if len(parts) > 0 {
				r.Messages = append(r.Messages, Message{Role: RoleAssistant, Parts: parts})
			}
		case "tool", "function":
			id := m.ToolCallID
			name := names[id]
			if m.Role == "function" {
				name = m.Name
				id = lastFn[m.Name]
				if id == "" {
					id = "call_" + m.Name
				}
			} else if id == "" {
				return &Invalid{Field: at + ".tool_call_id", Why: "is required"}
			}
			content, err := oaiTextParts(m.Content, at+".content")
			if err != nil {
				return err
			}
			part := Part{Kind: PartToolResult, ToolResult: &ToolResult{CallID: id, Name: name, Content: content}}
			if n := len(r.Messages); n > 0 && oaiAllResults(r.Messages[n-1]) {
				r.Messages[n-1].Parts = append(r.Messages[n-1].Parts, part)
			} else {
				r.Messages = append(r.Messages, Message{Role: RoleUser, Parts: []Part{part}})
			}
		default:
			return &Invalid{Field: at + ".role", Why: fmt.Sprintf("%q is not system, developer, user, assistant or tool", m.Role)}
		}
	}
	return nil
}

package convert

// The OpenAI Responses API codec (POST /v1/responses): this file reads and writes requests;
// responses_answer.go the complete answers and errors, responses_stream.go the streams.
//
// Responses items map to canonical messages this way: message items by role (system and developer messages,
// wherever they stand in input, join System in order, after instructions); reasoning items become assistant
// thinking parts (the summary texts joined, encrypted_content as the Signature, so a signature another
// protocol gave the caller comes back as it went); function_call / custom_tool_call / local_shell_call
// items become assistant tool calls, and their outputs user tool results. Consecutive items of one role
// join one message (an assistant turn is its reasoning, text and calls; the next user turn starts with the
// call outputs).
//
// The canonical Tool has no kind, so the two tool kinds Responses has beyond functions travel as function
// tools whose Parameters are exactly rspCustomParams (a freeform "custom" tool) or rspShellParams (the
// "local_shell" tool); the encoder recognises them by those bytes to answer the caller with the item its
// tool kind calls for.

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"tollgate/relay/adaptor"
)

// rspCodec is the Responses API codec.
type rspCodec struct{}

// init registers the codec.
func init() { register(rspCodec{}) }

// Protocol implements Codec.
func (rspCodec) Protocol() adaptor.Protocol { return adaptor.ResponsesAPI }

// rspCustomParams is the schema a freeform custom tool is offered with as a function: one string, the raw
// input. Its description is distinctive so that no caller's own function tool has these exact bytes.
const rspCustomParams = `{"type":"object","properties":{"input":{"type":"string","description":"The raw input for this freeform tool, written exactly as the tool description says."}},"required":["input"],"additionalProperties":false}`

// rspShellName is the function name the local_shell tool is offered as.
const rspShellName = "local_shell"

// rspShellParams is the schema the local_shell tool is offered with as a function.
const rspShellParams = `{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"},"description":"The command to run, as an argv array."},"workdir":{"type":"string","description":"The working directory to run the command in."},"timeout_ms":{"type":"number","description":"The timeout for the command in milliseconds."}},"required":["command"],"additionalProperties":false}`

// rspShellDescription is the local_shell tool's description (Responses declares it with no text at all).
const rspShellDescription = "Runs a shell command on the user's machine and returns its output."

// rspSigPrefix marks a thinking Signature that is a Responses upstream's encrypted_content: only those go
// back to a Responses upstream (as reasoning items); other protocols' signatures mean nothing to it.
const rspSigPrefix = "responses:"

// rspRedactedPrefix marks an encrypted_content the encoder wrote for Anthropic redacted thinking, so that it
// comes back as redacted thinking (Data) and not as a thinking signature.
const rspRedactedPrefix = "redacted_thinking:"

// rspNoState is why requests that lean on stored state are refused.
const rspNoState = "the gateway keeps no conversation state; send the whole input"

// rspRefuse is a caller's field the canonical form cannot carry to any other protocol. ParseRequest runs
// before the upstream is known, so Target is the caller's own protocol (as the other codecs do) and Why
// says what is missing.
func rspRefuse(field, why string) *Unsupported {
	return &Unsupported{Field: field, Target: adaptor.ResponsesAPI, Why: why}
}

// rspRequestIn is a Responses request body as read; polymorphic fields stay raw.
type rspRequestIn struct {
	Model              string            `json:"model"`
	Instructions       json.RawMessage   `json:"instructions"`
	Input              json.RawMessage   `json:"input"`
	Tools              []json.RawMessage `json:"tools"`
	ToolChoice         json.RawMessage   `json:"tool_choice"`
	ParallelToolCalls  *bool             `json:"parallel_tool_calls"`
	MaxOutputTokens    *int64            `json:"max_output_tokens"`
	Temperature        *float64          `json:"temperature"`
	TopP               *float64          `json:"top_p"`
	TopLogprobs        *int64            `json:"top_logprobs"`
	Text               *rspTextIn        `json:"text"`
	Reasoning          *rspReasoningIn   `json:"reasoning"`
	Stream             *bool             `json:"stream"`
	User               *string           `json:"user"`
	PreviousResponseID *string           `json:"previous_response_id"`
	Conversation       json.RawMessage   `json:"conversation"`
	Prompt             json.RawMessage   `json:"prompt"`
	Background         *bool             `json:"background"`
	Include            []string          `json:"include"`
}

// rspTextIn is the request's text options (verbosity is ignored).
type rspTextIn struct {
	Format json.RawMessage `json:"format"`
}

// rspFormatIn is text.format.
type rspFormatIn struct {
	Type   string          `json:"type"`
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict *bool           `json:"strict"`
}

// rspReasoningIn is the request's reasoning options.
type rspReasoningIn struct {
	Effort          *string `json:"effort"`
	Summary         *string `json:"summary"`
	GenerateSummary *string `json:"generate_summary"` // the deprecated name of summary
}

// rspItemIn is one input item, whatever its type.
type rspItemIn struct {
	Type             string          `json:"type"`
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	ID               string          `json:"id"`
	CallID           string          `json:"call_id"`
	Name             string          `json:"name"`
	Arguments        *string         `json:"arguments"`
	Input            *string         `json:"input"`
	Output           json.RawMessage `json:"output"`
	Summary          []rspSummaryIn  `json:"summary"`
	EncryptedContent *string         `json:"encrypted_content"`
	Action           *rspActionIn    `json:"action"`
}

// rspSummaryIn is one reasoning summary part.
type rspSummaryIn struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// rspActionIn is a local_shell_call's action.
type rspActionIn struct {
	Type             string   `json:"type"`
	Command          []string `json:"command"`
	WorkingDirectory string   `json:"working_directory"`
	TimeoutMS        *int64   `json:"timeout_ms"`
}

// rspPartIn is one content part of a message or of a tool output.
type rspPartIn struct {
	Type     string  `json:"type"`
	Text     string  `json:"text"`
	Refusal  string  `json:"refusal"`
	ImageURL *string `json:"image_url"`
	FileID   string  `json:"file_id"`
	Detail   string  `json:"detail"`
}

// rspToolIn is one declared tool, whatever its type.
type rspToolIn struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      *bool           `json:"strict"`
	Format      *rspToolFormat  `json:"format"`
	// Tools are a namespace's function tools (Codex CLI groups its multi-agent tools so).
	Tools []json.RawMessage `json:"tools"`
}

// rspToolFormat is a custom tool's input format: text, or a grammar (lark or regex) with its definition.
type rspToolFormat struct {
	Type       string `json:"type"`
	Syntax     string `json:"syntax"`
	Definition string `json:"definition"`
}

// rspToolChoiceIn is tool_choice as an object.
type rspToolChoiceIn struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

// rspPresent says whether a raw field was given (absent and null are the same).
func rspPresent(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// rspDecode unmarshals raw into v; a type error becomes *Invalid naming the field under prefix.
func rspDecode(raw []byte, v any, prefix string) error {
	err := json.Unmarshal(raw, v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := prefix
		if te.Field != "" {
			if field != "" {
				field += "."
			}
			field += te.Field
		}
		if field == "" {
			field = "body"
		}
		return &Invalid{Field: field, Why: "must be " + rspJSONKind(te.Type.Kind().String())}
	}
	if prefix == "" {
		prefix = "body"
	}
	return &Invalid{Field: prefix, Why: "not valid JSON"}
}

// rspJSONKind names a Go kind in JSON terms for error messages.
func rspJSONKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "struct", "map":
		return "an object"
	case "ptr", "interface":
		return "of another type"
	}
	return "a number"
}

// ParseRequest implements Codec: a Responses request in canonical form.
func (rspCodec) ParseRequest(body []byte) (*Request, error) {
	var in rspRequestIn
	if err := rspDecode(body, &in, ""); err != nil {
		return nil, err
	}
	if in.PreviousResponseID != nil && *in.PreviousResponseID != "" {
		return nil, rspRefuse("previous_response_id", rspNoState)
	}
	if rspPresent(in.Conversation) {
		return nil, rspRefuse("conversation", rspNoState)
	}
	if rspPresent(in.Prompt) {
		return nil, rspRefuse("prompt", "the gateway cannot expand stored prompt templates")
	}
	if in.Background != nil && *in.Background {
		return nil, rspRefuse("background", "the gateway runs no background responses")
	}
	if in.TopLogprobs != nil && *in.TopLogprobs > 0 {
		return nil, rspRefuse("top_logprobs", "translated answers carry no log probabilities")
	}
	for _, inc := range in.Include {
		if inc == "message.output_text.logprobs" {
			return nil, rspRefuse("include", "translated answers carry no log probabilities")
		}
	}
	r := &Request{Model: in.Model, ParallelToolCalls: in.ParallelToolCalls, Temperature: in.Temperature, TopP: in.TopP}
	if in.MaxOutputTokens != nil {
		r.MaxTokens = *in.MaxOutputTokens
	}
	if in.Stream != nil {
		r.Stream = *in.Stream
	}
	if in.User != nil {
		r.User = *in.User
	}
	if rspPresent(in.Instructions) {
		var s string
		if err := json.Unmarshal(in.Instructions, &s); err != nil {
			return nil, &Invalid{Field: "instructions", Why: "must be a string"}
		}
		if s != "" {
			r.System = append(r.System, Part{Kind: PartText, Text: s})
		}
	}
	if !rspPresent(in.Input) {
		return nil, &Invalid{Field: "input", Why: "is required"}
	}
	if err := rspParseInput(in.Input, r); err != nil {
		return nil, err
	}
	for i, raw := range in.Tools {
		ts, err := rspParseTools(raw, i, r)
		if err != nil {
			return nil, err
		}
		r.Tools = append(r.Tools, ts...)
	}
	if rspPresent(in.ToolChoice) {
		tc, err := rspParseToolChoice(in.ToolChoice)
		if err != nil {
			return nil, err
		}
		r.ToolChoice = tc
	}
	if in.Text != nil && rspPresent(in.Text.Format) {
		rf, err := rspParseFormat(in.Text.Format)
		if err != nil {
			return nil, err
		}
		r.ResponseFormat = rf
	}
	if in.Reasoning != nil {
		r.Reasoning = rspParseReasoning(in.Reasoning)
	}
	return r, nil
}

// rspParseReasoning maps reasoning {effort, summary}: effort "none" turns thinking off; a summary alone asks
// for the model's default effort.
func rspParseReasoning(in *rspReasoningIn) *Reasoning {
	summary := in.Summary
	if summary == nil {
		summary = in.GenerateSummary
	}
	rs := &Reasoning{Enabled: true}
	if summary != nil && *summary != "" && *summary != "none" {
		rs.Summary = true
	}
	if in.Effort != nil && *in.Effort != "" {
		if *in.Effort == "none" {
			return &Reasoning{Enabled: false}
		}
		rs.Effort = *in.Effort
	} else if !rs.Summary {
		return nil // reasoning {} says nothing
	}
	return rs
}

// rspParseFormat maps text.format to a ResponseFormat (plain text is the default: nil).
func rspParseFormat(raw json.RawMessage) (*ResponseFormat, error) {
	var f rspFormatIn
	if err := rspDecode(raw, &f, "text.format"); err != nil {
		return nil, err
	}
	switch f.Type {
	case "text", "":
		return nil, nil
	case "json_object":
		return &ResponseFormat{Type: "json_object"}, nil
	case "json_schema":
		rf := &ResponseFormat{Type: "json_schema", Name: f.Name, Strict: f.Strict != nil && *f.Strict}
		if rspPresent(f.Schema) {
			rf.Schema = f.Schema
		}
		return rf, nil
	}
	return nil, rspRefuse("text.format.type", fmt.Sprintf("the output format %q has no equivalent", f.Type))
}

// rspParseToolChoice maps tool_choice: a mode word, or a named function or custom tool.
func rspParseToolChoice(raw json.RawMessage) (*ToolChoice, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "auto":
			return &ToolChoice{Mode: ToolAuto}, nil
		case "none":
			return &ToolChoice{Mode: ToolNone}, nil
		case "required":
			return &ToolChoice{Mode: ToolRequired}, nil
		}
		return nil, &Invalid{Field: "tool_choice", Why: fmt.Sprintf("unknown mode %q", s)}
	}
	var o rspToolChoiceIn
	if err := rspDecode(raw, &o, "tool_choice"); err != nil {
		return nil, err
	}
	switch o.Type {
	case "function", "custom":
		if o.Name == "" {
			return nil, &Invalid{Field: "tool_choice.name", Why: "is required"}
		}
		return &ToolChoice{Mode: ToolNamed, Name: o.Name}, nil
	case "local_shell":
		return &ToolChoice{Mode: ToolNamed, Name: rspShellName}, nil
	}
	return nil, rspRefuse("tool_choice.type", fmt.Sprintf("the tool choice %q has no equivalent", o.Type))
}

// rspParseTools maps tools[i]: a namespace to its function tools (flattened, by their own names), a web
// search tool to none (dropped and named in r.Dropped: the model answers without searching), anything else
// through rspParseTool.
func rspParseTools(raw json.RawMessage, i int, r *Request) ([]Tool, error) {
	field := fmt.Sprintf("tools[%d]", i)
	var in rspToolIn
	if err := rspDecode(raw, &in, field); err != nil {
		return nil, err
	}
	switch {
	case in.Type == "namespace":
		out := make([]Tool, 0, len(in.Tools))
		for j, sub := range in.Tools {
			t, err := rspParseTool(sub, fmt.Sprintf("%s.tools[%d]", field, j))
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
		return out, nil
	case strings.HasPrefix(in.Type, "web_search"):
		r.Dropped = append(r.Dropped, field)
		return nil, nil
	}
	t, err := rspParseTool(raw, field)
	if err != nil {
		return nil, err
	}
	return []Tool{t}, nil
}

// rspParseTool maps tools[i]: functions as they are, custom tools and local_shell as functions (see the
// file comment); hosted tools are refused.
func rspParseTool(raw json.RawMessage, field string) (Tool, error) {
	var in rspToolIn
	if err := rspDecode(raw, &in, field); err != nil {
		return Tool{}, err
	}
	switch in.Type {
	case "function":
		if in.Name == "" {
			return Tool{}, &Invalid{Field: field + ".name", Why: "is required"}
		}
		t := Tool{Name: in.Name, Description: in.Description, Strict: in.Strict != nil && *in.Strict}
		if rspPresent(in.Parameters) {
			t.Parameters = in.Parameters
		}
		return t, nil
	case "custom":
		if in.Name == "" {
			return Tool{}, &Invalid{Field: field + ".name", Why: "is required"}
		}
		desc := in.Description
		if f := in.Format; f != nil && f.Type == "grammar" && f.Definition != "" {
			syntax := f.Syntax
			if syntax == "" {
				syntax = "lark"
			}
			if desc != "" {
				desc += "\n\n"
			}
			desc += "The input must be written in this " + syntax + " grammar:\n" + f.Definition
		}
		return Tool{Name: in.Name, Description: desc, Parameters: json.RawMessage(rspCustomParams)}, nil
	case "local_shell":
		return Tool{Name: rspShellName, Description: rspShellDescription, Parameters: json.RawMessage(rspShellParams)}, nil
	case "":
		return Tool{}, &Invalid{Field: field + ".type", Why: "is required"}
	}
	return Tool{}, rspRefuse(field+".type", fmt.Sprintf("the hosted tool %q runs only on OpenAI", in.Type))
}

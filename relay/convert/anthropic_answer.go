package convert

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// antUsage is Messages usage: input_tokens excludes the cached prompt tokens, as canonical Input does.
type antUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
}

// antResponse is a complete Messages answer, read from upstreams and written to clients (and, with empty
// content and a null stop_reason, the message of a stream's message_start).
type antResponse struct {
	ID           string     `json:"id"`
	Type         string     `json:"type"`
	Role         string     `json:"role"`
	Model        string     `json:"model"`
	Content      []antBlock `json:"content"`
	StopReason   *string    `json:"stop_reason"`
	StopSequence *string    `json:"stop_sequence"`
	Usage        *antUsage  `json:"usage"`
}

// antErrorBody is Anthropic's error shape, as an answer body and as a stream's error event.
type antErrorBody struct {
	Type  string         `json:"type"`
	Error antErrorDetail `json:"error"`
}

// antErrorDetail is the inside of antErrorBody.
type antErrorDetail struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// antToCanonUsage is Messages usage in canonical form.
func antToCanonUsage(u antUsage) Usage {
	return Usage{Input: u.InputTokens, CacheRead: u.CacheReadInputTokens, CacheWrite: u.CacheCreationInputTokens, Output: u.OutputTokens}
}

// antFromCanonUsage is canonical usage in Messages form.
func antFromCanonUsage(u Usage) antUsage {
	return antUsage{InputTokens: u.Input, CacheReadInputTokens: u.CacheRead, CacheCreationInputTokens: u.CacheWrite, OutputTokens: u.Output}
}

// antFinish is an Anthropic stop_reason as a canonical finish.
func antFinish(stopReason string) FinishReason {
	switch stopReason {
	case "max_tokens", "model_context_window_exceeded":
		return FinishLength
	case "tool_use":
		return FinishToolCalls
	case "refusal":
		return FinishFilter
	}
	return FinishStop // end_turn, stop_sequence, pause_turn, or a word we do not know
}

// antStopReason is a canonical finish as Anthropic's stop_reason and stop_sequence. Clients loop on
// tool_use, so an answer holding tool calls says tool_use whatever the upstream's word (Gemini says STOP).
func antStopReason(f FinishReason, stopSeq string, hasTools bool) (string, *string) {
	switch f {
	case FinishLength:
		return "max_tokens", nil
	case FinishFilter:
		return "refusal", nil
	case FinishToolCalls:
		return "tool_use", nil
	}
	if hasTools {
		return "tool_use", nil
	}
	if stopSeq != "" {
		return "stop_sequence", antStr(stopSeq)
	}
	return "end_turn", nil
}

// antMessageID is a message id as Anthropic clients see it: msg_ followed by the upstream's id.
func antMessageID(id string) string {
	switch {
	case id == "":
		return "msg_tollgate"
	case strings.HasPrefix(id, "msg_"):
		return id
	}
	return "msg_" + id
}

// ParseResponse implements Codec: a Messages answer to canonical form.
func (antCodec) ParseResponse(body []byte) (*Response, error) {
	var in antResponse
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("anthropic answer: %w", err)
	}
	if in.Type == "error" {
		return nil, errors.New("anthropic answer: the upstream answered an error")
	}
	r := &Response{ID: in.ID, Model: in.Model, Finish: antFinish(antDeref(in.StopReason)), StopSequence: antDeref(in.StopSequence)}
	if in.Usage != nil {
		r.Usage, r.HasUsage = antToCanonUsage(*in.Usage), true
	}
	r.Parts = make([]Part, 0, len(in.Content))
	for i, b := range in.Content {
		switch b.Type {
		case "text":
			r.Parts = append(r.Parts, Part{Kind: PartText, Text: antDeref(b.Text)})
		case "thinking":
			r.Parts = append(r.Parts, Part{Kind: PartThinking, Text: antDeref(b.Thinking), Signature: antDeref(b.Signature)})
		case "redacted_thinking":
			r.Parts = append(r.Parts, Part{Kind: PartRedactedThinking, Data: b.Data})
		case "tool_use":
			id := b.ID
			if id == "" {
				id = "toolu_" + strconv.Itoa(i)
			}
			r.Parts = append(r.Parts, Part{Kind: PartToolCall, ToolCall: &ToolCall{ID: id, Name: b.Name, Args: argsText(b.Input)}})
		}
		// Server tool blocks (server_tool_use, web_search_tool_result, ...) are Anthropic's own business.
	}
	return r, nil
}

// BuildResponse implements Codec: a canonical answer as a Messages answer.
func (antCodec) BuildResponse(req *Request, r *Response) ([]byte, error) {
	out := antResponse{ID: antMessageID(r.ID), Type: "message", Role: "assistant", Model: r.Model, Content: make([]antBlock, 0, len(r.Parts))}
	if out.Model == "" && req != nil {
		out.Model = req.Model
	}
	hasTools := false
	for i, p := range r.Parts {
		switch p.Kind {
		case PartText:
			out.Content = append(out.Content, antBlock{Type: "text", Text: antStr(p.Text)})
		case PartThinking:
			out.Content = append(out.Content, antBlock{Type: "thinking", Thinking: antStr(p.Text), Signature: antStr(p.Signature)})
		case PartRedactedThinking:
			out.Content = append(out.Content, antBlock{Type: "redacted_thinking", Data: p.Data})
		case PartToolCall:
			if p.ToolCall == nil {
				continue
			}
			input, ok := antArgs(p.ToolCall.Args)
			if !ok {
				return nil, fmt.Errorf("anthropic answer: tool call %q has arguments that are not a JSON object", p.ToolCall.Name)
			}
			id := p.ToolCall.ID
			if id == "" {
				id = "toolu_" + strconv.Itoa(i)
			}
			hasTools = true
			out.Content = append(out.Content, antBlock{Type: "tool_use", ID: id, Name: p.ToolCall.Name, Input: input})
		}
	}
	reason, seq := antStopReason(r.Finish, r.StopSequence, hasTools)
	out.StopReason, out.StopSequence = &reason, seq
	u := antFromCanonUsage(r.Usage)
	out.Usage = &u
	return json.Marshal(out)
}

// antErrorTypes maps Anthropic's error.type words to canonical error types.
var antErrorTypes = map[string]ErrorType{
	"invalid_request_error": ErrInvalidRequest,
	"authentication_error":  ErrAuthentication,
	"permission_error":      ErrPermission,
	"not_found_error":       ErrNotFound,
	"request_too_large":     ErrTooLarge,
	"rate_limit_error":      ErrRateLimit,
	"billing_error":         ErrQuota,
	"api_error":             ErrServer,
	"overloaded_error":      ErrOverloaded,
	"timeout_error":         ErrTimeout,
}

// antStatusErrorType is the canonical error type of an HTTP status (a stream's 0 is a server error).
func antStatusErrorType(status int) ErrorType {
	if t := statusType(status); t != "" {
		return t
	}
	if status == 0 {
		return ErrServer
	}
	return ErrInvalidRequest
}

// antErrorWord is a canonical error as Anthropic's error.type: from its type, else from its status.
func antErrorWord(e *Error) string {
	switch e.Type {
	case ErrInvalidRequest:
		return "invalid_request_error"
	case ErrAuthentication:
		return "authentication_error"
	case ErrPermission:
		return "permission_error"
	case ErrNotFound:
		return "not_found_error"
	case ErrTooLarge:
		return "request_too_large"
	case ErrRateLimit:
		return "rate_limit_error"
	case ErrQuota:
		return "billing_error"
	case ErrOverloaded:
		return "overloaded_error"
	case ErrTimeout:
		return "timeout_error"
	case ErrServer:
		return "api_error"
	}
	return antErrorWord(&Error{Type: antStatusErrorType(e.Status)})
}

// ParseError implements Codec: {"type":"error","error":{"type","message"}}, the status kept as given. A
// body of another shape is typed by its status, with its text (cut to 500 bytes) as the message.
func (antCodec) ParseError(status int, body []byte) *Error {
	res := gjson.GetManyBytes(body, "error.type", "error.message", "message")
	e := &Error{Status: status, Type: antStatusErrorType(status), Code: res[0].String()}
	if t, ok := antErrorTypes[e.Code]; ok {
		e.Type = t
	}
	switch {
	case res[1].Type == gjson.String:
		e.Message = res[1].Str
	case res[2].Type == gjson.String:
		e.Message = res[2].Str
	default:
		e.Message = strings.TrimSpace(string(body))
		if len(e.Message) > 500 {
			e.Message = e.Message[:500]
		}
	}
	return e
}

// BuildError implements Codec: e in Anthropic's error shape (the relay sends it with e's status).
func (antCodec) BuildError(e *Error) []byte {
	if e == nil {
		e = &Error{Type: ErrServer}
	}
	b, _ := json.Marshal(antErrorBody{Type: "error", Error: antErrorDetail{Type: antErrorWord(e), Message: e.Message}})
	return b
}

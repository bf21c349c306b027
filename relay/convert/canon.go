// Package convert translates generation calls between the protocols the relay speaks — OpenAI chat
// completions, OpenAI Responses, Anthropic Messages and Gemini generateContent — through one small canonical
// form: requests, non-stream answers, stream events (statefully: one upstream event may become several client
// events or none) and errors. It is pure: bytes in, bytes out, no I/O. When the caller and the upstream speak
// the same protocol the relay does not call it at all (the bytes pass through untouched).
//
// Each protocol is one Codec in files of its own (openai*.go, anthropic*.go, gemini*.go, responses*.go),
// registered by its init. A field the target protocol cannot express is an *Unsupported error naming it,
// never a silently different request.
package convert

import (
	"encoding/json"
	"fmt"
	"net/http"

	"tollgate/relay/adaptor"
)

// Role is who wrote a message.
type Role string

// Roles. Tool results travel in their own parts; the codec puts them in the role its protocol wants (OpenAI
// "tool" messages, Anthropic user tool_result blocks, Gemini user functionResponse parts).
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// PartKind is what one content part holds.
type PartKind string

// Part kinds.
const (
	PartText             PartKind = "text"
	PartImage            PartKind = "image"
	PartToolCall         PartKind = "tool_call"
	PartToolResult       PartKind = "tool_result"
	PartThinking         PartKind = "thinking"          // reasoning text, with the Anthropic signature when there is one
	PartRedactedThinking PartKind = "redacted_thinking" // Anthropic's encrypted reasoning (Data), passed back as it came
)

// Part is one piece of a message or an answer.
type Part struct {
	Kind PartKind `json:"kind"`
	Text string   `json:"text,omitempty"` // text, thinking
	// Signature is the Anthropic thinking signature (or Gemini thoughtSignature) that must go back with it.
	Signature string `json:"signature,omitempty"`
	// Data is redacted thinking's opaque payload.
	Data       string      `json:"data,omitempty"`
	Image      *Image      `json:"image,omitempty"`
	ToolCall   *ToolCall   `json:"tool_call,omitempty"`
	ToolResult *ToolResult `json:"tool_result,omitempty"`
	// CacheControl is Anthropic's cache breakpoint on this part ("ephemeral"); kept when the target has one.
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

// Image is an image input: a URL, or base64 Data with its MediaType.
type Image struct {
	URL       string `json:"url,omitempty"`
	MediaType string `json:"media_type,omitempty"` // image/png, image/jpeg, ...
	Data      string `json:"data,omitempty"`       // base64, no data: prefix
	Detail    string `json:"detail,omitempty"`     // OpenAI's detail: low/high/auto
}

// ToolCall is a function call the model made. Args is the arguments as a JSON text (OpenAI sends a string,
// Anthropic and Gemini an object: codecs convert; "{}" when the model sent none).
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Args string `json:"args"`
}

// ToolResult is the caller's answer to a tool call.
type ToolResult struct {
	CallID  string `json:"call_id"`
	Name    string `json:"name,omitempty"` // Gemini matches results by name: codecs fill it from the call when they can
	Content []Part `json:"content"`        // text and image parts
	IsError bool   `json:"is_error,omitempty"`
}

// Message is one turn of the conversation.
type Message struct {
	Role  Role   `json:"role"`
	Parts []Part `json:"parts"`
}

// Tool is a function the model may call. Parameters is a JSON Schema object ("{}" or empty when none).
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      bool            `json:"strict,omitempty"`
}

// ToolChoiceMode says whether and which tool the model must call.
type ToolChoiceMode string

// Tool choice modes.
const (
	ToolAuto     ToolChoiceMode = "auto"
	ToolNone     ToolChoiceMode = "none"
	ToolRequired ToolChoiceMode = "required" // any tool
	ToolNamed    ToolChoiceMode = "tool"     // the tool named Name
)

// ToolChoice is the caller's tool_choice.
type ToolChoice struct {
	Mode ToolChoiceMode `json:"mode"`
	Name string         `json:"name,omitempty"`
}

// ResponseFormat is JSON mode or structured output.
type ResponseFormat struct {
	Type   string          `json:"type"` // "text", "json_object", "json_schema"
	Name   string          `json:"name,omitempty"`
	Schema json.RawMessage `json:"schema,omitempty"`
	Strict bool            `json:"strict,omitempty"`
}

// Reasoning is the caller's thinking request: an effort (OpenAI reasoning_effort, Responses reasoning.effort)
// or a token budget (Anthropic thinking.budget_tokens, Gemini thinkingConfig.thinkingBudget). Codecs map one
// to the other with EffortBudget / BudgetEffort.
type Reasoning struct {
	Effort  string `json:"effort,omitempty"` // minimal, low, medium, high
	Budget  int64  `json:"budget,omitempty"` // tokens; 0 = not given
	Enabled bool   `json:"enabled"`          // false: the caller turned thinking off explicitly
	Summary bool   `json:"summary,omitempty"`
}

// Request is a generation call in canonical form.
type Request struct {
	Model    string    `json:"model"`
	System   []Part    `json:"system,omitempty"` // system / developer instructions (text parts)
	Messages []Message `json:"messages"`
	Tools    []Tool    `json:"tools,omitempty"`
	// ToolChoice nil: the protocol's default (auto when tools are given).
	ToolChoice *ToolChoice `json:"tool_choice,omitempty"`
	// ParallelToolCalls nil: the protocol's default; false: at most one call per turn.
	ParallelToolCalls *bool           `json:"parallel_tool_calls,omitempty"`
	MaxTokens         int64           `json:"max_tokens,omitempty"` // 0 = not given
	Temperature       *float64        `json:"temperature,omitempty"`
	TopP              *float64        `json:"top_p,omitempty"`
	TopK              *int64          `json:"top_k,omitempty"`
	Stop              []string        `json:"stop,omitempty"`
	ResponseFormat    *ResponseFormat `json:"response_format,omitempty"`
	Reasoning         *Reasoning      `json:"reasoning,omitempty"`
	Stream            bool            `json:"stream"`
	// IncludeUsage: an OpenAI chat caller asked for the usage chunk (stream_options.include_usage). Encoders
	// for other protocols always report usage their own way.
	IncludeUsage bool   `json:"include_usage,omitempty"`
	User         string `json:"user,omitempty"` // end-user id (OpenAI user, Anthropic metadata.user_id)

	// Features only some protocols express. A builder whose protocol cannot express a value that changes the
	// answer returns *Unsupported naming the caller's field; defaults (n 1, penalties 0) are not refused.
	N                int64           `json:"n,omitempty"`
	PresencePenalty  *float64        `json:"presence_penalty,omitempty"`
	FrequencyPenalty *float64        `json:"frequency_penalty,omitempty"`
	Seed             *int64          `json:"seed,omitempty"`
	Logprobs         bool            `json:"logprobs,omitempty"`
	TopLogprobs      int64           `json:"top_logprobs,omitempty"`
	LogitBias        json.RawMessage `json:"logit_bias,omitempty"`

	// Dropped names the caller's fields a codec left out because the target has no form for them and they
	// only tune sampling (top_k to chat completions) or offer a hosted capability the model may do without
	// (a Responses web_search tool): refusing them would shut whole clients out (Gemini CLI always sends topK,
	// Codex CLI always sends web_search). The relay names them in the X-Tollgate-Dropped answer header, so
	// the difference is never silent. Anything that changes what a correct answer is stays a refusal.
	Dropped []string `json:"dropped,omitempty"`
}

// FinishReason is why generation stopped.
type FinishReason string

// Finish reasons, mapped to each protocol's own words by its codec.
const (
	FinishStop      FinishReason = "stop"       // natural end or a stop sequence
	FinishLength    FinishReason = "length"     // max tokens
	FinishToolCalls FinishReason = "tool_calls" // the model called tools
	FinishFilter    FinishReason = "content_filter"
	FinishError     FinishReason = "error"
)

// Usage is token usage. Input excludes cached tokens: a prompt is Input + CacheRead + CacheWrite tokens.
// Output includes Reasoning (thinking tokens are billed as output everywhere).
type Usage struct {
	Input      int64 `json:"input"`
	CacheRead  int64 `json:"cache_read,omitempty"`
	CacheWrite int64 `json:"cache_write,omitempty"`
	Output     int64 `json:"output"`
	Reasoning  int64 `json:"reasoning,omitempty"`
}

// Prompt is every prompt token, cached or not (OpenAI's prompt_tokens, Gemini's promptTokenCount).
func (u Usage) Prompt() int64 { return u.Input + u.CacheRead + u.CacheWrite }

// Response is a complete non-stream answer in canonical form.
type Response struct {
	ID     string       `json:"id"`
	Model  string       `json:"model"`
	Parts  []Part       `json:"parts"` // text, thinking, redacted_thinking and tool_call parts, in order
	Finish FinishReason `json:"finish"`
	// StopSequence is the stop sequence that ended generation, when the upstream says which.
	StopSequence string `json:"stop_sequence,omitempty"`
	Usage        Usage  `json:"usage"`
	HasUsage     bool   `json:"has_usage"`
}

// EventType is what one canonical stream event says.
type EventType int

// Stream event types. Blocks are numbered by Index in the order they start (0, 1, 2, ...); a block is text,
// thinking or one tool call, and its deltas carry its Index. Decoders guarantee: a block starts before its
// deltas; Start comes first; Finish and Usage may come in any order and more than once (the last wins);
// End comes last, once.
const (
	EvStart         EventType = iota // the answer begins: ID, Model; Usage when the upstream reports input here
	EvBlockStart                     // Index starts: Part.Kind text, thinking, redacted_thinking (Part.Data) or tool_call (Part.ToolCall.ID, .Name)
	EvTextDelta                      // Index: Text appended to a text block
	EvThinkingDelta                  // Index: Text appended to a thinking block
	EvSignature                      // Index: the thinking block's Signature
	EvArgsDelta                      // Index: Text appended to a tool call's arguments (a JSON fragment)
	EvBlockStop                      // Index is complete
	EvFinish                         // Finish (and StopSequence): why generation stopped
	EvUsage                          // Usage: the usage so far (cumulative; the last one wins)
	EvError                          // Err: the upstream ended the stream with an error
	EvEnd                            // the stream ended normally: encoders write their closing events
)

// Event is one canonical stream event.
type Event struct {
	Type         EventType
	Index        int
	ID, Model    string
	Text         string
	Signature    string
	Part         *Part
	Finish       FinishReason
	StopSequence string
	Usage        *Usage
	Err          *Error
}

// ErrorType is a protocol-neutral error category; each codec maps it to its own type / status words.
type ErrorType string

// Error types.
const (
	ErrInvalidRequest ErrorType = "invalid_request"
	ErrAuthentication ErrorType = "authentication"
	ErrPermission     ErrorType = "permission"
	ErrNotFound       ErrorType = "not_found"
	ErrRateLimit      ErrorType = "rate_limit"
	ErrQuota          ErrorType = "quota" // out of credit / insufficient_quota / billing
	ErrTooLarge       ErrorType = "request_too_large"
	ErrOverloaded     ErrorType = "overloaded"
	ErrTimeout        ErrorType = "timeout"
	ErrServer         ErrorType = "server"
)

// Error is an upstream error in canonical form: an HTTP status (0 inside a stream), a type, the upstream's
// own code word when it had one, and its message.
type Error struct {
	Status  int       `json:"status"`
	Type    ErrorType `json:"type"`
	Code    string    `json:"code,omitempty"`
	Message string    `json:"message"`
}

// statusType is the error type an HTTP status implies by itself, shared by every codec: "" for 400, 422 and
// other statuses that say no more (the codec then reads its protocol's own words, or falls back).
func statusType(status int) ErrorType {
	switch status {
	case http.StatusUnauthorized:
		return ErrAuthentication
	case http.StatusPaymentRequired:
		return ErrQuota
	case http.StatusForbidden:
		return ErrPermission
	case http.StatusNotFound:
		return ErrNotFound
	case http.StatusRequestTimeout, http.StatusGatewayTimeout:
		return ErrTimeout
	case http.StatusRequestEntityTooLarge:
		return ErrTooLarge
	case http.StatusTooManyRequests:
		return ErrRateLimit
	case http.StatusServiceUnavailable, 529:
		return ErrOverloaded
	}
	if status >= 500 {
		return ErrServer
	}
	return ""
}

// Unsupported is a request the target protocol cannot express faithfully: the relay answers 400 naming
// Field (in the caller's terms) rather than sending a different request.
type Unsupported struct {
	Field  string // the caller's field, e.g. "n", "logprobs", "messages[2].content[0].type"
	Target adaptor.Protocol
	Why    string
}

func (u *Unsupported) Error() string {
	return fmt.Sprintf("%s cannot be expressed for a %s upstream: %s", u.Field, u.Target, u.Why)
}

// Invalid is a request the codec could not read (a wrong type, a missing required field): a 400 naming
// Field.
type Invalid struct {
	Field string
	Why   string
}

func (e *Invalid) Error() string { return fmt.Sprintf("%s: %s", e.Field, e.Why) }

// Decoder turns an upstream's SSE events, one at a time (the event name and its joined data), into canonical
// events. It is stateful: one event may give several canonical events or none. Unknown event types give
// none (never an error); malformed JSON in a known event is an error. Finish is called when the upstream
// stream ended (EOF or its terminal event) and returns what is still owed, EvEnd last; a stream cut short
// (ended=false) closes open blocks but gives no EvEnd.
type Decoder interface {
	Decode(name string, data []byte) ([]Event, error)
	Finish(ended bool) []Event
}

// Encoder writes canonical events as the client's SSE bytes, appending to dst. It is stateful (it numbers
// blocks its own way, remembers open blocks, accumulates what closing events repeat). Encode after EvEnd or
// EvError writes nothing.
type Encoder interface {
	Encode(dst []byte, ev Event) []byte
}

// Codec is one protocol's side of every translation.
type Codec interface {
	// Protocol is the protocol this codec speaks.
	Protocol() adaptor.Protocol
	// ParseRequest reads a client's request body (errors: *Invalid).
	ParseRequest(body []byte) (*Request, error)
	// BuildRequest writes a request for an upstream of this protocol (errors: *Unsupported). For Gemini the
	// model and stream travel in the URL, not the body.
	BuildRequest(r *Request) ([]byte, error)
	// ParseResponse reads an upstream's complete non-stream answer.
	ParseResponse(body []byte) (*Response, error)
	// BuildResponse writes a complete answer for a client; req is the client's request as parsed.
	BuildResponse(req *Request, r *Response) ([]byte, error)
	// NewDecoder reads an upstream stream of this protocol.
	NewDecoder() Decoder
	// NewEncoder writes a stream for a client of this protocol; req is the client's request as parsed.
	NewEncoder(req *Request) Encoder
	// ParseError reads an upstream error body (a non-2xx answer, or the data of an in-stream error event).
	ParseError(status int, body []byte) *Error
	// BuildError writes e as this protocol's error body (non-stream answers).
	BuildError(e *Error) []byte
}

var codecs = map[adaptor.Protocol]Codec{}

// register adds a codec; each protocol's file calls it from init.
func register(c Codec) { codecs[c.Protocol()] = c }

// For returns the codec of a protocol (false: none registered).
func For(p adaptor.Protocol) (Codec, bool) {
	c, ok := codecs[p]
	return c, ok
}

// endEvents appends what a decoder owes at the normal end of a stream: EvStart if it never started (an
// upstream that sent nothing a client would see), then EvEnd.
func endEvents(evs []Event, started *bool) []Event {
	if !*started {
		*started = true
		evs = append(evs, Event{Type: EvStart})
	}
	return append(evs, Event{Type: EvEnd})
}

// EffortBudget is the thinking budget, in tokens, that stands for a reasoning effort when the target takes a
// budget (Anthropic, Gemini).
func EffortBudget(effort string) int64 {
	switch effort {
	case "minimal":
		return 1024
	case "low":
		return 2048
	case "high":
		return 24576
	}
	return 8192 // medium, or an effort word we do not know
}

// BudgetEffort is the reasoning effort that stands for a thinking budget when the target takes an effort
// (OpenAI, Responses).
func BudgetEffort(budget int64) string {
	switch {
	case budget <= 2048:
		return "low"
	case budget <= 8192:
		return "medium"
	}
	return "high"
}

package convert

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// oaiUsage is a chat completions usage object. prompt_tokens counts every prompt token (cached ones too);
// prompt_tokens_details has the cache reads (cached_tokens) and, when there are any, the cache writes
// (cache_write_tokens, as OpenAI and OpenRouter report them); completion_tokens includes the reasoning tokens.
type oaiUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	TotalTokens         int64 `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens     int64 `json:"cached_tokens"`
		CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// oaiUsageOut is canonical usage as the caller's usage object.
func oaiUsageOut(u Usage) *oaiUsage {
	o := &oaiUsage{PromptTokens: u.Prompt(), CompletionTokens: u.Output, TotalTokens: u.Prompt() + u.Output}
	o.PromptTokensDetails.CachedTokens, o.PromptTokensDetails.CacheWriteTokens = u.CacheRead, u.CacheWrite
	o.CompletionTokensDetails.ReasoningTokens = u.Reasoning
	return o
}

// oaiUsageIn reads an upstream's usage object. Cached prompt tokens are prompt_tokens_details.cached_tokens
// (DeepSeek: prompt_cache_hit_tokens); prompt_tokens_details.cache_write_tokens are CacheWrite.
func oaiUsageIn(u gjson.Result) Usage {
	prompt := u.Get("prompt_tokens").Int()
	read := u.Get("prompt_tokens_details.cached_tokens").Int()
	if read == 0 {
		read = u.Get("prompt_cache_hit_tokens").Int()
	}
	write := u.Get("prompt_tokens_details.cache_write_tokens").Int()
	read, write = max(min(read, prompt), 0), max(min(write, prompt-read), 0)
	out := Usage{Input: max(prompt-read-write, 0), CacheRead: read, CacheWrite: write,
		Output: max(u.Get("completion_tokens").Int(), 0)}
	out.Reasoning = max(min(u.Get("completion_tokens_details.reasoning_tokens").Int(), out.Output), 0)
	return out
}

// oaiFinishIn maps an upstream finish_reason to canonical ("" when there is none). Words some compatible
// upstreams use (max_tokens, error) are read too; other words are a normal stop.
func oaiFinishIn(s string) FinishReason {
	switch s {
	case "":
		return ""
	case "length", "max_tokens":
		return FinishLength
	case "tool_calls", "function_call":
		return FinishToolCalls
	case "content_filter":
		return FinishFilter
	case "error":
		return FinishError
	}
	return FinishStop
}

// oaiFinishOut is a canonical finish reason as the caller's finish_reason: a stop after tool calls is
// tool_calls (what OpenAI callers test for), and an error, which chat completions has no word for, is stop.
func oaiFinishOut(f FinishReason, calledTools bool) string {
	switch f {
	case FinishLength:
		return "length"
	case FinishFilter:
		return "content_filter"
	case FinishToolCalls:
		return "tool_calls"
	}
	if calledTools && f != FinishError {
		return "tool_calls"
	}
	return "stop"
}

// oaiResponseID is the caller's completion id: chatcmpl- and the canonical id (kept when it has the prefix).
func oaiResponseID(id string) string {
	if strings.HasPrefix(id, "chatcmpl-") {
		return id
	}
	if id == "" {
		id = "tollgate"
	}
	return "chatcmpl-" + id
}

// oaiChoice0 is the choice a stream or answer is read from: index 0 (or the first one that has no index).
func oaiChoice0(choices gjson.Result) gjson.Result {
	var pick gjson.Result
	choices.ForEach(func(_, c gjson.Result) bool {
		if c.IsObject() && c.Get("index").Int() == 0 {
			pick = c
			return false
		}
		return true
	})
	return pick
}

// oaiStr is a field's text when it is a JSON string ("" otherwise: a wrong type is not read).
func oaiStr(r gjson.Result) string {
	if r.Type == gjson.String {
		return r.Str
	}
	return ""
}

// oaiReasoning is the reasoning text a compatible upstream puts beside content: reasoning_content (DeepSeek,
// vLLM) or reasoning (OpenRouter).
func oaiReasoning(m gjson.Result) string {
	if s := oaiStr(m.Get("reasoning_content")); s != "" {
		return s
	}
	return oaiStr(m.Get("reasoning"))
}

// oaiArgsIn is a tool call's arguments as canonical JSON text: the string OpenAI sends, or the raw object
// some compatible upstreams send ("{}" when none).
func oaiArgsIn(a gjson.Result) string {
	switch {
	case a.Type == gjson.String:
		if strings.TrimSpace(a.Str) == "" {
			return "{}"
		}
		return a.Str
	case a.IsObject():
		return a.Raw
	}
	return "{}"
}

// ParseResponse implements Codec: an upstream's chat.completion, choice 0, in canonical form — reasoning
// first, then the text (content, or a refusal), then the tool calls.
func (oaiCodec) ParseResponse(body []byte) (*Response, error) {
	if !gjson.ValidBytes(body) {
		return nil, errors.New("openai answer is not valid JSON")
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return nil, errors.New("openai answer is not a JSON object")
	}
	choices := root.Get("choices")
	if !choices.IsArray() {
		if e := root.Get("error"); e.Exists() && e.Type != gjson.Null {
			return nil, errors.New("openai answer is an error: " + oaiCodec{}.ParseError(0, body).Message)
		}
		return nil, errors.New("openai answer has no choices")
	}
	r := &Response{ID: oaiStr(root.Get("id")), Model: oaiStr(root.Get("model")), Parts: []Part{}}
	c := oaiChoice0(choices)
	msg := c.Get("message")
	if s := oaiReasoning(msg); s != "" {
		r.Parts = append(r.Parts, Part{Kind: PartThinking, Text: s})
	}
	content := msg.Get("content")
	if content.IsArray() { // some compatible upstreams answer content parts
		var b strings.Builder
		content.ForEach(func(_, p gjson.Result) bool {
			b.WriteString(oaiStr(p.Get("text")))
			return true
		})
		content = gjson.Result{Type: gjson.String, Str: b.String()}
	}
	if s := oaiStr(content); s != "" {
		r.Parts = append(r.Parts, Part{Kind: PartText, Text: s})
	}
	if s := oaiStr(msg.Get("refusal")); s != "" {
		r.Parts = append(r.Parts, Part{Kind: PartText, Text: s})
	}
	calls := 0
	ids := map[string]bool{}
	call := func(id string, fn gjson.Result) {
		if id == "" { // synthesized: call_<n>, unlike any id the upstream gave
			id = "call_" + strconv.Itoa(calls)
			for ids[id] {
				id += "_"
			}
		}
		ids[id] = true
		r.Parts = append(r.Parts, Part{Kind: PartToolCall, ToolCall: &ToolCall{ID: id,
			Name: oaiStr(fn.Get("name")), Args: oaiArgsIn(fn.Get("arguments"))}})
		calls++
	}
	msg.Get("tool_calls").ForEach(func(_, tc gjson.Result) bool {
		ids[oaiStr(tc.Get("id"))] = true
		return true
	})
	msg.Get("tool_calls").ForEach(func(_, tc gjson.Result) bool {
		call(oaiStr(tc.Get("id")), tc.Get("function"))
		return true
	})
	if fc := msg.Get("function_call"); fc.IsObject() {
		call("", fc)
	}
	r.Finish = oaiFinishIn(oaiStr(c.Get("finish_reason")))
	if r.Finish == "" {
		r.Finish = FinishStop
		if calls > 0 {
			r.Finish = FinishToolCalls
		}
	}
	if u := root.Get("usage"); u.IsObject() {
		r.Usage, r.HasUsage = oaiUsageIn(u), true
	}
	return r, nil
}

// oaiAnswer is a chat.completion as BuildResponse writes it.
type oaiAnswer struct {
	ID      string            `json:"id"`
	Object  string            `json:"object"`
	Created int64             `json:"created"`
	Model   string            `json:"model"`
	Choices []oaiAnswerChoice `json:"choices"`
	Usage   *oaiUsage         `json:"usage"`
}

// oaiAnswerChoice is the answer's one choice.
type oaiAnswerChoice struct {
	Index        int              `json:"index"`
	Message      oaiAnswerMessage `json:"message"`
	Logprobs     *struct{}        `json:"logprobs"`
	FinishReason string           `json:"finish_reason"`
}

// oaiAnswerMessage is the answer's message: content null when the model only called tools; the thinking
// text, which chat completions has no field for, in reasoning_content (what DeepSeek-style clients read).
type oaiAnswerMessage struct {
	Role             string        `json:"role"`
	Content          *string       `json:"content"`
	ReasoningContent string        `json:"reasoning_content,omitempty"`
	Refusal          *string       `json:"refusal"`
	ToolCalls        []oaiToolCall `json:"tool_calls,omitempty"`
}

// BuildResponse implements Codec: a canonical answer as a chat.completion. Text parts are joined into
// content, thinking parts into reasoning_content (redacted thinking has no readable form and is dropped).
// Usage is always written (zeros when the upstream reported none).
func (c oaiCodec) BuildResponse(req *Request, r *Response) ([]byte, error) {
	model := r.Model
	if model == "" && req != nil {
		model = req.Model
	}
	var text, thinking strings.Builder
	var hasText bool
	msg := oaiAnswerMessage{Role: "assistant"}
	for _, p := range r.Parts {
		switch p.Kind {
		case PartText:
			text.WriteString(p.Text)
			hasText = true
		case PartThinking:
			if thinking.Len() > 0 && p.Text != "" {
				thinking.WriteString("\n\n")
			}
			thinking.WriteString(p.Text)
		case PartToolCall:
			if p.ToolCall == nil {
				continue
			}
			id := p.ToolCall.ID
			if id == "" {
				id = "call_" + strconv.Itoa(len(msg.ToolCalls))
			}
			args := p.ToolCall.Args
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			msg.ToolCalls = append(msg.ToolCalls, oaiToolCall{ID: id, Type: "function", Function: oaiCall{Name: p.ToolCall.Name, Arguments: args}})
		}
	}
	if hasText || len(msg.ToolCalls) == 0 {
		s := text.String()
		msg.Content = &s
	}
	msg.ReasoningContent = thinking.String()
	ans := oaiAnswer{ID: oaiResponseID(r.ID), Object: "chat.completion", Created: c.unix(), Model: model,
		Choices: []oaiAnswerChoice{{Message: msg, FinishReason: oaiFinishOut(r.Finish, len(msg.ToolCalls) > 0)}},
		Usage:   oaiUsageOut(r.Usage)}
	return oaiMarshal(ans)
}

// oaiErrorBody is OpenAI's error shape: {"error":{"message","type","param","code"}}.
type oaiErrorBody struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

// oaiWordType maps an OpenAI error code or type word to canonical ("" for a word that says nothing specific,
// such as invalid_request_error, which OpenAI also uses for 401s and 404s).
func oaiWordType(w string) ErrorType {
	switch w {
	case "insufficient_quota", "billing_hard_limit_reached", "billing_not_active", "billing_error":
		return ErrQuota
	case "rate_limit_exceeded", "rate_limit_error", "requests", "tokens":
		return ErrRateLimit
	case "invalid_api_key", "authentication_error", "invalid_authentication", "unauthorized":
		return ErrAuthentication
	case "permission_error", "permission_denied", "unsupported_country_region_territory":
		return ErrPermission
	case "model_not_found", "not_found_error", "not_found":
		return ErrNotFound
	case "request_too_large":
		return ErrTooLarge
	case "server_error", "api_error", "internal_error", "internal_server_error":
		return ErrServer
	case "overloaded", "overloaded_error", "engine_overloaded", "service_unavailable":
		return ErrOverloaded
	case "timeout", "timeout_error":
		return ErrTimeout
	}
	return ""
}

// oaiStatusType is the canonical type an HTTP status implies ("" for 400 and the statuses that imply none).
func oaiStatusType(status int) ErrorType { return statusType(status) }

// ParseError implements Codec: an OpenAI error body (or an in-stream error chunk, status 0). The type comes
// from the code word first, then a specific type word, then the status; an unreadable body keeps its text as
// the message.
func (oaiCodec) ParseError(status int, body []byte) *Error {
	root := gjson.ParseBytes(body)
	if root.IsArray() { // some compatible upstreams wrap the error in an array
		root = root.Get("0")
	}
	e := root.Get("error")
	if !e.IsObject() {
		if s := oaiStr(e); s != "" {
			return oaiErrorFrom(status, "", "", s)
		}
		e = root // {"message": ..., "type": ...} without the wrapper
	}
	code := e.Get("code")
	codeWord := oaiStr(code)
	if code.Type == gjson.Number {
		codeWord = code.Raw
	}
	msg := oaiStr(e.Get("message"))
	if msg == "" && !gjson.ValidBytes(body) {
		msg = strings.TrimSpace(string(body))
		if len(msg) > 1000 {
			msg = msg[:1000]
		}
	}
	return oaiErrorFrom(status, oaiStr(e.Get("type")), codeWord, msg)
}

// oaiErrorFrom is the canonical error for a status, an OpenAI type word, a code word and a message.
func oaiErrorFrom(status int, typ, code, msg string) *Error {
	t := oaiWordType(code)
	if t == "" {
		t = oaiWordType(typ)
	}
	if t == "" {
		t = oaiStatusType(status)
	}
	if t == "" {
		t = ErrInvalidRequest
		if status == 0 && typ != "invalid_request_error" {
			t = ErrServer // an in-stream error that says nothing more
		}
	}
	if msg == "" {
		msg = http.StatusText(status)
		if msg == "" {
			msg = "upstream error"
		}
	}
	return &Error{Status: status, Type: t, Code: code, Message: msg}
}

// oaiErrorWords is the OpenAI type word and default code word for a canonical error type.
func oaiErrorWords(t ErrorType) (typ, code string) {
	switch t {
	case ErrAuthentication:
		return "authentication_error", "invalid_api_key"
	case ErrPermission:
		return "permission_error", ""
	case ErrNotFound:
		return "not_found_error", ""
	case ErrRateLimit:
		return "rate_limit_error", "rate_limit_exceeded"
	case ErrQuota:
		return "insufficient_quota", "insufficient_quota"
	case ErrTooLarge:
		return "invalid_request_error", "request_too_large"
	case ErrOverloaded:
		return "server_error", "overloaded"
	case ErrTimeout:
		return "server_error", "timeout"
	case ErrServer:
		return "server_error", ""
	}
	return "invalid_request_error", ""
}

// oaiErrorOut is e in OpenAI's error shape (the upstream's own code word kept when it had one).
func oaiErrorOut(e *Error) oaiErrorBody {
	if e == nil {
		e = &Error{Type: ErrServer, Message: "upstream error"}
	}
	var b oaiErrorBody
	typ, code := oaiErrorWords(e.Type)
	if e.Code != "" {
		code = e.Code
	}
	b.Error.Message, b.Error.Type = e.Message, typ
	if code != "" {
		b.Error.Code = &code
	}
	return b
}

// BuildError implements Codec: e as an OpenAI error body.
func (oaiCodec) BuildError(e *Error) []byte {
	b, _ := oaiMarshal(oaiErrorOut(e))
	return b
}

// oaiMarshal is v as JSON without HTML escaping (OpenAI writes <, > and & as they are), with no trailing
// newline. The values marshalled are the codec's own structs of plain values.
func oaiMarshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}

package convert

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// gemResponse is a GenerateContentResponse as the relay writes it: a whole answer, or one stream chunk.
type gemResponse struct {
	Candidates    []gemCandidate `json:"candidates,omitempty"`
	UsageMetadata *gemUsage      `json:"usageMetadata,omitempty"`
	ModelVersion  string         `json:"modelVersion,omitempty"`
	ResponseID    string         `json:"responseId,omitempty"`
}

// gemCandidate is the one candidate of an answer the relay writes.
type gemCandidate struct {
	Content      gemContent `json:"content"`
	FinishReason string     `json:"finishReason,omitempty"`
	Index        int        `json:"index"`
}

// gemUsage is usageMetadata: promptTokenCount counts every prompt token (cached ones too),
// candidatesTokenCount the answer without its thoughts.
type gemUsage struct {
	PromptTokenCount        int64 `json:"promptTokenCount"`
	CandidatesTokenCount    int64 `json:"candidatesTokenCount"`
	TotalTokenCount         int64 `json:"totalTokenCount"`
	CachedContentTokenCount int64 `json:"cachedContentTokenCount,omitempty"`
	ThoughtsTokenCount      int64 `json:"thoughtsTokenCount,omitempty"`
}

// gemUsageOut is canonical usage as usageMetadata.
func gemUsageOut(u Usage) *gemUsage {
	return &gemUsage{PromptTokenCount: u.Prompt(), CandidatesTokenCount: max(u.Output-u.Reasoning, 0),
		TotalTokenCount: u.Prompt() + u.Output, CachedContentTokenCount: u.CacheRead, ThoughtsTokenCount: u.Reasoning}
}

// gemUsageIn is usageMetadata as canonical usage: Input without the cached tokens (plus the tool-use prompt
// tokens, billed as input), Output with the thoughts.
func gemUsageIn(u gjson.Result) Usage {
	prompt, cached := u.Get("promptTokenCount").Int(), u.Get("cachedContentTokenCount").Int()
	thoughts := u.Get("thoughtsTokenCount").Int()
	return Usage{Input: max(prompt-cached, 0) + u.Get("toolUsePromptTokenCount").Int(), CacheRead: cached,
		Output: u.Get("candidatesTokenCount").Int() + thoughts, Reasoning: thoughts}
}

// gemFinishIn maps a finishReason; STOP after function calls is tool_calls (Gemini says STOP for those).
func gemFinishIn(reason string, calls bool) FinishReason {
	switch reason {
	case "MAX_TOKENS":
		return FinishLength
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY",
		"IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION":
		return FinishFilter
	}
	if calls {
		return FinishToolCalls
	}
	return FinishStop
}

// gemFinishOut is a canonical finish as a finishReason.
func gemFinishOut(f FinishReason) string {
	switch f {
	case FinishLength:
		return "MAX_TOKENS"
	case FinishFilter:
		return "SAFETY"
	case FinishError:
		return "OTHER"
	}
	return "STOP"
}

// gemCandidateOf is the candidate with index 0 (the relay asks for and answers with one).
func gemCandidateOf(r gjson.Result) gjson.Result {
	var c gjson.Result
	r.Get("candidates").ForEach(func(_, v gjson.Result) bool {
		if v.IsObject() && v.Get("index").Int() == 0 {
			c = v
			return false
		}
		return true
	})
	return c
}

// gemCallID is the id of the n-th call of an answer that gave none: stable, and unique across answers
// when the upstream gave a responseId (Anthropic refuses a history with two calls of one id).
func gemCallID(responseID string, n int) string {
	var b strings.Builder
	b.WriteString("call_")
	for _, c := range responseID {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			b.WriteRune(c)
		}
	}
	if b.Len() > len("call_") {
		b.WriteByte('_')
	}
	b.WriteString(strconv.Itoa(n))
	return b.String()
}

// ParseResponse reads a complete GenerateContentResponse: the first candidate's parts, its finish, usage.
func (gemCodec) ParseResponse(body []byte) (*Response, error) {
	if !gjson.ValidBytes(body) {
		return nil, errors.New("gemini answer: invalid JSON")
	}
	r := gjson.ParseBytes(body)
	if !r.IsObject() {
		return nil, errors.New("gemini answer: not an object")
	}
	if e := r.Get("error"); e.IsObject() {
		return nil, fmt.Errorf("gemini answer: error %s", e.Get("message").String())
	}
	out := &Response{ID: r.Get("responseId").String(), Model: r.Get("modelVersion").String(), Finish: FinishStop}
	cand := gemCandidateOf(r)
	calls := 0
	var err error
	cand.Get("content.parts").ForEach(func(_, p gjson.Result) bool {
		sig := p.Get("thoughtSignature").String()
		if fc := p.Get("functionCall"); fc.IsObject() {
			args := fc.Get("args")
			if args.Exists() && args.Type != gjson.Null && !args.IsObject() {
				err = errors.New("gemini answer: functionCall args is not an object")
				return false
			}
			id := fc.Get("id").String()
			if id == "" {
				id = gemCallID(out.ID, calls)
			}
			calls++
			out.Parts = append(out.Parts, Part{Kind: PartToolCall, Signature: sig,
				ToolCall: &ToolCall{ID: id, Name: fc.Get("name").String(), Args: argsText(json.RawMessage(args.Raw))}})
			return true
		}
		if t := p.Get("text"); t.Exists() && (t.Str != "" || sig != "") {
			kind := PartText
			if p.Get("thought").Bool() {
				kind = PartThinking
			}
			out.Parts = append(out.Parts, Part{Kind: kind, Text: t.Str, Signature: sig})
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	switch {
	case cand.Exists():
		out.Finish = gemFinishIn(cand.Get("finishReason").String(), calls > 0)
	case r.Get("promptFeedback.blockReason").String() != "":
		out.Finish = FinishFilter
	}
	if u := r.Get("usageMetadata"); u.IsObject() {
		out.Usage, out.HasUsage = gemUsageIn(u), true
	}
	return out, nil
}

// gemShowThoughts says whether the caller asked for thought summaries (includeThoughts): Gemini writes
// thought parts only then.
func gemShowThoughts(req *Request) bool {
	return req != nil && req.Reasoning != nil && req.Reasoning.Summary
}

// gemPartsOut is canonical answer parts as Gemini parts (thinking only when shown; redacted thinking has no
// Gemini form). An error is a call whose arguments are not a JSON object.
func gemPartsOut(parts []Part, thoughts bool) ([]gemPart, error) {
	out := make([]gemPart, 0, len(parts))
	for _, p := range parts {
		switch {
		case p.Kind == PartText:
			out = append(out, gemPart{Text: gemText(p.Text), ThoughtSignature: p.Signature})
		case p.Kind == PartThinking && thoughts:
			out = append(out, gemPart{Text: gemText(p.Text), Thought: true, ThoughtSignature: p.Signature})
		case p.Kind == PartToolCall && p.ToolCall != nil:
			args, ok := argsObject(p.ToolCall.Args)
			if !ok {
				return nil, fmt.Errorf("tool call %s: arguments are not a JSON object", p.ToolCall.ID)
			}
			out = append(out, gemPart{FunctionCall: &gemFunctionCall{ID: p.ToolCall.ID, Name: p.ToolCall.Name, Args: args},
				ThoughtSignature: p.Signature})
		}
	}
	return out, nil
}

// BuildResponse writes a complete GenerateContentResponse.
func (gemCodec) BuildResponse(req *Request, r *Response) ([]byte, error) {
	parts, err := gemPartsOut(r.Parts, gemShowThoughts(req))
	if err != nil {
		return nil, err
	}
	out := gemResponse{ModelVersion: r.Model, ResponseID: r.ID,
		Candidates: []gemCandidate{{Content: gemContent{Role: "model", Parts: parts}, FinishReason: gemFinishOut(r.Finish)}}}
	if r.HasUsage {
		out.UsageMetadata = gemUsageOut(r.Usage)
	}
	return json.Marshal(out)
}

// gemStatuses maps Google's status words to canonical error types.
var gemStatuses = map[string]ErrorType{
	"INVALID_ARGUMENT": ErrInvalidRequest, "FAILED_PRECONDITION": ErrInvalidRequest, "OUT_OF_RANGE": ErrInvalidRequest,
	"UNAUTHENTICATED": ErrAuthentication, "PERMISSION_DENIED": ErrPermission, "NOT_FOUND": ErrNotFound,
	"RESOURCE_EXHAUSTED": ErrRateLimit, "INTERNAL": ErrServer, "UNKNOWN": ErrServer, "DATA_LOSS": ErrServer,
	"ABORTED": ErrServer, "UNAVAILABLE": ErrOverloaded, "DEADLINE_EXCEEDED": ErrTimeout,
}

// gemErrorOf reads an {"error":{code, message, status, details}} object. Its code is the status when it
// has one (an in-stream error's code says more than the relay's 502 for it); else status, the HTTP status.
func gemErrorOf(e gjson.Result, status int) *Error {
	word := e.Get("status").String()
	if code := e.Get("code").Int(); code >= 100 && code <= 599 {
		status = int(code)
	}
	msg := e.Get("message").String()
	t, known := gemStatuses[word]
	if !known {
		t = gemTypeOfStatus(status)
	}
	switch {
	case status == http.StatusRequestEntityTooLarge:
		t = ErrTooLarge
	case t == ErrRateLimit && gemQuota(e, msg):
		t = ErrQuota
	}
	return &Error{Status: status, Type: t, Code: word, Message: msg}
}

// gemQuota says whether a RESOURCE_EXHAUSTED error is out of quota rather than a rate limit: the message
// speaks of quota or billing (Google's per-minute limits say so too, so a RetryInfo or a per-minute quota id
// in the details makes it a rate limit).
func gemQuota(e gjson.Result, msg string) bool {
	m := strings.ToLower(msg)
	if !strings.Contains(m, "quota") && !strings.Contains(m, "billing") {
		return false
	}
	retry := false
	e.Get("details").ForEach(func(_, d gjson.Result) bool {
		if strings.HasSuffix(d.Get("@type").String(), "RetryInfo") || strings.Contains(d.Raw, "PerMinute") {
			retry = true
		}
		return !retry
	})
	return !retry
}

// gemTypeOfStatus is the error type an HTTP status stands for.
func gemTypeOfStatus(status int) ErrorType {
	if t := statusType(status); t != "" && t != ErrQuota {
		return t
	}
	if status >= 400 && status < 500 {
		return ErrInvalidRequest
	}
	return ErrServer
}

// ParseError reads a Gemini error body: {"error":{...}}, or [{"error":{...}}] as streamGenerateContent
// without alt=sse answers. nil when the body holds no error object.
func (gemCodec) ParseError(status int, body []byte) *Error {
	r := gjson.ParseBytes(bytes.TrimSpace(body))
	if r.IsArray() {
		r = r.Get("0")
	}
	e := r.Get("error")
	if !e.IsObject() {
		return nil
	}
	return gemErrorOf(e, status)
}

// gemErrorBody is the error object Gemini writes: code (e.Status, or the type's usual status), message and
// status word (e.Code when it is one of Google's, else the type's).
type gemErrorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
	Details any    `json:"details,omitempty"` // [] in answers (as Google writes them), absent in stream chunks
}

// gemTypeWords are the status word and HTTP status each canonical error type is written with.
var gemTypeWords = map[ErrorType]struct {
	word   string
	status int
}{
	ErrInvalidRequest: {"INVALID_ARGUMENT", 400}, ErrAuthentication: {"UNAUTHENTICATED", 401},
	ErrPermission: {"PERMISSION_DENIED", 403}, ErrNotFound: {"NOT_FOUND", 404}, ErrRateLimit: {"RESOURCE_EXHAUSTED", 429},
	ErrQuota: {"RESOURCE_EXHAUSTED", 429}, ErrTooLarge: {"INVALID_ARGUMENT", 413}, ErrOverloaded: {"UNAVAILABLE", 503},
	ErrTimeout: {"DEADLINE_EXCEEDED", 504}, ErrServer: {"INTERNAL", 500},
}

// gemErrorObj is e as Gemini's error object.
func gemErrorObj(e *Error) gemErrorBody {
	if e == nil {
		e = &Error{Type: ErrServer}
	}
	tw, ok := gemTypeWords[e.Type]
	if !ok {
		tw = gemTypeWords[gemTypeOfStatus(e.Status)]
	}
	out := gemErrorBody{Code: e.Status, Message: e.Message, Status: tw.word}
	if out.Code == 0 {
		out.Code = tw.status
	}
	if _, google := gemStatuses[e.Code]; google {
		out.Status = e.Code
	}
	if out.Message == "" {
		out.Message = http.StatusText(out.Code)
	}
	return out
}

// BuildError writes e as Gemini's error body.
func (gemCodec) BuildError(e *Error) []byte {
	obj := gemErrorObj(e)
	obj.Details = []json.RawMessage{}
	b, _ := json.Marshal(map[string]gemErrorBody{"error": obj})
	return b
}

package convert

// The Responses API codec writing complete answers (the Response object); reading them is responses_parse.go,
// its errors are in responses_error.go. The output items written here are shared with the stream encoder
// (responses_stream.go), which repeats them in its done events and in response.completed.

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// rspKind is what one output item is.
type rspKind int

// Output item kinds.
const (
	rspKMessage   rspKind = iota // a message with one output_text part
	rspKReasoning                // a reasoning item (thinking, or redacted thinking as encrypted_content)
	rspKFunction                 // a function_call
	rspKCustom                   // a custom_tool_call (the caller declared a custom tool of that name)
	rspKShell                    // a local_shell_call (the caller declared local_shell)
)

// rspOut is one output item being written: the fields every kind needs, and the text or arguments so far.
type rspOut struct {
	kind   rspKind
	n      int // output_index
	id     string
	callID string
	name   string
	text   []byte // message text, reasoning summary text, or tool-call arguments (JSON text)
	sig    string // reasoning encrypted_content
	part   bool   // stream: the content or summary part has been added
	done   bool
}

// rspMessageItem is a message output item.
type rspMessageItem struct {
	ID      string           `json:"id"`
	Type    string           `json:"type"`
	Status  string           `json:"status"`
	Role    string           `json:"role"`
	Content []rspOutputTextP `json:"content"`
}

// rspOutputTextP is an output_text content part.
type rspOutputTextP struct {
	Type        string   `json:"type"`
	Text        string   `json:"text"`
	Annotations []string `json:"annotations"`
	Logprobs    []string `json:"logprobs"`
}

// rspReasoningItem is a reasoning output item.
type rspReasoningItem struct {
	ID               string           `json:"id"`
	Type             string           `json:"type"`
	Summary          []rspTextPartOut `json:"summary"`
	EncryptedContent string           `json:"encrypted_content,omitempty"`
}

// rspFunctionItem is a function_call output item.
type rspFunctionItem struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
}

// rspCustomItem is a custom_tool_call output item.
type rspCustomItem struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Status string `json:"status"`
	CallID string `json:"call_id"`
	Name   string `json:"name"`
	Input  string `json:"input"`
}

// rspShellItem is a local_shell_call output item.
type rspShellItem struct {
	ID     string         `json:"id"`
	Type   string         `json:"type"`
	Status string         `json:"status"`
	CallID string         `json:"call_id"`
	Action rspShellAction `json:"action"`
}

// rspShellAction is a local_shell_call's exec action.
type rspShellAction struct {
	Type             string            `json:"type"`
	Command          []string          `json:"command"`
	Env              map[string]string `json:"env"`
	WorkingDirectory string            `json:"working_directory,omitempty"`
	TimeoutMS        *int64            `json:"timeout_ms,omitempty"`
}

// item is the output item as the client sees it; done says whether it is complete (the full item, status
// completed) or just added (empty content, status in_progress).
func (o *rspOut) item(done bool) any {
	status := "in_progress"
	if done {
		status = "completed"
	}
	switch o.kind {
	case rspKReasoning:
		it := rspReasoningItem{ID: o.id, Type: "reasoning", Summary: []rspTextPartOut{}}
		if done {
			if len(o.text) > 0 {
				it.Summary = append(it.Summary, rspTextPartOut{Type: "summary_text", Text: string(o.text)})
			}
			it.EncryptedContent = o.sig
		}
		return it
	case rspKFunction:
		it := rspFunctionItem{ID: o.id, Type: "function_call", Status: status, CallID: o.callID, Name: o.name}
		if done {
			it.Arguments = o.args()
		}
		return it
	case rspKCustom:
		it := rspCustomItem{ID: o.id, Type: "custom_tool_call", Status: status, CallID: o.callID, Name: o.name}
		if done {
			it.Input = rspCustomInput(string(o.text))
		}
		return it
	case rspKShell:
		it := rspShellItem{ID: o.id, Type: "local_shell_call", Status: status, CallID: o.callID,
			Action: rspShellAction{Type: "exec", Command: []string{}, Env: map[string]string{}}}
		if done {
			it.Action = rspShellActionOf(string(o.text))
		}
		return it
	}
	it := rspMessageItem{ID: o.id, Type: "message", Status: status, Role: "assistant", Content: []rspOutputTextP{}}
	if done {
		it.Content = append(it.Content, rspTextP(string(o.text)))
	}
	return it
}

// args is a function call's arguments ("{}" when the model sent none).
func (o *rspOut) args() string {
	if len(o.text) == 0 {
		return "{}"
	}
	return string(o.text)
}

// rspTextP is an output_text part holding text.
func rspTextP(text string) rspOutputTextP {
	return rspOutputTextP{Type: "output_text", Text: text, Annotations: []string{}, Logprobs: []string{}}
}

// rspCustomInput is a custom tool call's input from canonical arguments: the "input" string; another JSON
// value under "input" as its JSON text; arguments without it as they are.
func rspCustomInput(args string) string {
	in := gjson.Get(args, "input")
	switch {
	case !in.Exists():
		return args
	case in.Type == gjson.String:
		return in.String()
	}
	return in.Raw
}

// rspShellActionOf is a local_shell_call's action from the local_shell function's arguments. A command
// sent as one string becomes a one-element argv.
func rspShellActionOf(args string) rspShellAction {
	a := rspShellAction{Type: "exec", Command: []string{}, Env: map[string]string{}}
	r := gjson.GetMany(args, "command", "workdir", "timeout_ms", "working_directory")
	switch {
	case r[0].IsArray():
		for _, c := range r[0].Array() {
			a.Command = append(a.Command, c.String())
		}
	case r[0].Type == gjson.String:
		a.Command = append(a.Command, r[0].String())
	}
	a.WorkingDirectory = r[1].String()
	if a.WorkingDirectory == "" {
		a.WorkingDirectory = r[3].String()
	}
	if r[2].Type == gjson.Number {
		ms := r[2].Int()
		a.TimeoutMS = &ms
	}
	return a
}

// rspToolKinds is which of the caller's tools are custom or local_shell (by the Parameters ParseRequest
// gave them): their calls go back as the items of their kind.
func rspToolKinds(req *Request) map[string]rspKind {
	kinds := map[string]rspKind{}
	if req == nil {
		return kinds
	}
	for _, t := range req.Tools {
		switch {
		case string(t.Parameters) == rspCustomParams:
			kinds[t.Name] = rspKCustom
		case t.Name == rspShellName && string(t.Parameters) == rspShellParams:
			kinds[t.Name] = rspKShell
		}
	}
	return kinds
}

// rspIDs names a response and its items: the response id keeps the upstream's id ("resp_" prefixed when it
// is another protocol's) and items are numbered after it.
type rspIDs struct{ resp, base string }

// rspNewIDs is the ids for an answer whose upstream id is id (synthesized from now when there is none).
func rspNewIDs(id string, now time.Time) rspIDs {
	if id == "" {
		id = strconv.FormatInt(now.UnixNano(), 36)
	}
	if !strings.HasPrefix(id, "resp_") {
		id = "resp_" + id
	}
	return rspIDs{resp: id, base: rspBase(strings.TrimPrefix(id, "resp_"))}
}

// rspBase is an id without its leading kind word ("msg_01AB" is "01AB", "chatcmpl-x9" is "x9"), to number
// output items after.
func rspBase(id string) string {
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case (c == '_' || c == '-') && i > 0 && i < len(id)-1:
			return id[i+1:]
		case c < 'a' || c > 'z':
			return id
		}
	}
	return id
}

// item is the id of output item n of the given kind.
func (ids rspIDs) item(kind rspKind, n int) string {
	prefix := [...]string{"msg_", "rs_", "fc_", "ctc_", "lsh_"}[kind]
	return prefix + ids.base + "_" + strconv.Itoa(n)
}

// rspNewOut is output item n for a canonical part kind (a tool call of a custom or local_shell tool takes
// that kind).
func rspNewOut(ids rspIDs, n int, p *Part, kinds map[string]rspKind) *rspOut {
	o := &rspOut{kind: rspKMessage, n: n}
	if p != nil {
		switch p.Kind {
		case PartThinking:
			o.kind, o.sig = rspKReasoning, p.Signature
		case PartRedactedThinking:
			o.kind, o.sig = rspKReasoning, rspRedactedPrefix+p.Data
		case PartToolCall:
			o.kind = rspKFunction
			if p.ToolCall != nil {
				o.callID, o.name = p.ToolCall.ID, p.ToolCall.Name
				if k, ok := kinds[o.name]; ok {
					o.kind = k
				}
			}
			if o.callID == "" {
				o.callID = "call_" + strconv.Itoa(n)
			}
		}
	}
	o.id = ids.item(o.kind, n)
	return o
}

// rspUsageOut is Responses usage: input_tokens is every prompt token, cached included.
type rspUsageOut struct {
	InputTokens         int64            `json:"input_tokens"`
	InputTokensDetails  rspInputDetails  `json:"input_tokens_details"`
	OutputTokens        int64            `json:"output_tokens"`
	OutputTokensDetails rspOutputDetails `json:"output_tokens_details"`
	TotalTokens         int64            `json:"total_tokens"`
}

// rspInputDetails is usage.input_tokens_details.
type rspInputDetails struct {
	CachedTokens int64 `json:"cached_tokens"`
}

// rspOutputDetails is usage.output_tokens_details.
type rspOutputDetails struct {
	ReasoningTokens int64 `json:"reasoning_tokens"`
}

// rspUsage is canonical usage in Responses terms.
func rspUsage(u Usage) *rspUsageOut {
	return &rspUsageOut{InputTokens: u.Prompt(), InputTokensDetails: rspInputDetails{CachedTokens: u.CacheRead},
		OutputTokens: u.Output, OutputTokensDetails: rspOutputDetails{ReasoningTokens: u.Reasoning},
		TotalTokens: u.Prompt() + u.Output}
}

// rspUsageOf reads Responses usage into canonical usage (Input without the cached tokens).
func rspUsageOf(u gjson.Result) Usage {
	r := gjson.GetMany(u.Raw, "input_tokens", "input_tokens_details.cached_tokens", "output_tokens", "output_tokens_details.reasoning_tokens")
	cached := max(r[1].Int(), 0)
	return Usage{Input: max(r[0].Int()-cached, 0), CacheRead: cached, Output: max(r[2].Int(), 0), Reasoning: max(r[3].Int(), 0)}
}

// rspResponse is the Response object, with the request echo fields SDKs read.
type rspResponse struct {
	ID                 string           `json:"id"`
	Object             string           `json:"object"`
	CreatedAt          int64            `json:"created_at"`
	Status             string           `json:"status"`
	Background         bool             `json:"background"`
	Error              *rspErrorObj     `json:"error"`
	IncompleteDetails  *rspIncomplete   `json:"incomplete_details"`
	Instructions       *string          `json:"instructions"`
	MaxOutputTokens    *int64           `json:"max_output_tokens"`
	Model              string           `json:"model"`
	Output             []any            `json:"output"`
	ParallelToolCalls  bool             `json:"parallel_tool_calls"`
	PreviousResponseID *string          `json:"previous_response_id"`
	Reasoning          rspReasoningEcho `json:"reasoning"`
	Store              bool             `json:"store"`
	Temperature        float64          `json:"temperature"`
	Text               rspTextOut       `json:"text"`
	ToolChoice         any              `json:"tool_choice"`
	Tools              []any            `json:"tools"`
	TopP               float64          `json:"top_p"`
	Truncation         string           `json:"truncation"`
	Usage              *rspUsageOut     `json:"usage"`
	User               *string          `json:"user"`
	Metadata           map[string]any   `json:"metadata"`
}

// rspErrorObj is a failed response's error.
type rspErrorObj struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// rspIncomplete is an incomplete response's reason.
type rspIncomplete struct {
	Reason string `json:"reason"`
}

// rspReasoningEcho is the response's reasoning options (null when not asked).
type rspReasoningEcho struct {
	Effort  *string `json:"effort"`
	Summary *string `json:"summary"`
}

// rspCustomToolEcho is a custom tool as the response repeats it.
type rspCustomToolEcho struct {
	Type        string `json:"type"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// rspTypeOnly is a tool or item with nothing but its type (local_shell).
type rspTypeOnly struct {
	Type string `json:"type"`
}

// rspNewResponse is the Response object for a client's request (req may be nil), with no output yet.
func rspNewResponse(req *Request, ids rspIDs, model string, created int64, status string) *rspResponse {
	resp := &rspResponse{ID: ids.resp, Object: "response", CreatedAt: created, Status: status, Model: model,
		Output: []any{}, ParallelToolCalls: true, Temperature: 1, TopP: 1, Truncation: "disabled",
		Text: rspTextOut{Format: rspFormatOut{Type: "text"}}, ToolChoice: "auto", Tools: []any{}, Metadata: map[string]any{}}
	if req == nil {
		return resp
	}
	if resp.Model == "" {
		resp.Model = req.Model
	}
	if req.MaxTokens > 0 {
		n := req.MaxTokens
		resp.MaxOutputTokens = &n
	}
	if req.ParallelToolCalls != nil {
		resp.ParallelToolCalls = *req.ParallelToolCalls
	}
	if req.Temperature != nil {
		resp.Temperature = *req.Temperature
	}
	if req.TopP != nil {
		resp.TopP = *req.TopP
	}
	if rs := req.Reasoning; rs != nil && rs.Enabled {
		if rs.Effort != "" {
			e := rs.Effort
			resp.Reasoning.Effort = &e
		}
		if rs.Summary {
			s := "auto"
			resp.Reasoning.Summary = &s
		}
	}
	if rf := req.ResponseFormat; rf != nil && rf.Type != "" {
		resp.Text.Format = rspFormatOut{Type: rf.Type}
		if rf.Type == "json_schema" {
			strict := rf.Strict
			resp.Text.Format.Name, resp.Text.Format.Schema, resp.Text.Format.Strict = rf.Name, rf.Schema, &strict
		}
	}
	if tc := req.ToolChoice; tc != nil {
		switch tc.Mode {
		case ToolNamed:
			resp.ToolChoice = rspToolChoiceIn{Type: "function", Name: tc.Name}
		case ToolNone, ToolRequired:
			resp.ToolChoice = string(tc.Mode)
		}
	}
	kinds := rspToolKinds(req)
	for _, t := range req.Tools {
		switch kinds[t.Name] {
		case rspKCustom:
			resp.Tools = append(resp.Tools, rspCustomToolEcho{Type: "custom", Name: t.Name, Description: t.Description})
		case rspKShell:
			resp.Tools = append(resp.Tools, rspTypeOnly{Type: "local_shell"})
		default:
			params := t.Parameters
			if !rspPresent(params) {
				params = json.RawMessage(`{}`)
			}
			resp.Tools = append(resp.Tools, rspFuncToolOut{Type: "function", Name: t.Name, Description: t.Description, Parameters: params, Strict: t.Strict})
		}
	}
	if req.User != "" {
		u := req.User
		resp.User = &u
	}
	return resp
}

// finish sets the response's terminal status from a canonical finish reason: length and content_filter are
// incomplete, error is failed, anything else completed.
func (resp *rspResponse) finish(f FinishReason) {
	switch f {
	case FinishLength:
		resp.Status, resp.IncompleteDetails = "incomplete", &rspIncomplete{Reason: "max_output_tokens"}
	case FinishFilter:
		resp.Status, resp.IncompleteDetails = "incomplete", &rspIncomplete{Reason: "content_filter"}
	case FinishError:
		resp.Status, resp.Error = "failed", &rspErrorObj{Code: "server_error", Message: "the upstream ended the answer with an error"}
	default:
		resp.Status = "completed"
	}
}

// BuildResponse implements Codec: a canonical answer as a Response object. Each text part is a message
// item, each thinking part a reasoning item, each tool call an item of its tool's kind.
func (rspCodec) BuildResponse(req *Request, r *Response) ([]byte, error) {
	now := time.Now()
	ids := rspNewIDs(r.ID, now)
	resp := rspNewResponse(req, ids, r.Model, now.Unix(), "completed")
	kinds := rspToolKinds(req)
	for i := range r.Parts {
		p := &r.Parts[i]
		o := rspNewOut(ids, len(resp.Output), p, kinds)
		switch p.Kind {
		case PartText, PartThinking:
			o.text = []byte(p.Text)
		case PartToolCall:
			if p.ToolCall != nil {
				o.text = []byte(p.ToolCall.Args)
			}
		case PartRedactedThinking:
		default:
			continue
		}
		resp.Output = append(resp.Output, o.item(true))
	}
	resp.finish(r.Finish)
	resp.Usage = rspUsage(r.Usage)
	return json.Marshal(resp)
}

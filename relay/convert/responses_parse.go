package convert

// Reading a Responses upstream's complete answer (the Response object) into canonical form; writing one is
// in responses_answer.go.

import (
	"strings"

	"github.com/tidwall/gjson"
)

// ParseResponse implements Codec: a Responses upstream's Response object in canonical form.
func (rspCodec) ParseResponse(body []byte) (*Response, error) {
	if !gjson.ValidBytes(body) {
		return nil, &Invalid{Field: "body", Why: "the upstream answer is not JSON"}
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return nil, &Invalid{Field: "body", Why: "the upstream answer is not a Response object"}
	}
	r := &Response{ID: root.Get("id").String(), Model: root.Get("model").String()}
	tools := false
	for _, it := range root.Get("output").Array() {
		p, ok := rspItemPart(it)
		if !ok {
			continue
		}
		if p.Kind == PartToolCall {
			tools = true
		}
		if p.Kind == PartText && it.Get("type").String() == "message" {
			// One text part per content part.
			for _, c := range it.Get("content").Array() {
				if t, ok := rspContentText(c); ok {
					r.Parts = append(r.Parts, Part{Kind: PartText, Text: t})
				}
			}
			continue
		}
		r.Parts = append(r.Parts, p)
	}
	r.Finish = rspFinishOf(root, tools)
	if u := root.Get("usage"); u.IsObject() {
		r.Usage, r.HasUsage = rspUsageOf(u), true
	}
	return r, nil
}

// rspContentText is the text of an output_text or refusal content part.
func rspContentText(c gjson.Result) (string, bool) {
	switch c.Get("type").String() {
	case "output_text":
		return c.Get("text").String(), true
	case "refusal":
		return c.Get("refusal").String(), true
	}
	return "", false
}

// rspItemPart is an output item as a canonical part (a message is one text part here; ParseResponse splits
// it by content part). ok is false for items with no canonical equivalent (hosted tool calls) and for empty
// reasoning.
func rspItemPart(it gjson.Result) (Part, bool) {
	switch it.Get("type").String() {
	case "message":
		return Part{Kind: PartText}, true
	case "reasoning":
		var texts []string
		for _, s := range it.Get("summary").Array() {
			if t := s.Get("text").String(); t != "" {
				texts = append(texts, t)
			}
		}
		p := Part{Kind: PartThinking, Text: strings.Join(texts, "\n\n")}
		if enc := it.Get("encrypted_content").String(); enc != "" {
			p.Signature = rspSigPrefix + enc
		}
		return p, p.Text != "" || p.Signature != ""
	case "function_call":
		args := it.Get("arguments").String()
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		return Part{Kind: PartToolCall, ToolCall: &ToolCall{ID: rspCallID(it), Name: it.Get("name").String(), Args: args}}, true
	case "custom_tool_call":
		return Part{Kind: PartToolCall, ToolCall: &ToolCall{ID: rspCallID(it), Name: it.Get("name").String(), Args: rspCustomArgs(it.Get("input").String())}}, true
	case "local_shell_call":
		return Part{Kind: PartToolCall, ToolCall: &ToolCall{ID: rspCallID(it), Name: rspShellName, Args: rspShellArgsOf(it.Get("action"))}}, true
	}
	return Part{}, false
}

// rspCallID is a tool call item's call_id (its item id when it has none).
func rspCallID(it gjson.Result) string {
	if id := it.Get("call_id").String(); id != "" {
		return id
	}
	return it.Get("id").String()
}

// rspShellArgsOf is a local_shell_call action (as read from an upstream) as the local_shell function's
// arguments.
func rspShellArgsOf(action gjson.Result) string {
	a := &rspActionIn{WorkingDirectory: action.Get("working_directory").String()}
	for _, c := range action.Get("command").Array() {
		a.Command = append(a.Command, c.String())
	}
	if t := action.Get("timeout_ms"); t.Type == gjson.Number {
		ms := t.Int()
		a.TimeoutMS = &ms
	}
	return rspShellArgs(a)
}

// rspFinishOf is a Response object's finish reason: incomplete for max_output_tokens is length, for the
// content filter content_filter; failed is error; completed with tool calls is tool_calls.
func rspFinishOf(resp gjson.Result, tools bool) FinishReason {
	switch resp.Get("status").String() {
	case "incomplete":
		switch resp.Get("incomplete_details.reason").String() {
		case "max_output_tokens":
			return FinishLength
		case "content_filter":
			return FinishFilter
		}
	case "failed", "cancelled":
		return FinishError
	}
	if tools {
		return FinishToolCalls
	}
	return FinishStop
}

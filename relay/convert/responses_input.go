package convert

import (
	"encoding/json"
	"fmt"
	"strings"
)

// rspInput accumulates the canonical conversation while input items are read.
type rspInput struct {
	r     *Request
	calls map[string]string // call_id → tool name, to name tool results
}

// add appends a part to the conversation, joining the last message when it has the same role.
func (in *rspInput) add(role Role, p Part) {
	if n := len(in.r.Messages); n > 0 && in.r.Messages[n-1].Role == role {
		in.r.Messages[n-1].Parts = append(in.r.Messages[n-1].Parts, p)
		return
	}
	in.r.Messages = append(in.r.Messages, Message{Role: role, Parts: []Part{p}})
}

// call appends an assistant tool call and remembers its name.
func (in *rspInput) call(id, name, args string) {
	in.calls[id] = name
	in.add(RoleAssistant, Part{Kind: PartToolCall, ToolCall: &ToolCall{ID: id, Name: name, Args: args}})
}

// rspParseInput reads input: a string (one user message) or an array of items.
func rspParseInput(raw json.RawMessage, r *Request) error {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		r.Messages = append(r.Messages, Message{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: s}}})
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return &Invalid{Field: "input", Why: "must be a string or an array of items"}
	}
	in := &rspInput{r: r, calls: map[string]string{}}
	for i, item := range items {
		if err := in.item(item, i); err != nil {
			return err
		}
	}
	return nil
}

// item reads input[i].
func (in *rspInput) item(raw json.RawMessage, i int) error {
	field := fmt.Sprintf("input[%d]", i)
	var it rspItemIn
	if err := rspDecode(raw, &it, field); err != nil {
		return err
	}
	switch it.Type {
	case "message":
		return in.message(&it, field)
	case "":
		if it.Role == "" {
			return &Invalid{Field: field + ".type", Why: "is required"}
		}
		return in.message(&it, field)
	case "function_call":
		if it.CallID == "" {
			return &Invalid{Field: field + ".call_id", Why: "is required"}
		}
		if it.Name == "" {
			return &Invalid{Field: field + ".name", Why: "is required"}
		}
		args := "{}"
		if it.Arguments != nil && strings.TrimSpace(*it.Arguments) != "" {
			args = *it.Arguments
			if !json.Valid([]byte(args)) {
				return &Invalid{Field: field + ".arguments", Why: "is not JSON"}
			}
		}
		in.call(it.CallID, it.Name, args)
	case "custom_tool_call":
		if it.CallID == "" {
			return &Invalid{Field: field + ".call_id", Why: "is required"}
		}
		if it.Name == "" {
			return &Invalid{Field: field + ".name", Why: "is required"}
		}
		input := ""
		if it.Input != nil {
			input = *it.Input
		}
		in.call(it.CallID, it.Name, rspCustomArgs(input))
	case "local_shell_call":
		id := it.CallID
		if id == "" {
			id = it.ID
		}
		if id == "" {
			return &Invalid{Field: field + ".call_id", Why: "is required"}
		}
		in.call(id, rspShellName, rspShellArgs(it.Action))
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
		id := it.CallID
		if id == "" && it.Type == "local_shell_call_output" {
			id = it.ID
		}
		if id == "" {
			return &Invalid{Field: field + ".call_id", Why: "is required"}
		}
		res := &ToolResult{CallID: id, Name: in.calls[id]}
		var legacy struct {
			Content *string `json:"content"`
			Success *bool   `json:"success"`
		}
		if json.Unmarshal(it.Output, &legacy) == nil && legacy.Content != nil {
			// Older Codex builds sent a failed call's output as {content, success: false}.
			res.Content = []Part{{Kind: PartText, Text: *legacy.Content}}
			res.IsError = legacy.Success != nil && !*legacy.Success
		} else {
			content, err := rspOutputParts(it.Output, field+".output")
			if err != nil {
				return err
			}
			res.Content = content
		}
		in.add(RoleUser, Part{Kind: PartToolResult, ToolResult: res})
	case "reasoning":
		in.reasoning(&it)
	case "item_reference":
		return rspRefuse(field+".type", "item references point at stored items; "+rspNoState)
	default:
		return rspRefuse(field+".type", fmt.Sprintf("the item type %q has no equivalent", it.Type))
	}
	return nil
}

// reasoning reads a reasoning item as an assistant thinking part (or redacted thinking, when the encoder
// wrote its encrypted_content for one).
func (in *rspInput) reasoning(it *rspItemIn) {
	enc := ""
	if it.EncryptedContent != nil {
		enc = *it.EncryptedContent
	}
	if data, ok := strings.CutPrefix(enc, rspRedactedPrefix); ok {
		in.add(RoleAssistant, Part{Kind: PartRedactedThinking, Data: data})
		return
	}
	texts := make([]string, 0, len(it.Summary))
	for _, s := range it.Summary {
		if s.Text != "" {
			texts = append(texts, s.Text)
		}
	}
	if len(texts) == 0 && rspPresent(it.Content) {
		// Raw reasoning (reasoning_text parts) when there is no summary.
		var content []rspSummaryIn
		_ = json.Unmarshal(it.Content, &content)
		for _, c := range content {
			if c.Text != "" {
				texts = append(texts, c.Text)
			}
		}
	}
	text := strings.Join(texts, "\n\n")
	if text == "" && enc == "" {
		return // nothing to carry
	}
	in.add(RoleAssistant, Part{Kind: PartThinking, Text: text, Signature: enc})
}

// message reads a message item: system and developer text joins System, user and assistant content the
// conversation.
func (in *rspInput) message(it *rspItemIn, field string) error {
	var role Role
	switch it.Role {
	case "system", "developer":
		parts, err := rspContent(it.Content, field+".content")
		if err != nil {
			return err
		}
		for j, p := range parts {
			if p.Kind != PartText {
				return rspRefuse(fmt.Sprintf("%s.content[%d].type", field, j), "system and developer messages carry text only")
			}
		}
		in.r.System = append(in.r.System, parts...)
		return nil
	case "user":
		role = RoleUser
	case "assistant":
		role = RoleAssistant
	case "":
		return &Invalid{Field: field + ".role", Why: "is required"}
	default:
		return &Invalid{Field: field + ".role", Why: fmt.Sprintf("unknown role %q", it.Role)}
	}
	parts, err := rspContent(it.Content, field+".content")
	if err != nil {
		return err
	}
	for _, p := range parts {
		in.add(role, p)
	}
	return nil
}

// rspContent reads message content: a string or an array of parts.
func rspContent(raw json.RawMessage, field string) ([]Part, error) {
	if !rspPresent(raw) {
		return nil, &Invalid{Field: field, Why: "is required"}
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []Part{{Kind: PartText, Text: s}}, nil
	}
	return rspParts(raw, field)
}

// rspOutputParts reads a tool output: a string or an array of input_text / input_image parts.
func rspOutputParts(raw json.RawMessage, field string) ([]Part, error) {
	if !rspPresent(raw) {
		return []Part{{Kind: PartText, Text: ""}}, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []Part{{Kind: PartText, Text: s}}, nil
	}
	return rspParts(raw, field)
}

// rspParts reads an array of content parts.
func rspParts(raw json.RawMessage, field string) ([]Part, error) {
	var parts []json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, &Invalid{Field: field, Why: "must be a string or an array of parts"}
	}
	out := make([]Part, 0, len(parts))
	for j, pr := range parts {
		pf := fmt.Sprintf("%s[%d]", field, j)
		var p rspPartIn
		if err := rspDecode(pr, &p, pf); err != nil {
			return nil, err
		}
		switch p.Type {
		case "input_text", "output_text", "text", "summary_text":
			out = append(out, Part{Kind: PartText, Text: p.Text})
		case "refusal":
			out = append(out, Part{Kind: PartText, Text: p.Refusal})
		case "input_image":
			if p.ImageURL == nil || *p.ImageURL == "" {
				if p.FileID != "" {
					return nil, rspRefuse(pf+".file_id", "the gateway cannot read files uploaded to OpenAI")
				}
				return nil, &Invalid{Field: pf + ".image_url", Why: "is required"}
			}
			img, err := rspImage(*p.ImageURL, p.Detail, pf+".image_url")
			if err != nil {
				return nil, err
			}
			out = append(out, Part{Kind: PartImage, Image: img})
		case "":
			return nil, &Invalid{Field: pf + ".type", Why: "is required"}
		default:
			return nil, rspRefuse(pf+".type", fmt.Sprintf("the content type %q has no equivalent", p.Type))
		}
	}
	return out, nil
}

// rspImage reads an image_url: a URL, or a base64 data: URL split into its media type and data.
func rspImage(url, detail, field string) (*Image, error) {
	rest, ok := strings.CutPrefix(url, "data:")
	if !ok {
		return &Image{URL: url, Detail: detail}, nil
	}
	meta, data, ok := strings.Cut(rest, ",")
	mt, isB64 := strings.CutSuffix(meta, ";base64")
	if !ok || !isB64 || data == "" {
		return nil, &Invalid{Field: field, Why: "a data: URL must be base64 (data:<type>;base64,<data>)"}
	}
	return &Image{MediaType: mt, Data: data, Detail: detail}, nil
}

// rspCustomArgs is a custom tool call's input as canonical arguments: {"input": <the string>}.
func rspCustomArgs(input string) string {
	b, _ := json.Marshal(struct {
		Input string `json:"input"`
	}{input})
	return string(b)
}

// rspShellArgs is a local_shell_call's action as canonical arguments: {command, workdir?, timeout_ms?}.
func rspShellArgs(a *rspActionIn) string {
	v := rspShellArgsOut{Command: []string{}}
	if a != nil {
		if a.Command != nil {
			v.Command = a.Command
		}
		v.Workdir = a.WorkingDirectory
		v.TimeoutMS = a.TimeoutMS
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// rspShellArgsOut is the arguments of the local_shell function.
type rspShellArgsOut struct {
	Command   []string `json:"command"`
	Workdir   string   `json:"workdir,omitempty"`
	TimeoutMS *int64   `json:"timeout_ms,omitempty"`
}

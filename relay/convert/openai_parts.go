package convert

// Reading the parts of OpenAI chat messages: text, images, tool calls and their arguments.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// oaiAllResults says whether m is a user message of tool results only (where the next tool message joins).
func oaiAllResults(m Message) bool {
	if m.Role != RoleUser || len(m.Parts) == 0 {
		return false
	}
	for _, p := range m.Parts {
		if p.Kind != PartToolResult {
			return false
		}
	}
	return true
}

// oaiContentParts reads a content field (string, array of parts or null) into raw parts; a string is one text
// part.
func oaiContentParts(raw json.RawMessage, field string) ([]oaiPart, error) {
	raw = bytes.TrimSpace(raw)
	if !oaiGiven(raw) {
		return nil, nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, &Invalid{Field: field, Why: "is not a valid string"}
		}
		if s == "" {
			return nil, nil
		}
		return []oaiPart{{Type: "text", Text: s}}, nil
	case '[':
		var parts []oaiPart
		if err := json.Unmarshal(raw, &parts); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) && te.Field != "" {
				return nil, &Invalid{Field: field + "[]." + te.Field, Why: "must be " + oaiTypeWord(te.Type.Kind().String())}
			}
			return nil, &Invalid{Field: field, Why: "must be an array of content parts"}
		}
		return parts, nil
	}
	return nil, &Invalid{Field: field, Why: "must be a string or an array of content parts"}
}

// oaiTextParts reads content that may only hold text (system, developer and tool messages).
func oaiTextParts(raw json.RawMessage, field string) ([]Part, error) {
	parts, err := oaiContentParts(raw, field)
	if err != nil {
		return nil, err
	}
	var out []Part
	for j, p := range parts {
		if p.Type != "text" {
			return nil, &Invalid{Field: fmt.Sprintf("%s[%d].type", field, j), Why: fmt.Sprintf("%q parts are not allowed here (text only)", p.Type)}
		}
		out = append(out, Part{Kind: PartText, Text: p.Text})
	}
	return out, nil
}

// oaiUserParts reads a user message's content: text and images; audio and files are refused.
func oaiUserParts(raw json.RawMessage, field string) ([]Part, error) {
	parts, err := oaiContentParts(raw, field)
	if err != nil {
		return nil, err
	}
	out := make([]Part, 0, len(parts))
	for j, p := range parts {
		at := fmt.Sprintf("%s[%d]", field, j)
		switch p.Type {
		case "text":
			out = append(out, Part{Kind: PartText, Text: p.Text})
		case "image_url":
			img, err := oaiParseImage(p.ImageURL, at+".image_url")
			if err != nil {
				return nil, err
			}
			out = append(out, Part{Kind: PartImage, Image: img})
		case "input_audio", "file":
			return nil, oaiUnsupported(at+".type", fmt.Sprintf("%q parts cannot be translated to another protocol", p.Type))
		default:
			return nil, &Invalid{Field: at + ".type", Why: fmt.Sprintf("%q is not a known content part type", p.Type)}
		}
	}
	return out, nil
}

// oaiParseImage reads an image_url ({url, detail} or a bare URL string); a data: URL becomes base64 Data with
// its MediaType.
func oaiParseImage(raw json.RawMessage, field string) (*Image, error) {
	var u oaiImageURL
	if err := json.Unmarshal(raw, &u); err != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, &Invalid{Field: field, Why: "must be an object {url, detail}"}
		}
		u.URL = s
	}
	if u.URL == "" {
		return nil, &Invalid{Field: field + ".url", Why: "is required"}
	}
	img := &Image{URL: u.URL, Detail: u.Detail}
	if rest, ok := strings.CutPrefix(u.URL, "data:"); ok {
		if meta, data, ok := strings.Cut(rest, ","); ok {
			if mt, ok := strings.CutSuffix(meta, ";base64"); ok {
				img.URL, img.MediaType, img.Data = "", mt, data
			}
		}
	}
	return img, nil
}

// oaiAssistantParts reads an assistant message: text (content parts, refusal), tool calls and the legacy
// function_call (an id is synthesized, remembered in lastFn for the function message that answers it).
func oaiAssistantParts(m *oaiMessage, at string, i int, names, lastFn map[string]string) ([]Part, error) {
	raw, err := oaiContentParts(m.Content, at+".content")
	if err != nil {
		return nil, err
	}
	var parts []Part
	for j, p := range raw {
		switch p.Type {
		case "text":
			parts = append(parts, Part{Kind: PartText, Text: p.Text})
		case "refusal":
			parts = append(parts, Part{Kind: PartText, Text: p.Refusal})
		default:
			return nil, &Invalid{Field: fmt.Sprintf("%s.content[%d].type", at, j), Why: fmt.Sprintf("%q parts are not allowed in assistant messages", p.Type)}
		}
	}
	if m.Refusal != "" {
		parts = append(parts, Part{Kind: PartText, Text: m.Refusal})
	}
	for j, tc := range m.ToolCalls {
		field := fmt.Sprintf("%s.tool_calls[%d]", at, j)
		if tc.Type != "" && tc.Type != "function" {
			return nil, oaiUnsupported(field+".type", fmt.Sprintf("%q tool calls cannot be translated to another protocol", tc.Type))
		}
		id := tc.ID
		if id == "" {
			id = "call_" + strconv.Itoa(i) + "_" + strconv.Itoa(j)
		}
		args, err := oaiArgs(tc.Function.Arguments, field+".function.arguments")
		if err != nil {
			return nil, err
		}
		names[id] = tc.Function.Name
		parts = append(parts, Part{Kind: PartToolCall, ToolCall: &ToolCall{ID: id, Name: tc.Function.Name, Args: args}})
	}
	if fc := m.FunctionCall; fc != nil {
		args, err := oaiArgs(fc.Arguments, at+".function_call.arguments")
		if err != nil {
			return nil, err
		}
		id := "call_" + strconv.Itoa(i)
		lastFn[fc.Name], names[id] = id, fc.Name
		parts = append(parts, Part{Kind: PartToolCall, ToolCall: &ToolCall{ID: id, Name: fc.Name, Args: args}})
	}
	return parts, nil
}

// oaiArgs checks a tool call's arguments text: JSON ("" is "{}").
func oaiArgs(args, field string) (string, error) {
	if strings.TrimSpace(args) == "" {
		return "{}", nil
	}
	if !json.Valid([]byte(args)) {
		return "", &Invalid{Field: field, Why: "is not valid JSON"}
	}
	return args, nil
}

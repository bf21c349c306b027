package convert

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"tollgate/relay/adaptor"
)

// gemRequest is a generateContent body as the relay writes it: camelCase, no model (it is in the URL).
type gemRequest struct {
	Contents          []gemContent   `json:"contents"`
	SystemInstruction *gemContent    `json:"systemInstruction,omitempty"`
	Tools             []gemTool      `json:"tools,omitempty"`
	ToolConfig        *gemToolConfig `json:"toolConfig,omitempty"`
	GenerationConfig  *gemGenConfig  `json:"generationConfig,omitempty"`
}

// gemContent is one Content: a role (user, model; none in systemInstruction) and its parts.
type gemContent struct {
	Role  string    `json:"role,omitempty"`
	Parts []gemPart `json:"parts"`
}

// gemPart is one Part as the relay writes it, in requests and answers. Text is a pointer so that an empty
// text (with a signature, or the last chunk of a stream) is still written.
type gemPart struct {
	Text             *string              `json:"text,omitempty"`
	Thought          bool                 `json:"thought,omitempty"`
	InlineData       *gemBlob             `json:"inlineData,omitempty"`
	FileData         *gemFileData         `json:"fileData,omitempty"`
	FunctionCall     *gemFunctionCall     `json:"functionCall,omitempty"`
	FunctionResponse *gemFunctionResponse `json:"functionResponse,omitempty"`
	ThoughtSignature string               `json:"thoughtSignature,omitempty"`
}

// gemBlob is inlineData: base64 bytes and their media type.
type gemBlob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

// gemFileData is fileData: a URI and its media type.
type gemFileData struct {
	MimeType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}

// gemFunctionCall is a functionCall part: args is always an object.
type gemFunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// gemFunctionResponse is a functionResponse part: response is always an object.
type gemFunctionResponse struct {
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

// gemSkipSignature is the value Google documents for a functionCall part that carries no thought signature
// of its own (history written by another model): Gemini 3 models refuse such calls without one.
const gemSkipSignature = "skip_thought_signature_validator"

// gemText is a pointer to a copy of s, for gemPart.Text.
func gemText(s string) *string { return &s }

// BuildRequest writes a generateContent body for a Gemini upstream (errors: *Unsupported).
func (gemCodec) BuildRequest(r *Request) ([]byte, error) {
	var out gemRequest
	var err error
	for _, p := range r.System {
		if p.Kind == PartText && p.Text != "" {
			if out.SystemInstruction == nil {
				out.SystemInstruction = &gemContent{}
			}
			out.SystemInstruction.Parts = append(out.SystemInstruction.Parts, gemPart{Text: gemText(p.Text)})
		}
	}
	if out.Contents, err = gemBuildContents(r); err != nil {
		return nil, err
	}
	if err = gemBuildTools(r, &out); err != nil {
		return nil, err
	}
	if out.GenerationConfig, err = gemBuildGenConfig(r); err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

// gemBuildContents writes the conversation: consecutive parts of one role in one content (parallel calls
// in one model content, their results in one user content), tool results as user functionResponse parts,
// thinking from other protocols left out (its signature is not Gemini's).
func gemBuildContents(r *Request) ([]gemContent, error) {
	names := map[string]string{} // call id → function name: Gemini matches results by name
	for _, m := range r.Messages {
		for _, p := range m.Parts {
			if p.Kind == PartToolCall && p.ToolCall != nil {
				names[p.ToolCall.ID] = p.ToolCall.Name
			}
		}
	}
	var out []gemContent
	add := func(role string, gp gemPart) {
		if len(out) == 0 || out[len(out)-1].Role != role {
			out = append(out, gemContent{Role: role})
		}
		out[len(out)-1].Parts = append(out[len(out)-1].Parts, gp)
	}
	for i, m := range r.Messages {
		role := "user"
		if m.Role == RoleAssistant {
			role = "model"
		}
		for j, p := range m.Parts {
			switch {
			case p.Kind == PartText && (p.Text != "" || p.Signature != ""):
				add(role, gemPart{Text: gemText(p.Text), ThoughtSignature: p.Signature})
			case p.Kind == PartImage && p.Image != nil:
				gp, err := gemImagePart(p.Image, fmt.Sprintf("messages[%d].content[%d]", i, j))
				if err != nil {
					return nil, err
				}
				add(role, gp)
			case p.Kind == PartToolCall && p.ToolCall != nil:
				args, ok := argsObject(p.ToolCall.Args)
				if !ok {
					return nil, &Unsupported{Field: fmt.Sprintf("messages[%d].tool_calls[%s].arguments", i, p.ToolCall.ID),
						Target: adaptor.Gemini, Why: "Gemini takes call arguments as a JSON object"}
				}
				add("model", gemPart{FunctionCall: &gemFunctionCall{Name: p.ToolCall.Name, Args: args},
					ThoughtSignature: p.Signature})
			case p.Kind == PartToolResult && p.ToolResult != nil:
				tr := p.ToolResult
				name := tr.Name
				if name == "" {
					name = names[tr.CallID]
				}
				if name == "" {
					return nil, &Unsupported{Field: fmt.Sprintf("messages[%d].tool_call_id", i), Target: adaptor.Gemini,
						Why: "Gemini matches a tool result to its call by function name, and no call " + strconv.Quote(tr.CallID) + " precedes it"}
				}
				resp, imgs := gemResultResponse(tr)
				add("user", gemPart{FunctionResponse: &gemFunctionResponse{Name: name, Response: resp}})
				for _, img := range imgs {
					gp, err := gemImagePart(img, fmt.Sprintf("messages[%d].content", i))
					if err != nil {
						return nil, err
					}
					add("user", gp)
				}
			}
		}
	}
	if gemSigRequired(r.Model) {
		for i := range out {
			gemSignCalls(out[i].Parts)
		}
	}
	return out, nil
}

// gemSignCalls gives the first functionCall of a model content the documented stand-in signature when none
// of its calls has one (Gemini signs only the first of parallel calls).
func gemSignCalls(parts []gemPart) {
	first := -1
	for k, gp := range parts {
		if gp.FunctionCall == nil {
			continue
		}
		if gp.ThoughtSignature != "" {
			return
		}
		if first < 0 {
			first = k
		}
	}
	if first >= 0 {
		parts[first].ThoughtSignature = gemSkipSignature
	}
}

// gemSigRequired says whether model is a Gemini 3 or later model, which validates call signatures.
func gemSigRequired(model string) bool {
	rest, ok := strings.CutPrefix(strings.TrimPrefix(model, "models/"), "gemini-")
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	major, err := strconv.Atoi(rest[:n])
	return ok && err == nil && major >= 3
}

// gemResultResponse is a tool result as Gemini's response object: the result text when it is a JSON
// object, else {"result": text} ({"error": text} for an error); the result's images go after it.
func gemResultResponse(tr *ToolResult) (json.RawMessage, []*Image) {
	var texts []string
	var imgs []*Image
	for _, c := range tr.Content {
		switch {
		case c.Kind == PartText:
			texts = append(texts, c.Text)
		case c.Kind == PartImage && c.Image != nil:
			imgs = append(imgs, c.Image)
		}
	}
	text := strings.Join(texts, "\n")
	if gjson.Valid(text) && gjson.Parse(text).IsObject() {
		return json.RawMessage(text), imgs
	}
	key := "result"
	if tr.IsError {
		key = "error"
	}
	b, _ := json.Marshal(map[string]string{key: text})
	return b, imgs
}

// gemImagePart is an image as inlineData (base64, or a data: URL) or fileData (a URL; the media type
// guessed from its extension, image/jpeg when it has none).
func gemImagePart(img *Image, field string) (gemPart, error) {
	if img.Data != "" {
		mime := img.MediaType
		if mime == "" {
			mime = gemSniff(img.Data)
		}
		return gemPart{InlineData: &gemBlob{MimeType: mime, Data: img.Data}}, nil
	}
	if rest, ok := strings.CutPrefix(img.URL, "data:"); ok {
		meta, data, ok := strings.Cut(rest, ",")
		mime, _, _ := strings.Cut(meta, ";")
		if !ok || !strings.HasSuffix(meta, ";base64") {
			return gemPart{}, &Unsupported{Field: field, Target: adaptor.Gemini, Why: "a data: URL must be base64"}
		}
		if mime == "" {
			mime = gemSniff(data)
		}
		return gemPart{InlineData: &gemBlob{MimeType: mime, Data: data}}, nil
	}
	mime := img.MediaType
	if mime == "" {
		mime = gemMimeOf(img.URL, "image/jpeg")
	}
	return gemPart{FileData: &gemFileData{MimeType: mime, FileURI: img.URL}}, nil
}

// gemSniff guesses an image's media type from the first bytes of its base64 (image/jpeg when unknown).
func gemSniff(b64 string) string {
	switch {
	case strings.HasPrefix(b64, "iVBORw0KGgo"):
		return "image/png"
	case strings.HasPrefix(b64, "R0lGOD"):
		return "image/gif"
	case strings.HasPrefix(b64, "UklGR"):
		return "image/webp"
	}
	return "image/jpeg"
}

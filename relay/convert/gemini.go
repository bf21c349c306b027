package convert

import (
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"tollgate/relay/adaptor"
)

// init registers the Gemini codec.
func init() { register(gemCodec{}) }

// gemCodec is the Gemini generateContent codec (Google AI Studio, v1beta). The model and stream-ness travel
// in the URL, so requests carry neither; answers are GenerateContentResponse objects, streamed one per SSE
// event (alt=sse) or, for NewGeminiArrayEncoder, as one JSON array.
type gemCodec struct{}

// Protocol is adaptor.Gemini.
func (gemCodec) Protocol() adaptor.Protocol { return adaptor.Gemini }

// gemObj is one JSON object of a Gemini request read field by field: the REST API accepts every field name
// in camelCase and in snake_case, so each lookup tries both.
type gemObj map[string]json.RawMessage

// gemNull says whether raw is absent or JSON null.
func gemNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

// gemReadObj reads raw as an object (nil, nil for absent or null; *Invalid naming field for anything else).
func gemReadObj(raw json.RawMessage, field string) (gemObj, error) {
	if gemNull(raw) {
		return nil, nil
	}
	var o gemObj
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, &Invalid{Field: field, Why: "must be an object"}
	}
	return o, nil
}

// get is the value of the field camel (or its snake_case spelling) and the spelling found; nil when absent
// or null.
func (o gemObj) get(camel string) (json.RawMessage, string) {
	if v := o[camel]; !gemNull(v) {
		return v, camel
	}
	snake := gemSnake(camel)
	if v := o[snake]; !gemNull(v) {
		return v, snake
	}
	return nil, camel
}

// gemSnake is the snake_case spelling of a camelCase field name.
func gemSnake(camel string) string {
	var b strings.Builder
	for _, c := range camel {
		if c >= 'A' && c <= 'Z' {
			b.WriteByte('_')
			c += 'a' - 'A'
		}
		b.WriteRune(c)
	}
	return b.String()
}

// gemGet decodes the field camel (or its snake_case spelling) into a T; found is false when it is absent or
// null, and a value of another type is *Invalid ("must be " + what).
func gemGet[T any](o gemObj, camel, at, what string) (v T, found bool, err error) {
	raw, k := o.get(camel)
	if raw == nil {
		return v, false, nil
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, false, &Invalid{Field: at + k, Why: "must be " + what}
	}
	return v, true, nil
}

// gemStr reads a string field ("" when absent).
func gemStr(o gemObj, camel, at string) (string, error) {
	v, _, err := gemGet[string](o, camel, at, "a string")
	return v, err
}

// gemBool reads a boolean field (false when absent).
func gemBool(o gemObj, camel, at string) (bool, error) {
	v, _, err := gemGet[bool](o, camel, at, "a boolean")
	return v, err
}

// gemFloat reads a number field (nil when absent).
func gemFloat(o gemObj, camel, at string) (*float64, error) {
	v, ok, err := gemGet[float64](o, camel, at, "a number")
	if !ok {
		return nil, err
	}
	return &v, nil
}

// gemStrs reads an array of strings (nil when absent).
func gemStrs(o gemObj, camel, at string) ([]string, error) {
	v, _, err := gemGet[[]string](o, camel, at, "an array of strings")
	return v, err
}

// gemInt reads an integer field (nil when absent): a JSON number, or a decimal string as proto JSON writes
// int64 values.
func gemInt(o gemObj, camel, at string) (*int64, error) {
	raw, k := o.get(camel)
	if raw == nil {
		return nil, nil
	}
	r := gjson.ParseBytes(raw)
	var v int64
	switch {
	case r.Type == gjson.Number && r.Float() == float64(int64(r.Float())):
		v = int64(r.Float())
	case r.Type == gjson.String:
		n, err := strconv.ParseInt(r.Str, 10, 64)
		if err != nil {
			return nil, &Invalid{Field: at + k, Why: "must be an integer"}
		}
		v = n
	default:
		return nil, &Invalid{Field: at + k, Why: "must be an integer"}
	}
	return &v, nil
}

// gemArr reads an array field (nil when absent).
func gemArr(o gemObj, camel, at string) ([]json.RawMessage, string, error) {
	raw, k := o.get(camel)
	if raw == nil {
		return nil, k, nil
	}
	var a []json.RawMessage
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, k, &Invalid{Field: at + k, Why: "must be an array"}
	}
	return a, k, nil
}

// gemUnsupported is a Gemini field no translation can carry. ParseRequest does not know the target (the
// relay reports these refusals without one), so Target is the caller's own protocol.
func gemUnsupported(field, why string) *Unsupported {
	return &Unsupported{Field: field, Target: adaptor.Gemini, Why: why}
}

// gemCall is a function call seen in a request's history, for matching the functionResponse parts that
// answer it.
type gemCall struct {
	id, name string
	answered bool
}

// gemParser is the state of one ParseRequest: the calls so far.
type gemParser struct{ calls []gemCall }

// ParseRequest reads a generateContent body. Model and Stream stay unset: they come from the URL.
func (gemCodec) ParseRequest(body []byte) (*Request, error) {
	top, err := gemReadObj(body, "body")
	if err != nil || top == nil {
		return nil, &Invalid{Field: "body", Why: "must be a JSON object"}
	}
	if raw, k := top.get("cachedContent"); raw != nil {
		return nil, gemUnsupported(k, "a cached content lives in one Google project and cannot be translated")
	}
	r := &Request{}
	if err := gemParseSystem(top, r); err != nil {
		return nil, err
	}
	var p gemParser
	contents, k, err := gemArr(top, "contents", "")
	if err != nil {
		return nil, err
	}
	if len(contents) == 0 {
		return nil, &Invalid{Field: "contents", Why: "is required"}
	}
	for i, c := range contents {
		m, err := p.content(c, fmt.Sprintf("%s[%d]", k, i))
		if err != nil {
			return nil, err
		}
		if len(m.Parts) > 0 { // a turn of empty texts says nothing (and empty turns trouble other protocols)
			r.Messages = append(r.Messages, m)
		}
	}
	if len(r.Messages) == 0 {
		return nil, &Invalid{Field: "contents", Why: "holds no turn with content"}
	}
	if err := gemParseTools(top, r); err != nil {
		return nil, err
	}
	if err := gemParseToolConfig(top, r); err != nil {
		return nil, err
	}
	if err := gemParseGenConfig(top, r); err != nil {
		return nil, err
	}
	return r, nil
}

// gemParseSystem reads systemInstruction: its text parts.
func gemParseSystem(top gemObj, r *Request) error {
	raw, k := top.get("systemInstruction")
	si, err := gemReadObj(raw, k)
	if err != nil || si == nil {
		return err
	}
	parts, pk, err := gemArr(si, "parts", k+".")
	if err != nil {
		return err
	}
	for j, pr := range parts {
		at := fmt.Sprintf("%s.%s[%d]", k, pk, j)
		po, err := gemReadObj(pr, at)
		if err != nil {
			return err
		}
		if v, _ := po.get("text"); v == nil {
			return gemUnsupported(at, "system instructions translate as text only")
		}
		t, err := gemStr(po, "text", at+".")
		if err != nil {
			return err
		}
		if t != "" {
			r.System = append(r.System, Part{Kind: PartText, Text: t})
		}
	}
	return nil
}

// content reads one contents[i]: role user (or none, or the legacy "function") or model, and its parts.
func (p *gemParser) content(raw json.RawMessage, at string) (Message, error) {
	co, err := gemReadObj(raw, at)
	if err != nil {
		return Message{}, err
	}
	if co == nil {
		return Message{}, &Invalid{Field: at, Why: "must be an object"}
	}
	role, err := gemStr(co, "role", at+".")
	if err != nil {
		return Message{}, err
	}
	m := Message{Role: RoleUser}
	switch role {
	case "", "user", "function":
	case "model":
		m.Role = RoleAssistant
	default:
		return Message{}, &Invalid{Field: at + ".role", Why: "must be user or model"}
	}
	parts, pk, err := gemArr(co, "parts", at+".")
	if err != nil {
		return Message{}, err
	}
	if len(parts) == 0 {
		return Message{}, &Invalid{Field: at + ".parts", Why: "is required"}
	}
	for j, pr := range parts {
		part, ok, err := p.part(pr, fmt.Sprintf("%s.%s[%d]", at, pk, j))
		if err != nil {
			return Message{}, err
		}
		if ok {
			m.Parts = append(m.Parts, part)
		}
	}
	return m, nil
}

// part reads one part; ok false for a part that says nothing translatable and changes nothing (empty).
func (p *gemParser) part(raw json.RawMessage, at string) (Part, bool, error) {
	po, err := gemReadObj(raw, at)
	if err != nil {
		return Part{}, false, err
	}
	sig, err := gemStr(po, "thoughtSignature", at+".")
	if err != nil {
		return Part{}, false, err
	}
	if v, k := po.get("functionCall"); v != nil {
		tc, err := p.functionCall(v, at+"."+k)
		return Part{Kind: PartToolCall, ToolCall: tc, Signature: sig}, err == nil, err
	}
	if v, k := po.get("functionResponse"); v != nil {
		tr, err := p.functionResponse(v, at+"."+k)
		return Part{Kind: PartToolResult, ToolResult: tr}, err == nil, err
	}
	if v, k := po.get("inlineData"); v != nil {
		img, err := gemBlobImage(v, at+"."+k, "data")
		return Part{Kind: PartImage, Image: img}, err == nil, err
	}
	if v, k := po.get("fileData"); v != nil {
		img, err := gemBlobImage(v, at+"."+k, "fileUri")
		return Part{Kind: PartImage, Image: img}, err == nil, err
	}
	for _, kind := range []string{"executableCode", "codeExecutionResult"} {
		if v, k := po.get(kind); v != nil {
			return Part{}, false, gemUnsupported(at+"."+k, "code execution has no equivalent")
		}
	}
	if v, _ := po.get("text"); v != nil {
		t, err := gemStr(po, "text", at+".")
		if err != nil {
			return Part{}, false, err
		}
		thought, err := gemBool(po, "thought", at+".")
		if err != nil {
			return Part{}, false, err
		}
		kind := PartText
		if thought {
			kind = PartThinking
		}
		return Part{Kind: kind, Text: t, Signature: sig}, t != "" || sig != "", nil
	}
	return Part{}, false, nil
}

// gemBlobImage reads inlineData {mimeType, data} (key "data": base64) or fileData {mimeType, fileUri} (key
// "fileUri": a URL) as an image; other media have no canonical form.
func gemBlobImage(raw json.RawMessage, at, key string) (*Image, error) {
	o, err := gemReadObj(raw, at)
	if err != nil {
		return nil, err
	}
	mime, err := gemStr(o, "mimeType", at+".")
	if err != nil {
		return nil, err
	}
	v, err := gemStr(o, key, at+".")
	if err != nil {
		return nil, err
	}
	if v == "" {
		return nil, &Invalid{Field: at + "." + key, Why: "is required"}
	}
	if mime == "" && key == "fileUri" {
		mime = gemMimeOf(v, "")
	}
	if !strings.HasPrefix(mime, "image/") {
		return nil, gemUnsupported(at, "only image media translate (this part is "+strconv.Quote(mime)+")")
	}
	if key == "data" {
		return &Image{MediaType: mime, Data: v}, nil
	}
	return &Image{URL: v, MediaType: mime}, nil
}

// gemNamed reads the object a functionCall or functionResponse is: its required name and optional id.
func gemNamed(raw json.RawMessage, at string) (o gemObj, name, id string, err error) {
	if o, err = gemReadObj(raw, at); err != nil {
		return nil, "", "", err
	}
	if name, err = gemStr(o, "name", at+"."); err != nil {
		return nil, "", "", err
	}
	if name == "" {
		return nil, "", "", &Invalid{Field: at + ".name", Why: "is required"}
	}
	id, err = gemStr(o, "id", at+".")
	return o, name, id, err
}

// functionCall reads a model's functionCall {name, args, id?}; a call without id gets "call_" and its
// position among the request's calls.
func (p *gemParser) functionCall(raw json.RawMessage, at string) (*ToolCall, error) {
	o, name, id, err := gemNamed(raw, at)
	if err != nil {
		return nil, err
	}
	args, k := o.get("args")
	if args != nil && !gjson.ParseBytes(args).IsObject() {
		return nil, &Invalid{Field: at + "." + k, Why: "must be an object"}
	}
	if id == "" {
		id = "call_" + strconv.Itoa(len(p.calls))
	}
	p.calls = append(p.calls, gemCall{id: id, name: name})
	return &ToolCall{ID: id, Name: name, Args: argsText(args)}, nil
}

// functionResponse reads a functionResponse {name, response, id?, parts?}: the response object as one text
// part (and the images of its parts), matched to its call by id, else to the oldest unanswered call of
// that name, else "call_"+name.
func (p *gemParser) functionResponse(raw json.RawMessage, at string) (*ToolResult, error) {
	o, name, id, err := gemNamed(raw, at)
	if err != nil {
		return nil, err
	}
	resp, k := o.get("response")
	isErr := false
	if resp == nil {
		resp = json.RawMessage(`{}`)
	} else {
		ro, err := gemReadObj(resp, at+"."+k)
		if err != nil {
			return nil, err
		}
		_, hasErr := ro["error"]
		isErr = hasErr && len(ro) == 1
		resp = gemCompact(resp)
	}
	tr := &ToolResult{CallID: p.answer(id, name), Name: name, IsError: isErr,
		Content: []Part{{Kind: PartText, Text: string(resp)}}}
	return p.resultImages(tr, o, at)
}

// resultImages adds the images of a functionResponse's parts (multimodal function responses) to tr.
func (p *gemParser) resultImages(tr *ToolResult, o gemObj, at string) (*ToolResult, error) {
	parts, pk, err := gemArr(o, "parts", at+".")
	if err != nil {
		return nil, err
	}
	for j, pr := range parts {
		pat := fmt.Sprintf("%s.%s[%d]", at, pk, j)
		po, err := gemReadObj(pr, pat)
		if err != nil {
			return nil, err
		}
		v, k := po.get("inlineData")
		key := "data"
		if v == nil {
			if v, k = po.get("fileData"); v == nil {
				return nil, gemUnsupported(pat, "function response parts translate as images only")
			}
			key = "fileUri"
		}
		img, err := gemBlobImage(v, pat+"."+k, key)
		if err != nil {
			return nil, err
		}
		tr.Content = append(tr.Content, Part{Kind: PartImage, Image: img})
	}
	return tr, nil
}

// answer is the call id a functionResponse answers, marking that call answered.
func (p *gemParser) answer(id, name string) string {
	// Oldest unanswered first: parallel calls of one function are answered in the order they were made.
	for i := range p.calls {
		c := &p.calls[i]
		if id != "" && c.id == id || id == "" && !c.answered && c.name == name {
			c.answered = true
			return c.id
		}
	}
	if id != "" {
		return id
	}
	return "call_" + name
}

// gemCompact is raw without insignificant whitespace (raw is valid JSON).
func gemCompact(raw json.RawMessage) json.RawMessage {
	b, err := json.Marshal(raw)
	if err != nil {
		return raw
	}
	return b
}

// gemMimeOf guesses an image's media type from its URL's extension (def when it has none we know).
func gemMimeOf(url, def string) string {
	u, _, _ := strings.Cut(url, "?")
	u, _, _ = strings.Cut(u, "#")
	switch strings.ToLower(path.Ext(u)) {
	case ".png":
		return "image/png"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".gif":
		return "image/gif"
	case ".webp":
		return "image/webp"
	case ".heic":
		return "image/heic"
	case ".heif":
		return "image/heif"
	}
	return def
}

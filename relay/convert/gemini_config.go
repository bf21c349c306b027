package convert

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"tollgate/relay/adaptor"
)

// gemParseTools reads tools: function declarations; any other tool kind (googleSearch, codeExecution,
// urlContext, ...) is refused.
func gemParseTools(top gemObj, r *Request) error {
	tools, k, err := gemArr(top, "tools", "")
	if err != nil {
		return err
	}
	for i, t := range tools {
		at := fmt.Sprintf("%s[%d]", k, i)
		to, err := gemReadObj(t, at)
		if err != nil {
			return err
		}
		keys := make([]string, 0, len(to))
		for key, v := range to {
			if !gemNull(v) {
				keys = append(keys, key)
			}
		}
		slices.Sort(keys)
		for _, key := range keys {
			if key != "functionDeclarations" && key != "function_declarations" {
				return gemUnsupported(at+"."+key, "only function declarations translate")
			}
		}
		decls, dk, err := gemArr(to, "functionDeclarations", at+".")
		if err != nil {
			return err
		}
		for j, d := range decls {
			tool, err := gemDecl(d, fmt.Sprintf("%s.%s[%d]", at, dk, j))
			if err != nil {
				return err
			}
			r.Tools = append(r.Tools, tool)
		}
	}
	return nil
}

// gemDecl reads one function declaration: parameters (Gemini's OpenAPI subset, turned into JSON Schema) or
// parametersJsonSchema (JSON Schema already).
func gemDecl(raw json.RawMessage, at string) (Tool, error) {
	o, err := gemReadObj(raw, at)
	if err != nil {
		return Tool{}, err
	}
	if o == nil {
		return Tool{}, &Invalid{Field: at, Why: "must be an object"}
	}
	var t Tool
	if t.Name, err = gemStr(o, "name", at+"."); err != nil {
		return Tool{}, err
	}
	if t.Name == "" {
		return Tool{}, &Invalid{Field: at + ".name", Why: "is required"}
	}
	if t.Description, err = gemStr(o, "description", at+"."); err != nil {
		return Tool{}, err
	}
	if v, k := o.get("parametersJsonSchema"); v != nil {
		if !gjson.ParseBytes(v).IsObject() {
			return Tool{}, &Invalid{Field: at + "." + k, Why: "must be an object"}
		}
		t.Parameters = gemCompact(v)
	} else if v, k := o.get("parameters"); v != nil {
		if !gjson.ParseBytes(v).IsObject() {
			return Tool{}, &Invalid{Field: at + "." + k, Why: "must be an object"}
		}
		t.Parameters = gemSchemaToJSON(v)
	}
	return t, nil
}

// gemParseToolConfig reads toolConfig.functionCallingConfig: AUTO (and VALIDATED), NONE, ANY; ANY with one
// allowed name is that tool, with several it is any of them (the other declarations are left out).
func gemParseToolConfig(top gemObj, r *Request) error {
	raw, k := top.get("toolConfig")
	tc, err := gemReadObj(raw, k)
	if err != nil || tc == nil {
		return err
	}
	raw, fk := tc.get("functionCallingConfig")
	at := k + "." + fk
	fc, err := gemReadObj(raw, at)
	if err != nil || fc == nil {
		return err
	}
	mode, err := gemStr(fc, "mode", at+".")
	if err != nil {
		return err
	}
	names, err := gemStrs(fc, "allowedFunctionNames", at+".")
	if err != nil {
		return err
	}
	switch strings.ToUpper(mode) {
	case "", "MODE_UNSPECIFIED":
	case "AUTO", "VALIDATED":
		r.ToolChoice = &ToolChoice{Mode: ToolAuto}
	case "NONE":
		r.ToolChoice = &ToolChoice{Mode: ToolNone}
	case "ANY":
		switch len(names) {
		case 0:
			r.ToolChoice = &ToolChoice{Mode: ToolRequired}
		case 1:
			r.ToolChoice = &ToolChoice{Mode: ToolNamed, Name: names[0]}
		default:
			r.ToolChoice = &ToolChoice{Mode: ToolRequired}
			r.Tools = slices.DeleteFunc(r.Tools, func(t Tool) bool { return !slices.Contains(names, t.Name) })
		}
	default:
		return &Invalid{Field: at + ".mode", Why: "must be AUTO, ANY, NONE or VALIDATED"}
	}
	return nil
}

// gemParseGenConfig reads generationConfig.
func gemParseGenConfig(top gemObj, r *Request) error {
	raw, k := top.get("generationConfig")
	g, err := gemReadObj(raw, k)
	if err != nil || g == nil {
		return err
	}
	at := k + "."
	if r.Temperature, err = gemFloat(g, "temperature", at); err != nil {
		return err
	}
	if r.TopP, err = gemFloat(g, "topP", at); err != nil {
		return err
	}
	if r.TopK, err = gemInt(g, "topK", at); err != nil {
		return err
	}
	if r.PresencePenalty, err = gemFloat(g, "presencePenalty", at); err != nil {
		return err
	}
	if r.FrequencyPenalty, err = gemFloat(g, "frequencyPenalty", at); err != nil {
		return err
	}
	if r.Seed, err = gemInt(g, "seed", at); err != nil {
		return err
	}
	if r.Stop, err = gemStrs(g, "stopSequences", at); err != nil {
		return err
	}
	ints := map[string]*int64{"maxOutputTokens": &r.MaxTokens, "candidateCount": &r.N, "logprobs": &r.TopLogprobs}
	for _, f := range []string{"maxOutputTokens", "candidateCount", "logprobs"} {
		n, err := gemInt(g, f, at)
		if err != nil {
			return err
		}
		if n != nil {
			*ints[f] = *n
		}
	}
	if r.N == 1 {
		r.N = 0
	}
	if r.Logprobs, err = gemBool(g, "responseLogprobs", at); err != nil {
		return err
	}
	mods, err := gemStrs(g, "responseModalities", at)
	if err != nil {
		return err
	}
	for _, m := range mods {
		if !strings.EqualFold(m, "TEXT") {
			return gemUnsupported(at+"responseModalities", "only text answers translate")
		}
	}
	if v, sk := g.get("speechConfig"); v != nil {
		return gemUnsupported(at+sk, "audio answers do not translate")
	}
	if err := gemParseFormat(g, at, r); err != nil {
		return err
	}
	return gemParseThinking(g, at, r)
}

// gemParseFormat reads responseMimeType with responseSchema (OpenAPI subset) or responseJsonSchema.
func gemParseFormat(g gemObj, at string, r *Request) error {
	mime, err := gemStr(g, "responseMimeType", at)
	if err != nil {
		return err
	}
	var schema json.RawMessage
	if v, k := g.get("responseJsonSchema"); v != nil {
		if !gjson.ParseBytes(v).IsObject() {
			return &Invalid{Field: at + k, Why: "must be an object"}
		}
		schema = gemCompact(v)
	} else if v, k := g.get("responseSchema"); v != nil {
		if !gjson.ParseBytes(v).IsObject() {
			return &Invalid{Field: at + k, Why: "must be an object"}
		}
		schema = gemSchemaToJSON(v)
	}
	switch mime {
	case "", "text/plain", "application/json":
	default:
		return gemUnsupported(at+"responseMimeType", strconv.Quote(mime)+" answers do not translate")
	}
	switch {
	case schema != nil:
		r.ResponseFormat = &ResponseFormat{Type: "json_schema", Name: "response", Schema: schema}
	case mime == "application/json":
		r.ResponseFormat = &ResponseFormat{Type: "json_object"}
	}
	return nil
}

// gemParseThinking reads thinkingConfig: thinkingBudget (0 off, -1 dynamic), thinkingLevel (an effort),
// includeThoughts (the caller wants thought summaries).
func gemParseThinking(g gemObj, at string, r *Request) error {
	raw, k := g.get("thinkingConfig")
	at += k
	tc, err := gemReadObj(raw, at)
	if err != nil || tc == nil {
		return err
	}
	at += "."
	budget, err := gemInt(tc, "thinkingBudget", at)
	if err != nil {
		return err
	}
	level, err := gemStr(tc, "thinkingLevel", at)
	if err != nil {
		return err
	}
	include, err := gemBool(tc, "includeThoughts", at)
	if err != nil {
		return err
	}
	rs := &Reasoning{Enabled: true, Summary: include}
	switch level = strings.ToLower(level); level {
	case "", "thinking_level_unspecified":
	case "minimal", "low", "medium", "high":
		rs.Effort = level
	default:
		return &Invalid{Field: at + "thinkingLevel", Why: "must be minimal, low, medium or high"}
	}
	switch {
	case budget != nil && *budget == 0:
		rs.Enabled = false
	case budget != nil && *budget > 0:
		rs.Budget = *budget
	case budget == nil && rs.Effort == "" && !include:
		return nil // nothing but includeThoughts false: the default
	}
	r.Reasoning = rs
	return nil
}

// gemSchemaToJSON turns a schema in Gemini's OpenAPI subset into JSON Schema, keeping the key order:
// UPPERCASE types lowercase, nullable as a "null" type, int64-as-string bounds as numbers; Gemini-only
// keywords (propertyOrdering, format "enum", example) are dropped. raw is a valid JSON object.
func gemSchemaToJSON(raw json.RawMessage) json.RawMessage {
	return gemSchemaAppend(nil, gjson.ParseBytes(raw))
}

// gemSchemaAppend appends the JSON Schema form of one schema s.
func gemSchemaAppend(b []byte, s gjson.Result) []byte {
	if !s.IsObject() {
		return append(b, s.Raw...)
	}
	nullable := s.Get("nullable").Bool()
	b = append(b, '{')
	n := 0
	key := func(k gjson.Result) {
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, k.Raw...)
		b = append(b, ':')
	}
	s.ForEach(func(k, v gjson.Result) bool {
		switch k.String() {
		case "nullable", "propertyOrdering", "example":
		case "type":
			if v.IsArray() {
				key(k)
				b = append(b, strings.ToLower(v.Raw)...) // ["STRING","NULL"]: type words only
				break
			}
			if v.Type != gjson.String {
				key(k)
				b = append(b, v.Raw...)
				break
			}
			t := strings.ToLower(v.Str)
			if t == "" || t == "type_unspecified" {
				break
			}
			key(k)
			if nullable && t != "null" {
				b = append(b, `["`+t+`","null"]`...)
			} else {
				b = append(b, `"`+t+`"`...)
			}
		case "format":
			if v.Str != "enum" {
				key(k)
				b = append(b, v.Raw...)
			}
		case "properties", "$defs", "definitions", "patternProperties":
			key(k)
			if !v.IsObject() {
				b = append(b, v.Raw...)
				break
			}
			b = append(b, '{')
			m := 0
			v.ForEach(func(pk, pv gjson.Result) bool {
				if m > 0 {
					b = append(b, ',')
				}
				m++
				b = append(b, pk.Raw...)
				b = append(b, ':')
				b = gemSchemaAppend(b, pv)
				return true
			})
			b = append(b, '}')
		case "items", "additionalProperties", "not", "contains":
			key(k)
			b = gemSchemaAppend(b, v)
		case "anyOf", "oneOf", "allOf", "prefixItems":
			key(k)
			if !v.IsArray() {
				b = append(b, v.Raw...)
				break
			}
			b = append(b, '[')
			for i, e := range v.Array() {
				if i > 0 {
					b = append(b, ',')
				}
				b = gemSchemaAppend(b, e)
			}
			b = append(b, ']')
		case "minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties":
			key(k)
			if _, err := strconv.ParseInt(v.Str, 10, 64); v.Type == gjson.String && err == nil {
				b = append(b, v.Str...)
			} else {
				b = append(b, v.Raw...)
			}
		default:
			key(k)
			b = append(b, v.Raw...)
		}
		return true
	})
	return append(b, '}')
}

// gemTool is one Tool of a request the relay writes: function declarations only.
type gemTool struct {
	FunctionDeclarations []gemFuncDecl `json:"functionDeclarations"`
}

// gemFuncDecl is one function declaration; its parameters are plain JSON Schema, which the API takes in
// parametersJsonSchema.
type gemFuncDecl struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

// gemToolConfig is toolConfig.
type gemToolConfig struct {
	FunctionCallingConfig gemFuncConfig `json:"functionCallingConfig"`
}

// gemFuncConfig is toolConfig.functionCallingConfig.
type gemFuncConfig struct {
	Mode                 string   `json:"mode"`
	AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
}

// gemGenConfig is generationConfig as the relay writes it.
type gemGenConfig struct {
	Temperature        *float64        `json:"temperature,omitempty"`
	TopP               *float64        `json:"topP,omitempty"`
	TopK               *int64          `json:"topK,omitempty"`
	MaxOutputTokens    int64           `json:"maxOutputTokens,omitempty"`
	StopSequences      []string        `json:"stopSequences,omitempty"`
	CandidateCount     int64           `json:"candidateCount,omitempty"`
	PresencePenalty    *float64        `json:"presencePenalty,omitempty"`
	FrequencyPenalty   *float64        `json:"frequencyPenalty,omitempty"`
	Seed               *int64          `json:"seed,omitempty"`
	ResponseMimeType   string          `json:"responseMimeType,omitempty"`
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema,omitempty"`
	ThinkingConfig     *gemThinking    `json:"thinkingConfig,omitempty"`
}

// gemThinking is generationConfig.thinkingConfig as the relay writes it.
type gemThinking struct {
	ThinkingBudget  *int64 `json:"thinkingBudget,omitempty"`
	IncludeThoughts bool   `json:"includeThoughts,omitempty"`
}

// gemMaxStops is how many stop sequences Gemini takes.
const gemMaxStops = 5

// gemRefuse is the *Unsupported for a canonical field a Gemini upstream cannot take.
func gemRefuse(field, why string) *Unsupported {
	return &Unsupported{Field: field, Target: adaptor.Gemini, Why: why}
}

// gemBuildTools writes the function declarations and the tool choice (none of either without tools).
func gemBuildTools(r *Request, out *gemRequest) error {
	if len(r.Tools) == 0 {
		return nil
	}
	// parallel_tool_calls false has no Gemini form and is dropped: it only caps how many calls one turn
	// may hold, every client that sends it (Codex CLI always does) runs each call it gets, and refusing it
	// would shut those clients out of Gemini channels altogether.
	decls := make([]gemFuncDecl, len(r.Tools))
	for i, t := range r.Tools {
		decls[i] = gemFuncDecl{Name: t.Name, Description: t.Description}
		if !gemEmptySchema(t.Parameters) {
			decls[i].ParametersJSONSchema = t.Parameters
		}
	}
	out.Tools = []gemTool{{FunctionDeclarations: decls}}
	if tc := r.ToolChoice; tc != nil {
		fc := gemFuncConfig{Mode: "AUTO"}
		switch tc.Mode {
		case ToolNone:
			fc.Mode = "NONE"
		case ToolRequired:
			fc.Mode = "ANY"
		case ToolNamed:
			fc = gemFuncConfig{Mode: "ANY", AllowedFunctionNames: []string{tc.Name}}
		}
		out.ToolConfig = &gemToolConfig{FunctionCallingConfig: fc}
	}
	return nil
}

// gemEmptySchema says whether a tool's parameters take no arguments (absent, {}, or an object schema with no
// properties), which Gemini wants left out.
func gemEmptySchema(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return true
	}
	s := gjson.ParseBytes(raw)
	if !s.IsObject() {
		return s.Type == gjson.Null
	}
	empty := true
	s.ForEach(func(k, v gjson.Result) bool {
		switch k.String() {
		case "type":
			empty = v.Str == "object"
		case "properties":
			empty = v.IsObject() && !gemHasKeys(v)
		case "required":
			empty = v.IsArray() && !gemHasKeys(v)
		case "additionalProperties", "$schema", "title", "description":
		default:
			empty = false
		}
		return empty
	})
	return empty
}

// gemHasKeys says whether an object has at least one key.
func gemHasKeys(v gjson.Result) bool {
	has := false
	v.ForEach(func(_, _ gjson.Result) bool { has = true; return false })
	return has
}

// gemBuildGenConfig writes generationConfig (nil when nothing is set). Penalties of 0 are the default and
// are left out (some Gemini models refuse penalties at all).
func gemBuildGenConfig(r *Request) (*gemGenConfig, error) {
	if r.Logprobs {
		return nil, gemRefuse("logprobs", "log probabilities do not translate back")
	}
	if r.TopLogprobs > 0 {
		return nil, gemRefuse("top_logprobs", "log probabilities do not translate back")
	}
	if b := strings.TrimSpace(string(r.LogitBias)); b != "" && b != "null" && gemHasKeys(gjson.Parse(b)) {
		return nil, gemRefuse("logit_bias", "Gemini has no token bias")
	}
	if len(r.Stop) > gemMaxStops {
		return nil, gemRefuse("stop", fmt.Sprintf("Gemini takes at most %d stop sequences", gemMaxStops))
	}
	g := &gemGenConfig{Temperature: r.Temperature, TopP: r.TopP, TopK: r.TopK, MaxOutputTokens: r.MaxTokens,
		StopSequences: r.Stop, Seed: r.Seed}
	if r.N > 1 {
		g.CandidateCount = r.N
	}
	if p := r.PresencePenalty; p != nil && *p != 0 {
		g.PresencePenalty = p
	}
	if p := r.FrequencyPenalty; p != nil && *p != 0 {
		g.FrequencyPenalty = p
	}
	if f := r.ResponseFormat; f != nil {
		switch f.Type {
		case "json_object":
			g.ResponseMimeType = "application/json"
		case "json_schema":
			g.ResponseMimeType = "application/json"
			if s := gjson.ParseBytes(f.Schema); s.IsObject() {
				g.ResponseJSONSchema = f.Schema
			}
		}
	}
	if rs := r.Reasoning; rs != nil {
		// An effort or a budget means thinking even if a codec left Enabled unset; "none" is OpenAI's off.
		on := (rs.Enabled || rs.Budget > 0 || rs.Effort != "") && rs.Effort != "none"
		t := &gemThinking{IncludeThoughts: on}
		var budget int64
		switch {
		case !on:
			t.ThinkingBudget = &budget
		case rs.Budget > 0:
			budget = rs.Budget
			t.ThinkingBudget = &budget
		case rs.Effort != "":
			budget = EffortBudget(rs.Effort)
			t.ThinkingBudget = &budget
		}
		g.ThinkingConfig = t
	}
	if b, _ := json.Marshal(g); string(b) == "{}" {
		return nil, nil
	}
	return g, nil
}

package relaytest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// geminiPrefix is where the Gemini API's routes live (Google AI Studio).
const geminiPrefix = "/v1beta/models"

// geminiTarget reads the model and method out of /v1beta/models/{model}:{method}.
func (c *call) geminiTarget() {
	rest := strings.TrimPrefix(strings.TrimPrefix(c.r.URL.Path, geminiPrefix), "/")
	model, method, _ := strings.Cut(rest, ":")
	c.model = model
	c.stream = method == "streamGenerateContent"
}

// geminiRoute answers the Gemini API's routes: generateContent, streamGenerateContent (SSE with alt=sse),
// countTokens, embedContent, and the model list.
func (c *call) geminiRoute() (func(), bool) {
	path, method := c.r.URL.Path, c.r.Method
	if path == geminiPrefix {
		if method == http.MethodGet {
			return c.geminiModels, true
		}
		c.plainError(http.StatusMethodNotAllowed, "Method "+method+" not allowed")
		return nil, false
	}
	_, verb, _ := strings.Cut(strings.TrimPrefix(path, geminiPrefix+"/"), ":")
	var fn func()
	switch verb {
	case "generateContent", "streamGenerateContent":
		fn = c.geminiGenerate
	case "countTokens":
		fn = func() { c.writeJSON(mustJSON(map[string]int{"totalTokens": c.b.promptTokens})) }
	case "embedContent":
		fn = func() {
			c.writeJSON(mustJSON(map[string]any{"embedding": map[string]any{"values": []float64{0.1, 0.2, 0.3}}}))
		}
	default:
		c.plainError(http.StatusNotFound, "Method not found: "+verb)
		return nil, false
	}
	if method != http.MethodPost {
		c.plainError(http.StatusMethodNotAllowed, "Method "+method+" not allowed on "+path)
		return nil, false
	}
	if !gjson.ValidBytes(c.body) {
		c.plainError(http.StatusBadRequest, "Invalid JSON payload received.")
		return nil, false
	}
	if c.stream && c.r.URL.Query().Get("alt") != "sse" {
		c.plainError(http.StatusBadRequest, "relaytest serves Gemini streams as SSE only: add alt=sse")
		return nil, false
	}
	return fn, true
}

// geminiModels answers GET /v1beta/models.
func (c *call) geminiModels() {
	models := make([]map[string]any, len(c.b.models))
	for i, id := range c.b.models {
		models[i] = map[string]any{"name": "models/" + id, "displayName": id, "version": "001",
			"supportedGenerationMethods": []string{"generateContent", "countTokens"}}
	}
	c.writeJSON(mustJSON(map[string]any{"models": models}))
}

// geminiUsage is usageMetadata: promptTokenCount includes the cached part; thoughts are reported apart
// from the candidates.
func (c *call) geminiUsage() map[string]any {
	u := map[string]any{"promptTokenCount": c.b.promptTokens, "candidatesTokenCount": c.b.completionTokens,
		"totalTokenCount": c.b.promptTokens + c.b.completionTokens + c.b.thoughtTokens}
	if c.b.cacheReadTokens > 0 {
		u["cachedContentTokenCount"] = c.b.cacheReadTokens
	}
	if c.b.thoughtTokens > 0 {
		u["thoughtsTokenCount"] = c.b.thoughtTokens
	}
	return u
}

func (c *call) geminiChunk(parts []any, finish string) map[string]any {
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	if finish != "" {
		cand["finishReason"] = finish
	}
	out := map[string]any{"candidates": []any{cand}, "modelVersion": c.model, "responseId": "gemini-relaytest-" + strconv.Itoa(c.seq)}
	if finish != "" && c.b.usage {
		out["usageMetadata"] = c.geminiUsage()
	}
	return out
}

// geminiGenerate answers generateContent and streamGenerateContent?alt=sse. A function call arrives whole
// (Gemini never streams arguments), with finishReason STOP.
func (c *call) geminiGenerate() {
	if c.b.toolName != "" {
		call := map[string]any{"functionCall": map[string]any{"name": c.b.toolName, "args": json.RawMessage(rawOrEmpty(c.b.toolArgs))}}
		body := mustJSON(c.geminiChunk([]any{call}, "STOP"))
		if !c.stream {
			c.answer(body)
			return
		}
		c.writeStream(streamPlan{content: [][]byte{geminiFrame(body)}})
		return
	}
	if !c.stream {
		c.answer(mustJSON(c.geminiChunk([]any{map[string]any{"text": c.fullText()}}, "STOP")))
		return
	}
	var sp streamPlan
	for _, p := range c.pieces() {
		sp.content = append(sp.content, geminiFrame(mustJSON(c.geminiChunk([]any{map[string]any{"text": p}}, ""))))
	}
	sp.tail = [][]byte{geminiFrame(mustJSON(c.geminiChunk([]any{map[string]any{"text": ""}}, "STOP")))}
	c.writeStream(sp)
}

// geminiFrame frames one SSE event as Google does ("\r\n\r\n" after the data line).
func geminiFrame(b []byte) []byte {
	out := make([]byte, 0, len(b)+10)
	out = append(out, "data: "...)
	out = append(out, b...)
	return append(out, "\r\n\r\n"...)
}

// argPieces splits a tool call's arguments into n fragments (fewer when the text is short), on rune
// boundaries; their concatenation is the whole text.
func argPieces(args string, n int) []string {
	n = max(min(n, utf8.RuneCountInString(args)), 1)
	size := (len(args) + n - 1) / n
	var out []string
	for len(args) > 0 {
		end := min(size, len(args))
		for end < len(args) && !utf8.RuneStart(args[end]) {
			end++
		}
		out = append(out, args[:end])
		args = args[end:]
	}
	if len(out) == 0 {
		out = []string{""}
	}
	return out
}

// geminiStatus is the google.rpc status word of an HTTP status.
func geminiStatus(status int) string {
	switch status {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 503, 529:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	}
	return "INTERNAL"
}

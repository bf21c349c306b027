package relaytest

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"strconv"

	"github.com/tidwall/gjson"
)

type openaiUsage struct {
	PromptTokens            int            `json:"prompt_tokens"`
	CompletionTokens        int            `json:"completion_tokens"`
	TotalTokens             int            `json:"total_tokens"`
	PromptTokensDetails     map[string]int `json:"prompt_tokens_details,omitempty"`
	CompletionTokensDetails map[string]int `json:"completion_tokens_details,omitempty"`
}

func (c *call) openaiUsage() *openaiUsage {
	if !c.b.usage {
		return nil
	}
	return &openaiUsage{
		PromptTokens: c.b.promptTokens, CompletionTokens: c.b.completionTokens,
		TotalTokens:             c.b.promptTokens + c.b.completionTokens,
		PromptTokensDetails:     map[string]int{"cached_tokens": c.b.cacheReadTokens, "audio_tokens": 0},
		CompletionTokensDetails: map[string]int{"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
	}
}

type chatMessage struct {
	Role        string `json:"role"`
	Content     string `json:"content"`
	Refusal     any    `json:"refusal"`
	Annotations []any  `json:"annotations"`
}

type chatChoice struct {
	Index        int          `json:"index"`
	Message      *chatMessage `json:"message,omitempty"`
	Delta        *chatDelta   `json:"delta,omitempty"`
	Text         *string      `json:"text,omitempty"`
	Logprobs     any          `json:"logprobs"`
	FinishReason *string      `json:"finish_reason"`
}

type chatDelta struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

type chatResponse struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"`
	Created           int64           `json:"created"`
	Model             string          `json:"model"`
	Choices           []chatChoice    `json:"choices"`
	Usage             json.RawMessage `json:"usage,omitempty"`
	ServiceTier       string          `json:"service_tier,omitempty"`
	SystemFingerprint string          `json:"system_fingerprint"`
}

func ptr[T any](v T) *T { return &v }

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("relaytest: marshal: " + err.Error())
	}
	return b
}

func dataEvent(v any) []byte {
	b := mustJSON(v)
	out := make([]byte, 0, len(b)+8)
	out = append(out, "data: "...)
	out = append(out, b...)
	return append(out, '\n', '\n')
}

func (c *call) chat() {
	if c.b.toolName != "" {
		c.chatTool()
		return
	}
	id := "chatcmpl-relaytest-" + strconv.Itoa(c.seq)
	if !c.stream {
		resp := chatResponse{ID: id, Object: "chat.completion", Created: c.created, Model: c.model,
			Choices: []chatChoice{{Message: &chatMessage{Role: "assistant", Content: c.fullText(), Annotations: []any{}},
				FinishReason: ptr("stop")}},
			ServiceTier: "default", SystemFingerprint: "fp_relaytest"}
		if u := c.openaiUsage(); u != nil {
			resp.Usage = mustJSON(u)
		}
		c.answer(mustJSON(resp))
		return
	}
	sendUsage := c.includeUsage && c.b.usage
	chunk := func(choices []chatChoice) chatResponse {
		r := chatResponse{ID: id, Object: "chat.completion.chunk", Created: c.created, Model: c.model,
			Choices: choices, ServiceTier: "default", SystemFingerprint: "fp_relaytest"}
		if sendUsage {
			r.Usage = json.RawMessage("null")
		}
		return r
	}
	var sp streamPlan
	sp.pre = [][]byte{dataEvent(chunk([]chatChoice{{Delta: &chatDelta{Role: "assistant", Content: ptr("")}}}))}
	for _, p := range c.pieces() {
		sp.content = append(sp.content, dataEvent(chunk([]chatChoice{{Delta: &chatDelta{Content: ptr(p)}}})))
	}
	sp.tail = append(sp.tail, dataEvent(chunk([]chatChoice{{Delta: &chatDelta{}, FinishReason: ptr("stop")}})))
	if sendUsage {
		last := chunk([]chatChoice{})
		last.Usage = mustJSON(c.openaiUsage())
		sp.tail = append(sp.tail, dataEvent(last))
	}
	sp.tail = append(sp.tail, []byte("data: [DONE]\n\n"))
	c.writeStream(sp)
}

func (c *call) completions() {
	id := "cmpl-relaytest-" + strconv.Itoa(c.seq)
	if !c.stream {
		resp := chatResponse{ID: id, Object: "text_completion", Created: c.created, Model: c.model,
			Choices:           []chatChoice{{Text: ptr(c.fullText()), FinishReason: ptr("stop")}},
			SystemFingerprint: "fp_relaytest"}
		if u := c.openaiUsage(); u != nil {
			u.PromptTokensDetails, u.CompletionTokensDetails = nil, nil
			resp.Usage = mustJSON(u)
		}
		c.answer(mustJSON(resp))
		return
	}
	chunk := func(text string, finish *string) []byte {
		return dataEvent(chatResponse{ID: id, Object: "text_completion", Created: c.created, Model: c.model,
			Choices: []chatChoice{{Text: ptr(text), FinishReason: finish}}, SystemFingerprint: "fp_relaytest"})
	}
	var sp streamPlan
	for _, p := range c.pieces() {
		sp.content = append(sp.content, chunk(p, nil))
	}
	sp.tail = append(sp.tail, chunk("", ptr("stop")))
	if c.includeUsage && c.b.usage {
		u := c.openaiUsage()
		u.PromptTokensDetails, u.CompletionTokensDetails = nil, nil
		sp.tail = append(sp.tail, dataEvent(chatResponse{ID: id, Object: "text_completion", Created: c.created,
			Model: c.model, Choices: []chatChoice{}, Usage: mustJSON(u), SystemFingerprint: "fp_relaytest"}))
	}
	sp.tail = append(sp.tail, []byte("data: [DONE]\n\n"))
	c.writeStream(sp)
}

type embedding struct {
	Object    string `json:"object"`
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"`
}

// embeddings answers one vector per input (a string, an array of strings, tokens, or token arrays).
func (c *call) embeddings() {
	in := gjson.GetBytes(c.body, "input")
	n := 1
	if in.IsArray() {
		arr := in.Array()
		if len(arr) > 0 && (arr[0].Type == gjson.String || arr[0].IsArray()) {
			n = len(arr)
		}
	}
	dims := int(gjson.GetBytes(c.body, "dimensions").Int())
	if dims <= 0 || dims > 4096 {
		dims = 8
	}
	b64 := gjson.GetBytes(c.body, "encoding_format").String() == "base64"
	data := make([]embedding, n)
	for i := range data {
		vec := make([]float32, dims)
		for j := range vec {
			vec[j] = float32(i+1) * float32(j+1) / 1000
		}
		data[i] = embedding{Object: "embedding", Index: i, Embedding: vec}
		if b64 {
			raw := make([]byte, 4*dims)
			for j, v := range vec {
				binary.LittleEndian.PutUint32(raw[4*j:], math.Float32bits(v))
			}
			data[i].Embedding = base64.StdEncoding.EncodeToString(raw)
		}
	}
	resp := map[string]any{"object": "list", "data": data, "model": c.model}
	if c.b.usage {
		resp["usage"] = map[string]int{"prompt_tokens": c.b.promptTokens, "total_tokens": c.b.promptTokens}
	}
	c.writeJSON(mustJSON(resp))
}

// models lists the configured model ids, in Anthropic's shape when the caller sent anthropic-version.
func (c *call) models() {
	ids := c.b.models
	if c.r.Header.Get("anthropic-version") != "" {
		data := make([]map[string]any, len(ids))
		for i, id := range ids {
			data[i] = map[string]any{"type": "model", "id": id, "display_name": id, "created_at": "2025-01-01T00:00:00Z"}
		}
		resp := map[string]any{"data": data, "has_more": false, "first_id": nil, "last_id": nil}
		if len(ids) > 0 {
			resp["first_id"], resp["last_id"] = ids[0], ids[len(ids)-1]
		}
		c.p = protoAnthropic
		c.writeJSON(mustJSON(resp))
		return
	}
	data := make([]map[string]any, len(ids))
	for i, id := range ids {
		data[i] = map[string]any{"id": id, "object": "model", "created": 1700000000, "owned_by": "relaytest"}
	}
	c.writeJSON(mustJSON(map[string]any{"object": "list", "data": data}))
}

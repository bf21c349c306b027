package tokencount

import (
	"strings"

	"github.com/tidwall/gjson"
)

// Overheads from OpenAI's cookbook (num_tokens_from_messages): every chat message is wrapped in
// <|start|>role ... <|end|>, and the reply is primed with <|start|>assistant<|message|>.
const (
	tokensPerMessage = 3
	tokensPerName    = 1
	tokensReplyPrime = 3
)

// Images are priced by size, which a request body rarely states; these are the published costs of a 1024×1024
// image, the common case, so an estimate errs on the high (safe for a hold) side for small ones.
const (
	openAIImageLow  = 85
	openAIImageHigh = 765
	anthropicImage  = 1600
)

// OpenAIChatPrompt estimates the prompt tokens of an OpenAI-style request body: chat/completions (messages),
// responses (instructions + input), embeddings (input) or completions (prompt), plus declared tools.
// Malformed bodies count as what could be read; it never fails.
func (c *Counter) OpenAIChatPrompt(model string, body []byte) int {
	if !gjson.ValidBytes(body) {
		return c.Text(model, string(body))
	}
	root := gjson.ParseBytes(body)
	n := 0
	switch {
	case root.Get("messages").Exists():
		n = c.chatMessages(model, root.Get("messages")) + tokensReplyPrime
	case root.Get("input").Exists():
		input := root.Get("input")
		if isEmbedding(model) {
			n = c.plainInput(model, input)
			break
		}
		if instr := root.Get("instructions"); instr.Type == gjson.String && instr.Str != "" {
			n += tokensPerMessage + c.Text(model, instr.Str)
		}
		if input.Type == gjson.String {
			n += tokensPerMessage + c.Text(model, input.Str)
		} else {
			n += c.responsesItems(model, input)
		}
		n += tokensReplyPrime
	case root.Get("prompt").Exists():
		n = c.plainInput(model, root.Get("prompt"))
	}
	n += c.jsonText(model, root.Get("tools")) + c.jsonText(model, root.Get("functions"))
	return n
}

func isEmbedding(model string) bool { return strings.Contains(strings.ToLower(model), "embed") }

// plainInput counts embeddings input / completions prompt: a string, an array of strings, a token array
// (already counted for us) or an array of token arrays.
func (c *Counter) plainInput(model string, v gjson.Result) int {
	switch {
	case v.Type == gjson.String:
		return c.Text(model, v.Str)
	case v.IsArray():
		n := 0
		v.ForEach(func(_, item gjson.Result) bool {
			switch {
			case item.Type == gjson.String:
				n += c.Text(model, item.Str)
			case item.Type == gjson.Number:
				n++ // one token id
			case item.IsArray():
				n += len(item.Array())
			}
			return true
		})
		return n
	}
	return 0
}

func (c *Counter) chatMessages(model string, msgs gjson.Result) int {
	n := 0
	msgs.ForEach(func(_, m gjson.Result) bool {
		n += tokensPerMessage + c.Text(model, m.Get("role").Str)
		if name := m.Get("name"); name.Type == gjson.String {
			n += tokensPerName + c.Text(model, name.Str)
		}
		n += c.openAIContent(model, m.Get("content"))
		if r := m.Get("reasoning_content"); r.Type == gjson.String {
			n += c.Text(model, r.Str)
		}
		m.Get("tool_calls").ForEach(func(_, tc gjson.Result) bool {
			n += c.Text(model, tc.Get("function.name").Str) + c.Text(model, tc.Get("function.arguments").Str)
			return true
		})
		if fc := m.Get("function_call"); fc.Exists() {
			n += c.Text(model, fc.Get("name").Str) + c.Text(model, fc.Get("arguments").Str)
		}
		return true
	})
	return n
}

// openAIContent counts a content field: a string, or parts such as {type:"text"}, {type:"input_text"},
// {type:"output_text"}, {type:"image_url"} / {type:"input_image"}, {type:"refusal"}.
func (c *Counter) openAIContent(model string, content gjson.Result) int {
	switch {
	case content.Type == gjson.String:
		return c.Text(model, content.Str)
	case !content.IsArray():
		return 0
	}
	n := 0
	content.ForEach(func(_, part gjson.Result) bool {
		if part.Type == gjson.String {
			n += c.Text(model, part.Str)
			return true
		}
		switch typ := part.Get("type").Str; typ {
		case "image_url", "input_image", "image":
			detail := part.Get("image_url.detail").Str
			if detail == "" {
				detail = part.Get("detail").Str
			}
			if detail == "low" {
				n += openAIImageLow
			} else {
				n += openAIImageHigh
			}
		default:
			for _, field := range []string{"text", "refusal"} {
				if t := part.Get(field); t.Type == gjson.String {
					n += c.Text(model, t.Str)
				}
			}
		}
		return true
	})
	return n
}

// responsesItems counts a Responses API input array: messages, function calls and their outputs, reasoning.
func (c *Counter) responsesItems(model string, items gjson.Result) int {
	n := 0
	items.ForEach(func(_, it gjson.Result) bool {
		switch it.Get("type").Str {
		case "function_call", "custom_tool_call":
			n += tokensPerMessage + c.Text(model, it.Get("name").Str) +
				c.Text(model, it.Get("arguments").Str) + c.Text(model, it.Get("input").Str)
		case "function_call_output", "custom_tool_call_output":
			n += tokensPerMessage + c.openAIContent(model, it.Get("output"))
		case "reasoning":
			it.Get("summary").ForEach(func(_, s gjson.Result) bool {
				n += c.Text(model, s.Get("text").Str)
				return true
			})
		default: // "message" or a bare {role, content}
			n += tokensPerMessage + c.Text(model, it.Get("role").Str) + c.openAIContent(model, it.Get("content"))
		}
		return true
	})
	return n
}

// AnthropicPrompt estimates the input tokens of an Anthropic Messages request body: system (string or text
// blocks), messages (string or blocks: text, image, tool_use, tool_result, document, thinking) and tools.
func (c *Counter) AnthropicPrompt(model string, body []byte) int {
	if !gjson.ValidBytes(body) {
		return c.Text(model, string(body))
	}
	root := gjson.ParseBytes(body)
	n := c.anthropicContent(model, root.Get("system"))
	root.Get("messages").ForEach(func(_, m gjson.Result) bool {
		n += tokensPerMessage + c.anthropicContent(model, m.Get("content"))
		return true
	})
	if root.Get("messages").Exists() {
		n += tokensReplyPrime
	}
	return n + c.jsonText(model, root.Get("tools"))
}

func (c *Counter) anthropicContent(model string, content gjson.Result) int {
	switch {
	case content.Type == gjson.String:
		return c.Text(model, content.Str)
	case !content.IsArray():
		return 0
	}
	n := 0
	content.ForEach(func(_, b gjson.Result) bool {
		switch b.Get("type").Str {
		case "image":
			n += anthropicImage
		case "tool_use", "server_tool_use":
			n += c.Text(model, b.Get("name").Str) + c.jsonText(model, b.Get("input"))
		case "tool_result":
			n += c.anthropicContent(model, b.Get("content"))
		case "document":
			if src := b.Get("source"); src.Get("type").Str == "text" {
				n += c.Text(model, src.Get("data").Str)
			} else {
				n += c.anthropicContent(model, src.Get("content"))
			}
		case "thinking":
			n += c.Text(model, b.Get("thinking").Str)
		default:
			n += c.Text(model, b.Get("text").Str)
		}
		return true
	})
	return n
}

// jsonText counts a JSON value (tool schemas, tool inputs) as its compact text, which is close to how
// providers render tool definitions into the prompt.
func (c *Counter) jsonText(model string, v gjson.Result) int {
	if !v.Exists() || v.Type == gjson.Null {
		return 0
	}
	raw := v.Raw
	if v.IsObject() || v.IsArray() {
		raw = gjson.Get(raw, "@ugly").Raw
	}
	return c.Text(model, raw)
}

// Package meter reads token usage out of upstream answers, non-stream bodies and SSE events alike, in each
// protocol's own fields, without unmarshalling whole bodies. When the upstream reports nothing it keeps the
// generated text so the relay can count tokens locally.
package meter

import (
	"bytes"
	"encoding/binary"
	"strings"

	"github.com/tidwall/gjson"

	"tollgate/relay/adaptor"
	"tollgate/service/pricing"
)

// Meter accumulates the usage of one response.
type Meter struct {
	ep      adaptor.Endpoint
	usage   pricing.Usage
	present bool
	outSeen bool // output tokens came from the upstream
	text    strings.Builder
	body    []byte // a non-stream body whose text is not extracted yet
	// pending holds deferred stream events (Defer) whose text is not read yet: each as its data's length
	// (uvarint) and bytes. The usage of the first usageRead bytes of them is read already: asking for usage
	// reads only that part of each event (a usage-bearing event is rare and easy to tell), and the text,
	// which is only wanted when the upstream reported no output, is read when Text asks for it.
	pending   []byte
	usageRead int
	// CachedAt are further paths inside an OpenAI usage object where a compatible upstream reports the cached
	// part of the prompt (DeepSeek's prompt_cache_hit_tokens, Moonshot's cached_tokens), read when the standard
	// prompt_tokens_details.cached_tokens says nothing.
	CachedAt []string
	// UsageAt is a further path of an OpenAI chunk's usage object (Groq's x_groq.usage), read when a chunk has
	// no top-level usage.
	UsageAt string
}

// New returns a meter for an endpoint.
func New(ep adaptor.Endpoint) *Meter { return &Meter{ep: ep} }

// Usage returns the metered usage and whether the upstream reported any.
func (m *Meter) Usage() (pricing.Usage, bool) {
	m.readUsage()
	return m.usage, m.present
}

// OutputReported says whether the upstream reported output tokens (Anthropic streams report them last).
func (m *Meter) OutputReported() bool {
	m.readUsage()
	return m.outSeen
}

// Text is the generated text seen so far (for local counting when usage is missing).
func (m *Meter) Text() string {
	m.readPending()
	if m.body != nil {
		m.bodyText(m.body)
		m.body = nil
	}
	return m.text.String()
}

// Body meters a complete non-stream JSON body. Its text is extracted only if Text is asked for (when the
// upstream reported no usage), so a normal answer costs one lookup of "usage".
func (m *Meter) Body(body []byte) {
	m.readPending()
	m.body = body
	switch adaptor.ProtocolOf(m.ep) {
	case adaptor.Anthropic:
		m.anthropicUsage(gjson.GetBytes(body, "usage"), true)
	case adaptor.Gemini:
		m.geminiUsage(gjson.GetBytes(body, "usageMetadata"))
	default:
		m.openAIUsage(gjson.GetBytes(body, "usage"))
		if adaptor.KindOf(m.ep).Media() {
			m.mediaUsage(body)
		}
	}
}

// maxMediaCount bounds what an upstream's counts may claim (images, search units).
const maxMediaCount = 1 << 20

// mediaUsage reads what a media answer reports beyond tokens: the images returned (data), the seconds of audio
// (verbose_json duration, or usage.seconds of a duration-billed model), rerank search units (Cohere's
// meta.billed_units.search_units, or usage.search_units) and Jina's usage.total_tokens as input.
func (m *Meter) mediaUsage(body []byte) {
	switch adaptor.KindOf(m.ep) {
	case adaptor.KindImage:
		if d := gjson.GetBytes(body, "data"); d.IsArray() {
			m.usage.Images = min(int64(len(d.Array())), maxMediaCount)
		}
	case adaptor.KindAudioIn:
		r := gjson.GetManyBytes(body, "duration", "usage.seconds")
		for _, v := range r {
			if v.Type == gjson.Number && v.Float() > 0 && v.Float() < 360000 {
				m.usage.AudioMs = int64(v.Float()*1000 + 0.5)
				break
			}
		}
	case adaptor.KindRerank:
		r := gjson.GetManyBytes(body, "meta.billed_units.search_units", "usage.search_units", "usage.total_tokens")
		for _, v := range r[:2] {
			if n := v.Int(); n > 0 {
				m.usage.Searches = min(n, maxMediaCount)
				break
			}
		}
		if n := r[2].Int(); n > 0 && !m.present {
			m.usage.Input, m.present = min(n, 1<<40), true
		}
	}
}

func (m *Meter) bodyText(body []byte) {
	switch adaptor.ProtocolOf(m.ep) {
	case adaptor.Anthropic:
		for _, c := range gjson.GetBytes(body, "content").Array() {
			m.text.WriteString(c.Get("text").String())
		}
	case adaptor.Gemini:
		m.geminiText(gjson.GetBytes(body, "candidates"))
	default:
		if m.ep == adaptor.Responses {
			m.text.WriteString(gjson.GetBytes(body, "output_text").String())
			gjson.GetBytes(body, "output.#.content.#.text").ForEach(func(_, v gjson.Result) bool {
				v.ForEach(func(_, t gjson.Result) bool { m.text.WriteString(t.String()); return true })
				return true
			})
		} else {
			gjson.GetBytes(body, "choices.#.message.content").ForEach(func(_, v gjson.Result) bool { m.text.WriteString(v.String()); return true })
			gjson.GetBytes(body, "choices.#.text").ForEach(func(_, v gjson.Result) bool { m.text.WriteString(v.String()); return true })
		}
	}
}

// pendingFirst is the room a meter's first deferred event gets: a short answer's events, without regrowing.
const pendingFirst = 4 << 10

// pendingMost is how many bytes of deferred events a meter keeps before reading them.
const pendingMost = 8 << 10

// Defer meters one SSE event later: its data is copied and read, in order with the others, when the meter is
// next asked anything or pendingMost bytes wait. Reading a stream's events a batch at a time, instead of one by
// one between the relay's writes, costs a fraction of the CPU (the parser's code and data stay in cache); the
// result is the same as reading each at once (TestDefer_MetersAsEvent, FuzzDefer). An event of pendingMost or
// more is read at once, not copied. It takes no event name: no family's meter reads one.
func (m *Meter) Defer(data []byte) {
	if len(data) >= pendingMost {
		m.Event("", data)
		return
	}
	m.queue(data)
	m.readIfFull()
}

// queue keeps a copy of data in pending.
func (m *Meter) queue(data []byte) {
	if m.pending == nil {
		m.pending = make([]byte, 0, pendingFirst)
	}
	m.pending = binary.AppendUvarint(m.pending, uint64(len(data)))
	m.pending = append(m.pending, data...)
}

// readIfFull reads what waits once pendingMost bytes do.
func (m *Meter) readIfFull() {
	if len(m.pending) >= pendingMost {
		m.readPending()
	}
}

// readUsage reads the usage of the deferred events not read for it yet; their text stays pending.
func (m *Meter) readUsage() {
	forEachPending(m.pending[m.usageRead:], func(data []byte) { m.eventUsage(data) })
	m.usageRead = len(m.pending)
}

// readPending meters the deferred events: usage (where not read yet), then text, in order.
func (m *Meter) readPending() {
	m.readUsage()
	forEachPending(m.pending, m.eventText)
	m.pending, m.usageRead = m.pending[:0], 0
}

// forEachPending calls f with the data of each event in p, a run of pending's length-prefixed events.
func forEachPending(p []byte, f func(data []byte)) {
	for len(p) > 0 {
		n, k := binary.Uvarint(p)
		f(p[k : k+int(n)])
		p = p[k+int(n):]
	}
}

// Event reads one SSE event's usage now (after the deferred events'); its text is kept for Text like a
// deferred event's. It reports whether the event is the OpenAI usage-only chunk (empty choices plus usage),
// which the relay drops when it asked for usage on the client's behalf. It takes no event name: no family's
// meter reads one.
func (m *Meter) Event(_ string, data []byte) (usageOnly bool) {
	m.readUsage()
	usageOnly = m.eventUsage(data)
	if len(data) >= pendingMost { // read at once, not copied: the text of the ones before it first
		m.readPending()
		m.eventText(data)
		return usageOnly
	}
	m.queue(data)
	m.usageRead = len(m.pending)
	m.readIfFull()
	return usageOnly
}

// eventUsage reads the usage one SSE event's data reports, and says whether the event is the OpenAI
// usage-only chunk. A content chunk costs one scan of its bytes: only a chunk that holds a usage key (or an
// escape, which a key may be written with) is parsed.
func (m *Meter) eventUsage(data []byte) (usageOnly bool) {
	switch m.ep {
	case adaptor.GenerateContent:
		if mayHold(data, geminiUsageKey) {
			m.geminiUsage(gjson.GetBytes(data, "usageMetadata"))
		}
	case adaptor.Messages:
		switch gjson.GetBytes(data, "type").String() {
		case "message_start":
			m.anthropicUsage(gjson.GetBytes(data, "message.usage"), false)
		case "message_delta":
			m.anthropicUsage(gjson.GetBytes(data, "usage"), true)
		}
	case adaptor.Responses:
		switch gjson.GetBytes(data, "type").String() {
		case "response.completed", "response.incomplete", "response.failed":
			m.openAIUsage(gjson.GetBytes(data, "response.usage"))
		}
	default:
		// Streamed chunks are not validated: a malformed one is billed as Get reads it (it skips what precedes
		// the first brace and stops at the object's end). The scan looks for a "usage" key: a UsageAt ending
		// in another key (no preset has one) has every chunk parsed.
		if !mayHoldUsage(data) && (m.UsageAt == "" || strings.HasSuffix(m.UsageAt, ".usage")) {
			return false
		}
		u := gjson.GetBytes(data, "usage")
		if !u.IsObject() && m.UsageAt != "" {
			if v := gjson.GetBytes(data, m.UsageAt); v.IsObject() {
				m.openAIUsage(v)
			}
		}
		if u.IsObject() {
			m.openAIUsage(u)
			choices := gjson.GetBytes(data, "choices")
			return !choices.Exists() || len(choices.Array()) == 0
		}
	}
	return false
}

// eventText keeps the generated text of one SSE event's data (for local counting when usage is missing).
func (m *Meter) eventText(data []byte) {
	switch m.ep {
	case adaptor.GenerateContent:
		m.geminiText(gjson.GetBytes(data, "candidates"))
	case adaptor.Messages:
		if gjson.GetBytes(data, "type").String() == "content_block_delta" {
			// Text, thinking and tool-call arguments are all generated output: a cut stream is counted by them.
			d := gjson.GetManyBytes(data, "delta.text", "delta.thinking", "delta.partial_json")
			for _, v := range d {
				m.text.WriteString(v.String())
			}
		}
	case adaptor.Responses:
		switch gjson.GetBytes(data, "type").String() {
		case "response.output_text.delta", "response.function_call_arguments.delta", "response.reasoning_summary_text.delta",
			"response.reasoning_text.delta", "response.custom_tool_call_input.delta":
			m.text.WriteString(gjson.GetBytes(data, "delta").String())
		}
	default:
		gjson.GetBytes(data, "choices").ForEach(func(_, ch gjson.Result) bool {
			d := ch.Get("delta")
			m.text.WriteString(d.Get("content").String())
			m.text.WriteString(d.Get("reasoning_content").String())
			d.Get("tool_calls.#.function.arguments").ForEach(func(_, a gjson.Result) bool {
				m.text.WriteString(a.String())
				return true
			})
			m.text.WriteString(ch.Get("text").String())
			return true
		})
	}
}

// MayCarryUsage says whether an OpenAI chunk may hold a usage object: its "usage" key followed by an object
// rather than null (every chunk of a stream with include_usage carries "usage":null). A key written with
// escapes is not seen (the meter checks for escapes itself).
func MayCarryUsage(data []byte) bool {
	for {
		i := bytes.Index(data, usageKey)
		if i < 0 {
			return false
		}
		data = bytes.TrimLeft(data[i+len(usageKey):], " \t\r\n")
		if len(data) > 0 && data[0] == ':' {
			if v := bytes.TrimLeft(data[1:], " \t\r\n"); len(v) > 0 && v[0] == '{' {
				return true
			}
		}
	}
}

var (
	usageKey       = []byte(`"usage"`)
	geminiUsageKey = []byte("usageMetadata")
)

// mayHoldUsage says whether an OpenAI chunk may hold a usage object, also one under a UsageAt ending in
// "usage" (x_groq.usage): MayCarryUsage, or an escape anywhere (a key may be written with escapes, which the JSON
// reader decodes before it compares).
func mayHoldUsage(data []byte) bool {
	return MayCarryUsage(data) || hasEscape(data)
}

// mayHold says whether data may hold the key word: it does, or it holds an escape.
func mayHold(data, word []byte) bool { return bytes.Contains(data, word) || hasEscape(data) }

func hasEscape(data []byte) bool { return bytes.IndexByte(data, '\\') >= 0 }

// openAIUsage reads chat/completions/embeddings (prompt_tokens/completion_tokens) and Responses
// (input_tokens/output_tokens) usage; cached tokens are split out of the prompt.
func (m *Meter) openAIUsage(u gjson.Result) {
	if !u.IsObject() {
		return
	}
	// One walk of the object, no map. A key given twice counts by its first value, as everywhere else the
	// gateway reads usage (gjson's Get; the translator's oaiUsageIn), so a translated answer reports what is billed.
	var prompt, input, completion, output gjson.Result
	first := func(dst *gjson.Result, v gjson.Result) {
		if !dst.Exists() {
			*dst = v
		}
	}
	u.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "prompt_tokens":
			first(&prompt, v)
		case "input_tokens":
			first(&input, v)
		case "completion_tokens":
			first(&completion, v)
		case "output_tokens":
			first(&output, v)
		}
		return true
	})
	if !prompt.Exists() {
		prompt = input
	}
	out := completion
	if !out.Exists() {
		out = output
	}
	hasPrompt, hasOut := prompt.Exists(), out.Exists()
	if !hasPrompt && !hasOut {
		return
	}
	cached := u.Get("prompt_tokens_details.cached_tokens").Int()
	if cached == 0 {
		cached = u.Get("input_tokens_details.cached_tokens").Int()
	}
	for _, p := range m.CachedAt {
		if cached != 0 {
			break
		}
		cached = u.Get(p).Int()
	}
	m.present = true
	m.outSeen = m.outSeen || hasOut
	// Negative counts from a broken upstream would credit the caller; cached tokens are part of the prompt.
	in := max(prompt.Int(), 0)
	cached = min(max(cached, 0), in)
	m.usage = pricing.Usage{Input: in - cached, CacheRead: cached, Output: max(out.Int(), 0)}
}

// anthropicUsage reads Anthropic usage. message_start carries input and a placeholder output count;
// message_delta (final) carries the cumulative output tokens.
func (m *Meter) anthropicUsage(u gjson.Result, final bool) {
	if !u.IsObject() {
		return
	}
	r := u.Map()
	if v, ok := r["input_tokens"]; ok && v.Int() > 0 {
		m.usage.Input = v.Int()
	}
	if v, ok := r["cache_read_input_tokens"]; ok && v.Int() > 0 {
		m.usage.CacheRead = v.Int()
	}
	if v, ok := r["cache_creation_input_tokens"]; ok && v.Int() > 0 {
		m.usage.CacheWrite = v.Int()
	}
	if v, ok := r["output_tokens"]; ok && v.Int() >= m.usage.Output {
		m.usage.Output = v.Int()
	}
	m.present = true
	m.outSeen = m.outSeen || final
}

// geminiUsage reads Gemini's usageMetadata (cumulative on every chunk that has it: the last wins).
// promptTokenCount includes the cached part (cachedContentTokenCount) and tool-use prompts are input too;
// thinking tokens (thoughtsTokenCount) are output, billed with the candidates.
func (m *Meter) geminiUsage(u gjson.Result) {
	if !u.IsObject() {
		return
	}
	r := u.Map()
	prompt, hasPrompt := r["promptTokenCount"]
	cand, hasCand := r["candidatesTokenCount"]
	thoughts, hasThoughts := r["thoughtsTokenCount"]
	if !hasPrompt && !hasCand && !hasThoughts {
		return
	}
	in := max(prompt.Int(), 0) + max(r["toolUsePromptTokenCount"].Int(), 0)
	cached := min(max(r["cachedContentTokenCount"].Int(), 0), in)
	m.present = true
	m.outSeen = m.outSeen || hasCand || hasThoughts
	m.usage = pricing.Usage{Input: in - cached, CacheRead: cached, Output: max(cand.Int(), 0) + max(thoughts.Int(), 0)}
}

// geminiText keeps the answer text of Gemini candidates (thought parts included: they are output).
func (m *Meter) geminiText(cands gjson.Result) {
	cands.ForEach(func(_, c gjson.Result) bool {
		c.Get("content.parts").ForEach(func(_, p gjson.Result) bool {
			m.text.WriteString(p.Get("text").String())
			if args := p.Get("functionCall.args"); args.Exists() {
				m.text.WriteString(args.Raw)
			}
			return true
		})
		return true
	})
}

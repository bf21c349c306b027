package relaytest

import (
	"maps"
	"sync/atomic"
	"time"
)

// behavior is everything that decides how the fake answers one request. It is a plain value: the handler keeps
// an immutable snapshot and tests replace it with Set, so readers never lock.
type behavior struct {
	usage            bool
	promptTokens     int
	completionTokens int
	cacheReadTokens  int
	cacheWriteTokens int

	chunks          int
	chunkDelay      time.Duration
	headerDelay     time.Duration
	firstChunkDelay time.Duration
	// endDelay holds a stream's end (the chunked body's terminator) back after its last event (WithEndDelay).
	endDelay   time.Duration
	text       string
	sendStamps bool // each content delta carries the time it was sent (WithSendStamps)
	models     []string
	// toolName and toolArgs, when set, make every generation answer one call of that function with those
	// arguments (a JSON object as text; streamed in chunks argument fragments) instead of text.
	toolName, toolArgs string
	// thoughtTokens is Gemini's thoughtsTokenCount (reported beside candidatesTokenCount).
	thoughtTokens int
	record        bool
	// audioSeconds is the duration verbose_json transcriptions report.
	audioSeconds float64

	fault     *Fault
	failFirst int
	failCount *atomic.Int64
	// failOf > 0: fail failFirst of every failOf matching requests, spread evenly (a success rate).
	failOf int

	keyOpts   map[string][]Option
	modelOpts map[string][]Option
}

// Option configures an Upstream or Handler, at construction (New, NewHandler) or at run time (Set, Reset).
type Option func(*behavior)

// Defaults used when no option says otherwise: usage on, 10 prompt + 20 completion tokens, 5 chunks, no delay.
const (
	DefaultPromptTokens     = 10
	DefaultCompletionTokens = 20
	DefaultChunks           = 5
	DefaultText             = "Hello from the relaytest fake upstream."
)

func defaultBehavior() behavior {
	return behavior{
		usage:            true,
		promptTokens:     DefaultPromptTokens,
		completionTokens: DefaultCompletionTokens,
		chunks:           DefaultChunks,
		text:             DefaultText,
		models:           []string{"gpt-4o-mini", "gpt-4o", "text-embedding-3-small", "claude-sonnet-4-5"},
		record:           true,
		audioSeconds:     DefaultAudioSeconds,
	}
}

// apply returns a copy of b with opts applied; maps are cloned so snapshots never share mutable state.
func (b behavior) apply(opts ...Option) behavior {
	b.keyOpts = maps.Clone(b.keyOpts)
	b.modelOpts = maps.Clone(b.modelOpts)
	for _, o := range opts {
		if o != nil {
			o(&b)
		}
	}
	return b
}

// resolve layers the per-model and then per-key overrides over the base behaviour.
func (b behavior) resolve(key, model string) behavior {
	mo, hasModel := b.modelOpts[model]
	ko, hasKey := b.keyOpts[key]
	if !hasModel && !hasKey {
		return b
	}
	r := b
	r.keyOpts, r.modelOpts = nil, nil // nested overrides must not write into the shared snapshot maps
	for _, o := range mo {
		o(&r)
	}
	for _, o := range ko {
		o(&r)
	}
	return r
}

// shouldFail reports whether this request gets the configured fault, counting it against FailFirst.
func (b behavior) shouldFail() bool {
	if b.fault == nil {
		return false
	}
	if b.failOf > 0 && b.failCount != nil {
		n := b.failCount.Add(1) // the n-th request fails when ⌊n·fail/of⌋ steps up
		return n*int64(b.failFirst)/int64(b.failOf) != (n-1)*int64(b.failFirst)/int64(b.failOf)
	}
	if b.failFirst <= 0 || b.failCount == nil {
		return true
	}
	return b.failCount.Add(1) <= int64(b.failFirst)
}

// WithToolCall makes every generation answer a call of the function name with args (a JSON object as text),
// in each protocol's own tool-call shape, streamed as argument fragments where the protocol streams them.
func WithToolCall(name, args string) Option {
	return func(b *behavior) { b.toolName, b.toolArgs = name, args }
}

// WithText answers text again after WithToolCall (and sets it).
func WithTextAnswer(s string) Option {
	return func(b *behavior) { b.toolName, b.toolArgs, b.text = "", "", s }
}

// WithThoughtTokens sets the thinking tokens a Gemini answer reports (thoughtsTokenCount).
func WithThoughtTokens(n int) Option { return func(b *behavior) { b.thoughtTokens = n } }

// WithUsage turns usage reporting on or off (non-stream usage objects, the OpenAI include_usage chunk,
// Responses usage and Anthropic message_start/message_delta usage).
func WithUsage(on bool) Option { return func(b *behavior) { b.usage = on } }

// WithTokens sets the prompt and completion token counts reported in usage.
func WithTokens(prompt, completion int) Option {
	return func(b *behavior) { b.promptTokens, b.completionTokens = prompt, completion }
}

// WithCacheTokens sets cache-read and cache-write token counts (OpenAI cached_tokens, Anthropic
// cache_read_input_tokens / cache_creation_input_tokens).
func WithCacheTokens(read, write int) Option {
	return func(b *behavior) { b.cacheReadTokens, b.cacheWriteTokens = read, write }
}

// WithChunks sets how many content deltas a stream carries (and how many words a non-stream answer has).
func WithChunks(n int) Option { return func(b *behavior) { b.chunks = max(n, 0) } }

// WithChunkDelay sets the pause between consecutive content deltas of a stream.
func WithChunkDelay(d time.Duration) Option { return func(b *behavior) { b.chunkDelay = d } }

// WithHeaderDelay delays the status line and headers (a slow first byte, for streams and non-streams).
func WithHeaderDelay(d time.Duration) Option { return func(b *behavior) { b.headerDelay = d } }

// WithSendStamps puts into every content delta of a stream the wall-clock time it was written, as
// SendStampPrefix and 19 digits of Unix nanoseconds (ParseSendStamp reads it back): a client in the same
// process then knows how long each delta took to reach it, without the jitter of the pause before it.
func WithSendStamps() Option { return func(b *behavior) { b.sendStamps = true } }

// WithFirstChunkDelay sends stream headers at once but delays the first content delta.
func WithFirstChunkDelay(d time.Duration) Option { return func(b *behavior) { b.firstChunkDelay = d } }

// WithEndDelay holds a stream open for d after its last event ([DONE], message_stop, response.completed)
// before the body ends: the end of the chunked body reaches the client in a later packet than the last event,
// as it can from a vendor behind a load balancer.
func WithEndDelay(d time.Duration) Option { return func(b *behavior) { b.endDelay = d } }

// WithText sets the answer text; its words are cycled over the chunks.
func WithText(s string) Option { return func(b *behavior) { b.text = s } }

// WithModels sets the ids listed by GET /v1/models.
func WithModels(ids ...string) Option {
	return func(b *behavior) { b.models = append([]string(nil), ids...) }
}

// WithRecording turns request recording on (default) or off; Count still counts. Turn it off under load.
func WithRecording(on bool) Option { return func(b *behavior) { b.record = on } }

// Fail makes every matching request fail with f.
func Fail(f Fault) Option {
	return func(b *behavior) { b.fault, b.failFirst, b.failOf, b.failCount = &f, 0, 0, nil }
}

// FailFirst makes the first n matching requests fail with f and later ones succeed. The count starts when
// this option value is created, so re-applying the same value does not restart it.
func FailFirst(n int, f Fault) Option {
	c := new(atomic.Int64)
	return func(b *behavior) { b.fault, b.failFirst, b.failOf, b.failCount = &f, n, 0, c }
}

// FailShare makes fail of every of matching requests fail with f, spread evenly and deterministically
// (FailShare(3, 10, …) succeeds 70 %): an upstream with a set success rate.
func FailShare(fail, of int, f Fault) Option {
	c := new(atomic.Int64)
	return func(b *behavior) { b.fault, b.failFirst, b.failOf, b.failCount = &f, fail, of, c }
}

// Succeed clears any fault.
func Succeed() Option {
	return func(b *behavior) { b.fault, b.failFirst, b.failOf, b.failCount = nil, 0, 0, nil }
}

// ForKey overrides behaviour for requests carrying the upstream API key key (Bearer or x-api-key). The
// options are layered over the base (and any ForModel override) per request. ForKey(key) with no options
// removes the override.
func ForKey(key string, opts ...Option) Option {
	return func(b *behavior) { setOverride(&b.keyOpts, key, opts) }
}

// ForModel overrides behaviour for requests whose body names model; see ForKey.
func ForModel(model string, opts ...Option) Option {
	return func(b *behavior) { setOverride(&b.modelOpts, model, opts) }
}

func setOverride(m *map[string][]Option, k string, opts []Option) {
	if len(opts) == 0 {
		delete(*m, k)
		return
	}
	if *m == nil {
		*m = map[string][]Option{}
	}
	(*m)[k] = append([]Option(nil), opts...)
}

// WithAudioSeconds sets the duration verbose_json transcriptions report.
func WithAudioSeconds(s float64) Option { return func(b *behavior) { b.audioSeconds = s } }

// Package adaptor is the one small interface every upstream protocol family implements; each provider is a
// package of its own (openai, anthropic; gemini, azure, ... later) registered in a Registry.
package adaptor

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"tollgate/model"
	"tollgate/service/pricing"
)

// Endpoint is a relay route.
type Endpoint int

// The relay endpoints.
const (
	ChatCompletions Endpoint = iota
	Completions
	Embeddings
	Responses
	Messages
	CountTokens
	GenerateContent   // Gemini :generateContent and :streamGenerateContent (stream comes from the path)
	GeminiCountTokens // Gemini :countTokens
	EmbedContent      // Gemini :embedContent
	// Media endpoints (OpenAI shapes; endpoints.go has their paths and formats).
	ImageGenerations    // /v1/images/generations (JSON)
	ImageEdits          // /v1/images/edits (multipart)
	ImageVariations     // /v1/images/variations (multipart)
	AudioTranscriptions // /v1/audio/transcriptions (multipart audio in)
	AudioTranslations   // /v1/audio/translations (multipart audio in)
	AudioSpeech         // /v1/audio/speech (JSON in, audio bytes out)
	Rerank              // /v1/rerank (Cohere/Jina shape)
	Moderations         // /v1/moderations
)

// String names the endpoint as logs show it.
func (e Endpoint) String() string { return endpoints[e].Name }

// Protocol is a wire format: what a client speaks on an endpoint (its errors, answers and stream events),
// and what an upstream family speaks.
type Protocol int

// Protocols. OpenAI is chat completions (and legacy completions, embeddings); Responses is OpenAI's
// Responses API, which has its own answer and stream shapes but OpenAI's error shape.
const (
	OpenAI Protocol = iota
	Anthropic
	Gemini
	ResponsesAPI
)

// String is the protocol's name in logs and the API: openai, anthropic, gemini, responses.
func (p Protocol) String() string {
	return [...]string{"openai", "anthropic", "gemini", "responses"}[p]
}

// ProtocolOf returns the protocol of an endpoint.
func ProtocolOf(e Endpoint) Protocol { return endpoints[e].Proto }

// Kind is what a call does, whatever protocol it is written in: calls of one kind can be translated into
// each other (relay/convert), so a chat call may be served by any family that generates.
type Kind int

// Kinds.
const (
	KindGenerate   Kind = iota // chat completions, Responses, Messages, generateContent
	KindCompletion             // legacy completions (OpenAI only)
	KindEmbed                  // embeddings, embedContent
	KindCount                  // count tokens (no generation, never billed)
	// Media kinds: each is its own endpoint family, served natively only (Kind.Media).
	KindImage    // image generation, edits, variations: billed per image (by size and quality) and tokens
	KindAudioIn  // transcriptions and translations: billed per minute of audio
	KindSpeech   // text to speech: billed per 1M characters of input
	KindRerank   // rerank: billed per 1,000 searches (and tokens)
	KindModerate // moderations: tokens or per call
)

// KindOf returns the kind of an endpoint.
func KindOf(e Endpoint) Kind { return endpoints[e].Kind }

// EndpointFor is the endpoint of kind k in protocol p (false: p has none, e.g. counting tokens on OpenAI).
func EndpointFor(k Kind, p Protocol) (Endpoint, bool) {
	if k.Media() {
		return 0, false // media calls are never translated into another family
	}
	for e := range NumEndpoints {
		if KindOf(e) == k && ProtocolOf(e) == p {
			return e, true
		}
	}
	return 0, false
}

// Call is what the adaptor needs to build one upstream request.
type Call struct {
	Endpoint      Endpoint
	Stream        bool
	UpstreamModel string
	Body          []byte // already carries the upstream model and the channel's body overrides
	// Upload, when set, is the body instead of Body: a multipart upload streamed from the gateway's spool
	// (never held whole in memory), UploadSize bytes long, sent with ContentType (multipart/form-data;
	// boundary=...). NewPost sends either.
	Upload      io.Reader
	UploadSize  int64
	ContentType string
	Header      http.Header // the client's request headers (read-only)
	BaseURL     string
	Key         string
}

// Meter reads the token usage out of one answer on one endpoint: a complete non-stream body, or SSE events
// one by one. When the upstream reports nothing it keeps the generated text for local counting.
type Meter interface {
	// Body meters a complete non-stream JSON answer.
	Body(body []byte)
	// Event meters one SSE event; usageOnly says it is an OpenAI usage-only chunk (empty choices plus usage),
	// which the relay drops when it asked for usage on the client's behalf.
	Event(name string, data []byte) (usageOnly bool)
	// Defer meters one SSE event later (its bytes copied), with the same result as Event: read in order with
	// the other deferred events when the meter is next asked anything, or when enough wait.
	Defer(data []byte)
	// Usage is the metered usage and whether the upstream reported any.
	Usage() (pricing.Usage, bool)
	// OutputReported says whether the upstream reported output tokens.
	OutputReported() bool
	// Text is the generated text seen so far.
	Text() string
}

// Adaptor is everything the relay knows about one upstream family: which endpoints it serves natively, how
// to build its requests, read its answers, streams and usage, list its models and test it.
type Adaptor interface {
	// Protocol is the family's own protocol for generation: what a request from a client of another
	// protocol is translated into for it.
	Protocol() Protocol
	// Supports reports whether this family serves the endpoint natively (same-protocol pass-through).
	Supports(e Endpoint) bool
	// NewRequest builds the upstream HTTP request.
	NewRequest(ctx context.Context, c *Call) (*http.Request, error)
	// NewMeter reads usage from this family's answers on e.
	NewMeter(e Endpoint) Meter
	// Terminal says whether an SSE event (its name and joined data) ends a stream on e normally.
	Terminal(e Endpoint, name string, data []byte) bool
	// ModelsRequest is the upstream's model list request, with the headers to send.
	ModelsRequest(ctx context.Context, baseURL, key string) (*http.Request, error)
	// ParseModels reads the model ids out of the answer to ModelsRequest.
	ParseModels(body []byte) []string
	// TestCall is the tiny request a channel test sends for model: the endpoint and its body.
	TestCall(model string) (Endpoint, []byte)
}

// Configurable is a family whose requests depend on the channel's type-specific settings or on the model
// (Azure's deployments, Vertex's publisher, Bedrock's region, an OpenAI-compatible preset): the relay asks it
// for the adaptor of one channel and upstream model ("" for the model list) before every use.
type Configurable interface {
	Configure(cfg model.ChannelConfig, upstreamModel string) Adaptor
}

// Unframer is a family whose stream is not SSE on the wire (Bedrock's AWS event stream): Unframe wraps the
// body of a 2xx answer so the relay reads the SSE events of the family's protocol from it (and says so in
// Content-Type); non-stream answers are left alone.
type Unframer interface {
	Unframe(resp *http.Response)
}

// ErrNoModelList is what ModelsRequest returns for an upstream that has no model list to fetch.
var ErrNoModelList = errors.New("this channel type has no model list endpoint: enter the models by hand")

// CredentialError is a key that cannot be turned into a signed request (a service-account JSON that does not
// parse, a token exchange the identity provider refuses): the key's failure, not the channel's.
type CredentialError struct{ Err error }

func (e *CredentialError) Error() string { return "channel credential: " + e.Err.Error() }
func (e *CredentialError) Unwrap() error { return e.Err }

// Registry maps channel types to adaptors: where each channel type is declared.
type Registry map[string]Adaptor

// Types lists the registry's channel types, sorted.
func (r Registry) Types() []string {
	out := make([]string, 0, len(r))
	for t := range r {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// DataIDs reads the model ids of an OpenAI-style list, {"data":[{"id":...}]}, as OpenAI and Anthropic answer.
func DataIDs(body []byte) []string {
	out := []string{}
	for _, id := range gjson.GetBytes(body, "data.#.id").Array() {
		out = append(out, id.String())
	}
	return out
}

// JoinURL appends path to base, not doubling a "/v1" the admin already put on the base URL.
func JoinURL(base, path string) string {
	base = strings.TrimRight(base, "/")
	if strings.HasSuffix(base, "/v1") && strings.HasPrefix(path, "/v1/") {
		path = path[3:]
	}
	return base + path
}

// NewPost builds the upstream POST of a call to url: its upload (multipart, streamed) when it has one, else its
// JSON body (PostJSON).
func NewPost(ctx context.Context, url string, c *Call) (*http.Request, error) {
	if c.Upload == nil {
		return PostJSON(ctx, url, c.Body, c.Stream)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, c.Upload)
	if err != nil {
		return nil, err
	}
	req.ContentLength = c.UploadSize
	req.Header.Set("Content-Type", c.ContentType)
	return req, nil
}

// PostJSON builds the upstream POST every JSON protocol sends: the body as JSON, and for streams an Accept
// for server-sent events.
func PostJSON(ctx context.Context, url string, body []byte, stream bool) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	return req, nil
}

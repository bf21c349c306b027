package adaptor

import "strings"

// BodyFormat is how a caller's request body travels on an endpoint.
type BodyFormat int

// Body formats.
const (
	BodyJSON      BodyFormat = iota // one JSON object (bodyshape-checked, model read with gjson)
	BodyMultipart                   // multipart/form-data upload (images edits and variations, audio in)
)

// AnswerFormat is what an upstream answers on an endpoint.
type AnswerFormat int

// Answer formats.
const (
	AnswerJSON   AnswerFormat = iota // a JSON body, or SSE events when streamed
	AnswerBinary                     // bytes passed to the client as they arrive (speech audio)
	AnswerAny                        // JSON, or text (transcriptions as text, srt, vtt): JSON is metered, text passed through
)

// EndpointInfo is everything that varies by endpoint and is data, not code: the caller's route, the
// OpenAI-layout path upstreams serve it under, its kind and wire formats. Adaptors build their URLs from it
// (OpenAI-style families: base + Path; Azure: /openai/deployments/{dep}/ + Suffix()), so a new endpoint is
// one row here.
type EndpointInfo struct {
	Name   string // as logs show it
	Route  string // the public route ({model} for routes that carry it)
	Path   string // the upstream path in OpenAI's layout ("" when the endpoint is not OpenAI-shaped)
	Kind   Kind
	Proto  Protocol
	Body   BodyFormat
	Answer AnswerFormat
}

// Suffix is Path without its version prefix ("/v1/images/edits" → "images/edits"): what a deployment-style
// URL (Azure's /openai/deployments/{dep}/<suffix>) appends.
func (i EndpointInfo) Suffix() string { return strings.TrimPrefix(i.Path, "/v1/") }

// endpoints is the table, indexed by Endpoint.
var endpoints = [...]EndpointInfo{
	ChatCompletions:     {Name: "chat.completions", Route: "/v1/chat/completions", Path: "/v1/chat/completions", Kind: KindGenerate, Proto: OpenAI},
	Completions:         {Name: "completions", Route: "/v1/completions", Path: "/v1/completions", Kind: KindCompletion, Proto: OpenAI},
	Embeddings:          {Name: "embeddings", Route: "/v1/embeddings", Path: "/v1/embeddings", Kind: KindEmbed, Proto: OpenAI},
	Responses:           {Name: "responses", Route: "/v1/responses", Path: "/v1/responses", Kind: KindGenerate, Proto: ResponsesAPI},
	Messages:            {Name: "messages", Route: "/v1/messages", Path: "/v1/messages", Kind: KindGenerate, Proto: Anthropic},
	CountTokens:         {Name: "messages.count_tokens", Route: "/v1/messages/count_tokens", Path: "/v1/messages/count_tokens", Kind: KindCount, Proto: Anthropic},
	GenerateContent:     {Name: "gemini.generate_content", Route: "/v1beta/models/{model}:generateContent", Kind: KindGenerate, Proto: Gemini},
	GeminiCountTokens:   {Name: "gemini.count_tokens", Route: "/v1beta/models/{model}:countTokens", Kind: KindCount, Proto: Gemini},
	EmbedContent:        {Name: "gemini.embed_content", Route: "/v1beta/models/{model}:embedContent", Kind: KindEmbed, Proto: Gemini},
	ImageGenerations:    {Name: "images.generations", Route: "/v1/images/generations", Path: "/v1/images/generations", Kind: KindImage, Proto: OpenAI},
	ImageEdits:          {Name: "images.edits", Route: "/v1/images/edits", Path: "/v1/images/edits", Kind: KindImage, Proto: OpenAI, Body: BodyMultipart},
	ImageVariations:     {Name: "images.variations", Route: "/v1/images/variations", Path: "/v1/images/variations", Kind: KindImage, Proto: OpenAI, Body: BodyMultipart},
	AudioTranscriptions: {Name: "audio.transcriptions", Route: "/v1/audio/transcriptions", Path: "/v1/audio/transcriptions", Kind: KindAudioIn, Proto: OpenAI, Body: BodyMultipart, Answer: AnswerAny},
	AudioTranslations:   {Name: "audio.translations", Route: "/v1/audio/translations", Path: "/v1/audio/translations", Kind: KindAudioIn, Proto: OpenAI, Body: BodyMultipart, Answer: AnswerAny},
	AudioSpeech:         {Name: "audio.speech", Route: "/v1/audio/speech", Path: "/v1/audio/speech", Kind: KindSpeech, Proto: OpenAI, Answer: AnswerBinary},
	Rerank:              {Name: "rerank", Route: "/v1/rerank", Path: "/v1/rerank", Kind: KindRerank, Proto: OpenAI},
	Moderations:         {Name: "moderations", Route: "/v1/moderations", Path: "/v1/moderations", Kind: KindModerate, Proto: OpenAI},
}

// NumEndpoints is how many endpoints there are: Endpoint values are 0 … NumEndpoints-1.
const NumEndpoints = Endpoint(len(endpoints))

// Info describes an endpoint.
func Info(e Endpoint) EndpointInfo { return endpoints[e] }

// Endpoints lists every endpoint in order.
func Endpoints() []Endpoint {
	out := make([]Endpoint, NumEndpoints)
	for i := range out {
		out[i] = Endpoint(i)
	}
	return out
}

// Media says whether a kind is one of the non-token endpoints (images, audio, rerank, moderations): served
// natively only, never translated to another family.
func (k Kind) Media() bool { return k >= KindImage }

// Package adaptor is the one small interface every upstream protocol family implements; each provider is a
// package of its own (openai, anthropic; gemini, azure, ... later) registered in a Registry.
package adaptor

import (
	"bytes"
	"context"
	"net/http"
	"strings"
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
)

// String names the endpoint as logs show it.
func (e Endpoint) String() string {
	return [...]string{"chat.completions", "completions", "embeddings", "responses", "messages", "messages.count_tokens"}[e]
}

// Protocol is the wire format a client speaks on an endpoint (errors and usage follow it).
type Protocol int

// Protocols.
const (
	OpenAI Protocol = iota
	Anthropic
)

// ProtocolOf returns the protocol of an endpoint.
func ProtocolOf(e Endpoint) Protocol {
	if e == Messages || e == CountTokens {
		return Anthropic
	}
	return OpenAI
}

// Call is what the adaptor needs to build one upstream request.
type Call struct {
	Endpoint      Endpoint
	Stream        bool
	UpstreamModel string
	Body          []byte      // already carries the upstream model and the channel's body overrides
	Header        http.Header // the client's request headers (read-only)
	BaseURL       string
	Key           string
}

// Adaptor builds upstream requests for one protocol family.
type Adaptor interface {
	// Supports reports whether this family serves the endpoint.
	Supports(e Endpoint) bool
	// NewRequest builds the upstream HTTP request.
	NewRequest(ctx context.Context, c *Call) (*http.Request, error)
	// ModelsURL is where the upstream lists its models, with the headers to send.
	ModelsRequest(ctx context.Context, baseURL, key string) (*http.Request, error)
}

// Registry maps channel types to adaptors.
type Registry map[string]Adaptor

// JoinURL appends path to base, not doubling a "/v1" the admin already put on the base URL.
func JoinURL(base, path string) string {
	base = strings.TrimRight(base, "/")
	if strings.HasSuffix(base, "/v1") && strings.HasPrefix(path, "/v1/") {
		path = path[3:]
	}
	return base + path
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

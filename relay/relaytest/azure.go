package relaytest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// CloudRequest is what a cloud front (Azure, Vertex, Bedrock) saw of one request before it handed it to the
// fake upstream behind it.
type CloudRequest struct {
	Method, Path, Query string
	Header              http.Header
	Body                []byte
}

// cloudLog records the requests a cloud front saw.
type cloudLog struct {
	mu   sync.Mutex
	reqs []CloudRequest
}

func (l *cloudLog) add(r *http.Request, body []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reqs = append(l.reqs, CloudRequest{Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
}

// Seen returns a copy of every request the front received, oldest first.
func (l *cloudLog) Seen() []CloudRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]CloudRequest(nil), l.reqs...)
}

// Azure is a fake Azure OpenAI resource in front of an OpenAI fake. It serves
// /openai/deployments/{deployment}/{suffix}?api-version=... and the v1 surface /openai/v1/{suffix} as the
// fake's /v1/{suffix}, like Azure: no api-key header is a 401, a deployments call without api-version a 404.
// The fake behind it sees the api-key as its bearer key.
type Azure struct {
	cloudLog
	*Upstream
	front *httptest.Server
	// URL is the resource endpoint, e.g. http://127.0.0.1:1234 (the channel's base URL).
	URL string
}

// NewAzure starts an Azure front over a new fake upstream configured by opts.
func NewAzure(opts ...Option) *Azure {
	a := &Azure{Upstream: New(opts...)}
	a.front = httptest.NewServer(http.HandlerFunc(a.serve))
	a.URL = a.front.URL
	return a
}

// Close stops the front and the fake behind it.
func (a *Azure) Close() { a.front.Close(); a.Upstream.Close() }

func (a *Azure) serve(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	a.add(r, body)
	key := r.Header.Get("api-key")
	if key == "" {
		writeAzureError(w, http.StatusUnauthorized, "401", "Access denied due to missing subscription key.")
		return
	}
	var suffix string
	switch p := r.URL.Path; {
	case strings.HasPrefix(p, "/openai/deployments/"):
		rest := strings.TrimPrefix(p, "/openai/deployments/")
		i := strings.IndexByte(rest, '/')
		if i <= 0 || r.URL.Query().Get("api-version") == "" {
			writeAzureError(w, http.StatusNotFound, "404", "Resource not found")
			return
		}
		suffix = rest[i+1:]
	case strings.HasPrefix(p, "/openai/v1/"):
		suffix = strings.TrimPrefix(p, "/openai/v1/")
	case p == "/openai/models":
		suffix = "models"
	default:
		writeAzureError(w, http.StatusNotFound, "404", "Resource not found")
		return
	}
	forward(a.Handler, w, r, "/v1/"+suffix, body, func(h http.Header) { h.Del("api-key"); h.Set("Authorization", "Bearer "+key) })
}

func writeAzureError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(`{"error":{"code":"` + code + `","message":"` + msg + `"}}`))
}

// readBody reads a front's request body (bounded like the fake's).
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	b, err := readAllLimit(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		return nil, false
	}
	return b, true
}

// forward hands a request to the fake behind a front at path with body, its headers edited by hdr.
func forward(h http.Handler, w http.ResponseWriter, r *http.Request, path string, body []byte, hdr func(http.Header)) {
	in := r.Clone(r.Context())
	in.URL.Path, in.URL.RawPath, in.RequestURI = path, "", ""
	in.Body = http.NoBody
	if len(body) > 0 {
		in.Body = newBody(body)
	}
	in.ContentLength = int64(len(body))
	if hdr != nil {
		hdr(in.Header)
	}
	h.ServeHTTP(w, in)
}

// Package relaytest provides fake upstream LLM APIs for tests, in the spirit of net/http/httptest.
//
// An Upstream speaks the OpenAI (chat completions, completions, embeddings, responses, models) and Anthropic
// (messages, count_tokens) shapes, streamed and not, echoing the requested model. Its behaviour (usage, token
// counts, chunking and delays, injected faults, per-key and per-model overrides) is set with options at New and
// can be switched at run time with Set and Reset while requests are in flight. It records every request so
// tests can check what a gateway forwarded.
//
//	up := relaytest.New(relaytest.WithChunks(3), relaytest.ForKey("bad-key", relaytest.Fail(relaytest.InvalidKey())))
//	defer up.Close()
//	// point a channel at up.URL ... then:
//	up.Set(relaytest.FailFirst(2, relaytest.RateLimited(time.Second)))
//	last, _ := up.Last()
package relaytest

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"
)

// MaxBodyBytes bounds the request bodies the fake reads.
const MaxBodyBytes = 32 << 20

// Handler is the fake upstream as an http.Handler, for serving on an address of your choice; most tests use
// Upstream instead.
type Handler struct {
	writeMu sync.Mutex // serialises Set/Reset; readers load cfg without locking
	cfg     atomic.Pointer[behavior]
	rec     recorder

	done      chan struct{}
	closeOnce sync.Once
	active    atomic.Int64
	canceled  atomic.Int64

	keyMu     sync.Mutex
	keyActive map[string]int // upstream key → requests in flight now
	keyPeak   map[string]int // upstream key → most in flight at once
}

// PeakByKey returns, per upstream API key, the most requests that were in flight at once.
func (h *Handler) PeakByKey() map[string]int {
	h.keyMu.Lock()
	defer h.keyMu.Unlock()
	out := make(map[string]int, len(h.keyPeak))
	for k, v := range h.keyPeak {
		out[k] = v
	}
	return out
}

// track counts a request on its key while it is served.
func (h *Handler) track(key string) func() {
	h.keyMu.Lock()
	if h.keyActive == nil {
		h.keyActive, h.keyPeak = map[string]int{}, map[string]int{}
	}
	h.keyActive[key]++
	h.keyPeak[key] = max(h.keyPeak[key], h.keyActive[key])
	h.keyMu.Unlock()
	return func() {
		h.keyMu.Lock()
		h.keyActive[key]--
		h.keyMu.Unlock()
	}
}

// NewHandler returns a fake upstream handler configured by opts over the defaults.
func NewHandler(opts ...Option) *Handler {
	h := &Handler{done: make(chan struct{})}
	b := defaultBehavior().apply(opts...)
	h.cfg.Store(&b)
	return h
}

// Set applies opts on top of the current behaviour; requests already running keep what they started with.
func (h *Handler) Set(opts ...Option) {
	h.writeMu.Lock()
	defer h.writeMu.Unlock()
	b := h.cfg.Load().apply(opts...)
	h.cfg.Store(&b)
}

// Reset returns to the defaults, then applies opts. Recorded requests are kept (see ClearRequests).
func (h *Handler) Reset(opts ...Option) {
	h.writeMu.Lock()
	defer h.writeMu.Unlock()
	b := defaultBehavior().apply(opts...)
	h.cfg.Store(&b)
}

// Active is the number of requests being served right now (for example hung ones).
func (h *Handler) Active() int { return int(h.active.Load()) }

// Canceled counts requests whose client went away before the fake finished answering.
func (h *Handler) Canceled() int { return int(h.canceled.Load()) }

// Close releases every hung or sleeping request. The handler answers no further delays after it.
func (h *Handler) Close() { h.closeOnce.Do(func() { close(h.done) }) }

// Upstream is a fake upstream served by an httptest.Server on 127.0.0.1.
type Upstream struct {
	*Handler
	// Server is the underlying test server.
	Server *httptest.Server
	// URL is the base URL without a trailing slash, e.g. http://127.0.0.1:12345 (append /v1/...).
	URL string

	conns atomic.Int64
}

// New starts a fake upstream configured by opts over the defaults. Call Close when done.
func New(opts ...Option) *Upstream {
	h := NewHandler(opts...)
	u := &Upstream{Handler: h}
	s := httptest.NewUnstartedServer(h)
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			u.conns.Add(1)
		}
	}
	s.Start()
	u.Server, u.URL = s, s.URL
	return u
}

// Conns is the number of connections the fake has accepted: a client that reuses its connections opens one
// per request it has in flight at once.
func (u *Upstream) Conns() int { return int(u.conns.Load()) }

// Close releases hung requests and shuts the server down.
func (u *Upstream) Close() {
	u.Handler.Close()
	u.Server.Close()
}

// protocol is the API family a path belongs to; it picks error and stream shapes.
type protocol int

const (
	protoOpenAI protocol = iota
	protoResponses
	protoAnthropic
	protoGemini
)

// call is one request being answered.
type call struct {
	h            *Handler
	w            http.ResponseWriter
	r            *http.Request
	b            behavior
	p            protocol
	body         []byte
	key          string
	form         map[string]string // the small fields of a multipart upload (nil for JSON bodies)
	model        string
	stream       bool
	includeUsage bool
	seq          int
	created      int64
}

// ServeHTTP answers one request as the configured fake upstream.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.active.Add(1)
	defer h.active.Add(-1)
	var body []byte
	var parts []Part
	var form map[string]string
	var err error
	if uploadPaths[r.URL.Path] && r.Method == http.MethodPost {
		// Streamed part by part, never held whole: a test may send far more than MaxBodyBytes.
		if parts, form, err = readUpload(r); err != nil {
			f := &Fault{Kind: FaultStatus, Status: http.StatusBadRequest, Code: CodeInvalidRequest, Message: err.Error()}
			writeStatusFault(w, f, protoOpenAI, "", apiKey(r), "req_relaytest_upload")
			return
		}
	} else if body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes)); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		}
		return
	}
	cfg := h.cfg.Load()
	c := &call{h: h, w: w, r: r, body: body, form: form, key: apiKey(r), created: time.Now().Unix()}
	defer h.track(c.key)()
	if len(body) > 0 {
		c.model = gjson.GetBytes(body, "model").String()
		c.stream = gjson.GetBytes(body, "stream").Bool()
		c.includeUsage = gjson.GetBytes(body, "stream_options.include_usage").Bool()
	}
	if form != nil {
		c.model = form["model"]
	}
	if strings.HasPrefix(r.URL.Path, geminiPrefix) {
		c.p = protoGemini
		c.geminiTarget() // the model and stream-ness are in the path
	}
	var hdr http.Header
	if cfg.record {
		hdr = r.Header.Clone()
	}
	c.seq = h.rec.add(Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: hdr,
		Body: body, Parts: parts, Key: c.key, Model: c.model, Stream: c.stream, Time: time.Now()}, cfg.record)
	c.b = cfg.resolve(c.key, c.model)
	if strings.HasPrefix(r.URL.Path, "/v1/messages") {
		c.p = protoAnthropic
	} else if r.URL.Path == "/v1/responses" {
		c.p = protoResponses
	}
	if c.model == "" {
		c.model = "relaytest-model"
	}
	c.serve()
}

func (c *call) serve() {
	route, ok := c.route()
	if !ok {
		return
	}
	if !c.pause(c.b.headerDelay) {
		return
	}
	if c.b.shouldFail() {
		f := c.b.fault
		switch {
		case f.Kind == FaultStatus, (f.Kind == FaultStreamError || f.Kind == FaultResponseFailed) && !c.stream:
			if f.Kind != FaultStatus {
				f = &Fault{Kind: FaultStatus, Status: http.StatusInternalServerError}
			}
			writeStatusFault(c.w, f, c.p, c.model, c.key, c.requestID())
			return
		case f.Kind == FaultReset && f.AfterChunks == 0:
			resetConn(c.w)
			return
		case f.Kind == FaultHang && f.AfterChunks == 0:
			c.hang()
			return
		}
		c.b.fault = f // strikes mid-answer
	} else {
		c.b.fault = nil
	}
	route()
}

// route picks the endpoint; it answers 404/405/400 itself and reports false then.
func (c *call) route() (func(), bool) {
	path, method := c.r.URL.Path, c.r.Method
	if c.p == protoGemini {
		return c.geminiRoute()
	}
	var fn func()
	switch path {
	case "/v1/models":
		if method == http.MethodGet {
			return c.models, true
		}
	case "/v1/chat/completions":
		fn = c.chat
	case "/v1/completions":
		fn = c.completions
	case "/v1/embeddings":
		fn = c.embeddings
	case "/v1/responses":
		fn = c.responses
	case "/v1/messages":
		fn = c.messages
	case "/v1/messages/count_tokens":
		fn = c.countTokens
	case "/v1/images/generations", "/v1/images/edits", "/v1/images/variations":
		fn = c.images
	case "/v1/audio/transcriptions", "/v1/audio/translations":
		fn = c.transcription
	case "/v1/audio/speech":
		fn = c.speech
	case "/v1/rerank":
		fn = c.rerank
	case "/v1/moderations":
		fn = c.moderations
	default:
		c.plainError(http.StatusNotFound, "Invalid URL ("+method+" "+path+")")
		return nil, false
	}
	if fn == nil || method != http.MethodPost {
		c.plainError(http.StatusMethodNotAllowed, "Method "+method+" not allowed on "+path)
		return nil, false
	}
	if c.form == nil && !gjson.ValidBytes(c.body) {
		c.plainError(http.StatusBadRequest, "We could not parse the JSON body of your request.")
		return nil, false
	}
	return fn, true
}

func (c *call) plainError(status int, msg string) {
	f := &Fault{Kind: FaultStatus, Status: status, Code: CodeInvalidRequest, Message: msg}
	writeStatusFault(c.w, f, c.p, c.model, c.key, c.requestID())
}

func (c *call) requestID() string { return "req_relaytest_" + strconv.Itoa(c.seq) }

// pause sleeps d unless the client goes away or the fake closes; false means stop answering.
func (c *call) pause(d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.r.Context().Done():
		c.h.canceled.Add(1)
	case <-c.h.done:
	}
	return false
}

// hang blocks until the client gives up or the fake closes.
func (c *call) hang() {
	select {
	case <-c.r.Context().Done():
		c.h.canceled.Add(1)
	case <-c.h.done:
	}
}

// answer sends a generated non-stream answer after the time its chunks would have taken to stream.
func (c *call) answer(body []byte) {
	if c.pause(c.b.firstChunkDelay + time.Duration(c.b.chunks)*c.b.chunkDelay) {
		c.writeJSON(body)
	}
}

// writeJSON sends a complete non-stream answer, applying a pending mid-answer fault.
func (c *call) writeJSON(body []byte) {
	h := c.w.Header()
	h.Set("Content-Type", "application/json")
	c.setIDHeaders()
	f := c.b.fault
	if f != nil && f.Kind == FaultInvalidJSON {
		body = body[:len(body)/2]
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	c.w.WriteHeader(http.StatusOK)
	if f != nil && (f.Kind == FaultReset || f.Kind == FaultHang) {
		_, _ = c.w.Write(body[:len(body)/2])
		_ = http.NewResponseController(c.w).Flush()
		if f.Kind == FaultReset {
			resetConn(c.w)
		} else {
			c.hang()
		}
		return
	}
	_, _ = c.w.Write(body)
}

func (c *call) setIDHeaders() {
	h := c.w.Header()
	if c.p == protoAnthropic {
		h.Set("request-id", c.requestID())
	} else {
		h.Set("x-request-id", c.requestID())
		h.Set("openai-processing-ms", "1")
	}
}

// streamPlan is a stream's frames: a preamble, the content deltas (what delays and AfterChunks count), a tail.
type streamPlan struct {
	pre, content, tail [][]byte
}

// writeStream sends a stream, flushing every event the moment it is written.
func (c *call) writeStream(sp streamPlan) {
	h := c.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	c.setIDHeaders()
	c.w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(c.w)
	send := func(frame []byte) bool {
		if _, err := c.w.Write(frame); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !send(nil) || !c.pause(c.b.firstChunkDelay) {
		return
	}
	for _, fr := range sp.pre {
		if !send(fr) {
			return
		}
	}
	f := c.b.fault
	for i, fr := range sp.content {
		if f != nil && i == f.AfterChunks && !c.strike(f, send) {
			return
		}
		if i > 0 && !c.pause(c.b.chunkDelay) {
			return
		}
		if c.b.sendStamps {
			fr = stamp(fr)
		}
		if !send(fr) {
			return
		}
	}
	if f != nil && f.AfterChunks >= len(sp.content) && !c.strike(f, send) {
		return
	}
	for _, fr := range sp.tail {
		if !send(fr) {
			return
		}
	}
	c.pause(c.b.endDelay)
}

// strike applies a mid-stream fault; false means the stream is over.
func (c *call) strike(f *Fault, send func([]byte) bool) bool {
	switch f.Kind {
	case FaultReset:
		resetConn(c.w)
		return false
	case FaultHang:
		c.hang()
		return false
	case FaultStreamError:
		send(streamErrorEvent(c.p, 0, f.Message))
		return false
	case FaultResponseFailed:
		if c.p != protoResponses {
			send(streamErrorEvent(c.p, 0, f.Message))
			return false
		}
		code := f.Code
		if code == "" {
			code = CodeServerError
		}
		resp := c.responseObject("resp_relaytest_"+strconv.Itoa(c.seq), "failed", []any{}, c.responsesUsage())
		resp["error"] = map[string]any{"code": code, "message": "The model failed to generate a response (injected by relaytest)."}
		send([]byte("event: response.failed\ndata: " + string(mustJSON(map[string]any{"type": "response.failed", "sequence_number": 0, "response": resp})) + "\n\n"))
		return false
	case FaultInvalidJSON:
		return send(garbledEvent(c.p))
	}
	return true
}

// pieces splits the answer text into n content deltas (cycling words); their concatenation is the full text.
func (c *call) pieces() []string {
	words := strings.Fields(c.b.text)
	if len(words) == 0 {
		words = []string{"ok"}
	}
	out := make([]string, c.b.chunks)
	for i := range out {
		w := words[i%len(words)]
		if c.b.sendStamps {
			w += " " + stampHole // filled in as the frame is written (writeStream)
		}
		if i > 0 {
			w = " " + w
		}
		out[i] = w
	}
	return out
}

// SendStampPrefix starts a send stamp in a content delta (WithSendStamps).
const SendStampPrefix = "sent@"

// stampHole is a send stamp not yet written: the prefix and 19 zeros, overwritten in place.
const stampHole = SendStampPrefix + "0000000000000000000"

// stamp writes the time now into a frame's stamp hole, if it has one (on a copy: plans are reused).
func stamp(frame []byte) []byte {
	i := bytes.Index(frame, []byte(stampHole))
	if i < 0 {
		return frame
	}
	out := append([]byte(nil), frame...)
	ts := strconv.FormatInt(time.Now().UnixNano(), 10)
	copy(out[i+len(stampHole)-len(ts):], ts)
	return out
}

// ParseSendStamp finds a send stamp in b and returns the time in it.
func ParseSendStamp(b []byte) (time.Time, bool) {
	i := bytes.Index(b, []byte(SendStampPrefix))
	if i < 0 || len(b) < i+len(stampHole) {
		return time.Time{}, false
	}
	n, err := strconv.ParseInt(string(b[i+len(SendStampPrefix):i+len(stampHole)]), 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}, false
	}
	return time.Unix(0, n), true
}

func (c *call) fullText() string { return strings.Join(c.pieces(), "") }

func apiKey(r *http.Request) string {
	if k := r.Header.Get("x-api-key"); k != "" {
		return k
	}
	if k := r.Header.Get("x-goog-api-key"); k != "" {
		return k
	}
	if k := r.URL.Query().Get("key"); k != "" {
		return k
	}
	a := r.Header.Get("Authorization")
	if len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		return strings.TrimSpace(a[7:])
	}
	return ""
}

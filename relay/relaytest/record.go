package relaytest

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/tidwall/gjson"
)

// Request is one request the fake received, as the gateway sent it.
type Request struct {
	// Seq numbers requests from 1 in arrival order.
	Seq    int
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte
	// Parts are a multipart upload's parts (Body is nil then).
	Parts []Part
	// Key is the API key from Authorization: Bearer or x-api-key.
	Key string
	// Model and Stream are read from the JSON body.
	Model  string
	Stream bool
	Time   time.Time
}

// Get reads a field of the JSON body with a gjson path, e.g. "stream_options.include_usage".
func (r Request) Get(path string) gjson.Result { return gjson.GetBytes(r.Body, path) }

// recorder keeps received requests; a changed channel wakes waiters.
type recorder struct {
	mu      sync.Mutex
	count   int
	reqs    []Request
	changed chan struct{}
}

func (rc *recorder) add(r Request, keep bool) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.count++
	r.Seq = rc.count
	if keep {
		rc.reqs = append(rc.reqs, r)
	}
	if rc.changed != nil {
		close(rc.changed)
		rc.changed = nil
	}
	return r.Seq
}

// Requests returns a copy of every recorded request, oldest first.
func (h *Handler) Requests() []Request {
	h.rec.mu.Lock()
	defer h.rec.mu.Unlock()
	return append([]Request(nil), h.rec.reqs...)
}

// RequestsTo returns the recorded requests for one path, e.g. "/v1/chat/completions".
func (h *Handler) RequestsTo(path string) []Request {
	h.rec.mu.Lock()
	defer h.rec.mu.Unlock()
	var out []Request
	for _, r := range h.rec.reqs {
		if r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// Last returns the most recent recorded request.
func (h *Handler) Last() (Request, bool) {
	h.rec.mu.Lock()
	defer h.rec.mu.Unlock()
	if len(h.rec.reqs) == 0 {
		return Request{}, false
	}
	return h.rec.reqs[len(h.rec.reqs)-1], true
}

// Count is how many requests arrived (recorded or not) since the start or the last ClearRequests.
func (h *Handler) Count() int {
	h.rec.mu.Lock()
	defer h.rec.mu.Unlock()
	return h.rec.count
}

// ClearRequests forgets recorded requests and resets Count.
func (h *Handler) ClearRequests() {
	h.rec.mu.Lock()
	defer h.rec.mu.Unlock()
	h.rec.count, h.rec.reqs = 0, nil
}

// WaitForRequests blocks until Count reaches n or ctx ends.
func (h *Handler) WaitForRequests(ctx context.Context, n int) error {
	for {
		h.rec.mu.Lock()
		if h.rec.count >= n {
			h.rec.mu.Unlock()
			return nil
		}
		if h.rec.changed == nil {
			h.rec.changed = make(chan struct{})
		}
		ch := h.rec.changed
		h.rec.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

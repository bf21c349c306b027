package relay

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/tidwall/sjson"

	"tollgate/relay/adaptor"
	"tollgate/service/channel"
)

// Deadline causes, so a failure says which deadline fired.
var (
	errConnectTimeout   = errors.New("upstream connect timeout")
	errFirstByteTimeout = errors.New("upstream first-byte timeout")
	errIdleTimeout      = errors.New("upstream idle timeout")
	errTotalTimeout     = errors.New("upstream total timeout")
	// The request's own budgets across all attempts (attempt.go): they cap each attempt's timeouts, and an
	// attempt they cut is the request's failure, not the channel's.
	errRequestDeadline = errors.New("request deadline reached")
	errFirstByteBudget = errors.New("first-byte budget used up")
)

// exchange is one upstream call in flight with its deadlines.
type exchange struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	// unlink stops the caller's cancellation from reaching ctx (context.AfterFunc's stop): ctx is not derived
	// from the caller's request, so a drain may outlive the handler (drain).
	unlink func() bool
	watch  *watchdog
	start  time.Time
	resp   *http.Response
	eof    bool // a read returned the end of the body
	// complete: the answer ended with its terminal event; what is left of the body is only its end.
	complete bool
}

// Draining a complete answer's body (drain): at most this much, for at most this long.
const (
	drainLimit = 64 << 10
	drainWait  = time.Second
)

var errDrainTimeout = errors.New("upstream kept the body open after its last event")

// close ends the exchange. A complete answer whose body end was not read yet is drained in the background.
func (x *exchange) close() {
	x.watch.stop()
	if x.unlink() && x.resp != nil && x.complete && !x.eof {
		go x.drain()
		return
	}
	if x.resp != nil {
		x.resp.Body.Close()
	}
	x.cancel(context.Canceled)
}

// drain reads the rest of a complete answer's body — normally only the end of its chunked encoding, a few
// bytes behind the last event, often not yet arrived when the stream's last event was passed on — so the
// connection goes back to the pool instead of being closed (closing it means a new TCP and TLS handshake for a
// later call). An upstream that holds the body open past drainWait, or sends more than drainLimit after its
// last event, has its connection closed.
func (x *exchange) drain() {
	t := time.AfterFunc(drainWait, func() { x.cancel(errDrainTimeout) })
	_, _ = io.CopyN(io.Discard, x.resp.Body, drainLimit)
	t.Stop()
	x.resp.Body.Close()
	x.cancel(context.Canceled)
}

// Read implements io.Reader over the response body, pushing the idle deadline forward on every read.
func (x *exchange) Read(p []byte) (int, error) {
	n, err := x.resp.Body.Read(p)
	if n > 0 {
		x.watch.read()
	}
	if err == io.EOF {
		x.eof = true
	}
	return n, err
}

func pickDur(ms int, def time.Duration) time.Duration {
	if ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return def
}

// withOverrides applies the channel's body overrides to what the leg sends. Without overrides the body is
// passed as it is (no JSON round trip).
func withOverrides(body []byte, ch *channel.Channel) ([]byte, error) {
	var err error
	ov := ch.BodyOverride.V
	for path, v := range ov.Set {
		if body, err = sjson.SetBytes(body, path, v); err != nil {
			return nil, err
		}
	}
	for _, path := range ov.Delete {
		if body, err = sjson.DeleteBytes(body, path); err != nil {
			return nil, err
		}
	}
	return body, nil
}

// send makes one upstream call for the client whose context and headers are parent and in (live traffic and
// channel tests share it: same body rewrite, header overrides, mapping and timeouts). Each deadline is the
// channel's own (or the default), capped by what is left of the request's budgets (rq.limits). On a 2xx
// answer it returns the exchange with the first-byte deadline stopped and the idle deadline armed;
// otherwise a classified failure.
func (r *Relay) send(parent context.Context, in http.Header, rq *request, lg *leg, ch *channel.Channel, keyIdx int) (*exchange, *failure) {
	ad, _ := r.adaptorOf(ch, rq.model)
	upstreamModel := ch.UpstreamModel(rq.model)
	body, err := withOverrides(lg.body, ch)
	if err != nil {
		return nil, &failure{class: ClassClient, err: err}
	}
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	x := &exchange{ctx: ctx, cancel: cancel, start: time.Now()}
	x.unlink = context.AfterFunc(parent, func() { cancel(context.Cause(parent)) })
	if parent.Err() != nil {
		// AfterFunc runs its func in a goroutine of its own for a context already done: until then the call
		// would look alive and could still be sent (a retry after the client left). Cancel it here.
		cancel(context.Cause(parent))
	}
	to := ch.Timeouts.V
	totalD, totalCause := rq.limits.capEnd(x.start, pickDur(to.TotalMs, defaultTimeouts.total), errTotalTimeout)
	fbD, fbCause := rq.limits.capFirstByte(x.start, pickDur(to.FirstByteMs, defaultTimeouts.firstByte), errFirstByteTimeout)
	x.watch = newWatchdog(cancel, x.start, totalD, totalCause, pickDur(to.ConnectMs, defaultTimeouts.connect), fbD, fbCause,
		pickDur(to.IdleMs, defaultTimeouts.idle))
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { x.watch.connected() }}
	call := &adaptor.Call{
		Endpoint: lg.ep, Stream: rq.stream, UpstreamModel: upstreamModel, Body: body, Header: in,
		BaseURL: ch.BaseURL, Key: ch.Keys[keyIdx],
	}
	if u := rq.media.upload; u != nil {
		// Each attempt reads the spool from its start, so a retry sends the same bytes. Body overrides are
		// for JSON bodies; an upload passes as it came, with the mapped model.
		call.Upload, call.UploadSize, call.ContentType = u.body(upstreamModel)
	}
	req, err := ad.NewRequest(httptrace.WithClientTrace(ctx, trace), call)
	if err != nil {
		f := &failure{class: ClassServer, err: err}
		var ce *adaptor.CredentialError
		switch {
		case errors.As(err, &ce):
			f.class = ClassAuth // this key is unusable: the next key may be fine
		case context.Cause(ctx) != nil || parent.Err() != nil:
			f = classifyErr(err, context.Cause(ctx), parent.Err() != nil) // building it did I/O (a token exchange)
		}
		x.close()
		return nil, f
	}
	for _, k := range ch.HeaderPassthrough.V {
		if vs := in.Values(k); len(vs) > 0 {
			req.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
		}
	}
	for k, v := range ch.HeaderOverride {
		req.Header.Set(k, v)
	}
	resp, err := r.Client.Do(req)
	if err != nil {
		f := classifyErr(err, context.Cause(ctx), parent.Err() != nil)
		x.close()
		return nil, f
	}
	if u, ok := ad.(adaptor.Unframer); ok && resp.StatusCode < 300 {
		u.Unframe(resp) // a binary-framed stream read as the family's SSE events
	}
	x.resp = resp
	x.watch.headers()
	if resp.StatusCode >= 300 { // a 3xx too: the client does not follow redirects (NewClient); classify says bad_reply

		b, _ := io.ReadAll(io.LimitReader(x, 1<<20))
		b = scrubSecrets(ch, b) // before the body reaches the caller, the logs or the key's health record
		f := classifyStatus(resp.StatusCode, b, resp.Header, r.Settings.Get().ErrorRules)
		f.leg = lg
		x.close()
		return nil, f
	}
	return x, nil
}

// readErr classifies an error met while reading an upstream body.
func (x *exchange) readErr(c *gin.Context, err error) *failure {
	return classifyErr(err, context.Cause(x.ctx), c.Request.Context().Err() != nil)
}

// mappedStatus applies the channel's status-code mapping to what the client sees.
func mappedStatus(ch *channel.Channel, status int) int {
	if ch == nil {
		return status
	}
	if m, ok := ch.StatusCodeMapping.V[strconv.Itoa(status)]; ok {
		return m
	}
	return status
}

// writeJSON writes a complete JSON answer and sends it at once: before the upstream answer is closed and the
// attempt's bookkeeping runs (at concurrency 1, ~0.1 of the plain proxy's added latency on the 2-core box), but
// after the key's concurrency slot is given back, so a caller's next request never finds its own slot taken,
// and after the request's log row is announced, so a caller that flushes the log writer once it has the answer
// finds the row.
func writeJSON(c *gin.Context, rq *request, status int, body []byte) {
	h := c.Writer.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	rq.announce()
	c.Writer.WriteHeader(status)
	_, _ = c.Writer.Write(body)
	rq.freeSlot()
	c.Writer.Flush()
}

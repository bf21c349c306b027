package relay

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/tidwall/gjson"

	"tollgate/middleware"
	"tollgate/relay/adaptor"
	"tollgate/relay/meter"
	"tollgate/service/channel"
)

// exchange sends one attempt and passes its answer to the client. A failure before anything reached the
// client is returned for the attempt loop to retry; after the first byte the answer is the client's.
func (r *Relay) exchange(c *gin.Context, rq *request, lg *leg, ch *channel.Channel, k int) (*outcome, *failure) {
	ad, _ := r.adaptorOf(ch, rq.model)
	out := &outcome{ch: ch, keyIdx: k, meter: ad.NewMeter(lg.ep), leg: lg}
	x, f := r.send(c.Request.Context(), c.Request.Header, rq, lg, ch, k)
	if f != nil {
		return out, f
	}
	if h := c.Writer.Header(); len(lg.dropped) > 0 {
		h.Set(droppedHeader, strings.Join(lg.dropped, ", ")) // this attempt's leg: set again by each attempt
	} else {
		h.Del(droppedHeader)
	}
	defer x.close()
	out.header = x.resp.Header
	out.firstByte = time.Since(rq.start)
	if rq.stream && strings.HasPrefix(x.resp.Header.Get("Content-Type"), "text/event-stream") {
		return r.stream(c, rq, ad, x, out)
	}
	if rq.kind.Media() {
		if o, f := r.mediaAnswer(c, rq, x, out); o != nil {
			return o, f
		}
	}
	body, err := io.ReadAll(io.LimitReader(x, ResponseLimit+1))
	if err != nil {
		return out, x.readErr(c, err)
	}
	if len(body) > ResponseLimit || !gjson.ValidBytes(body) {
		return out, &failure{class: ClassBadReply, status: x.resp.StatusCode, err: errors.New("upstream answered invalid JSON")}
	}
	// The meter reads the upstream's own usage (these bytes, before any translation: the deferred call's argument
	// is taken now) once the answer is sent: the client does not wait for it.
	defer out.meter.Body(body)
	if lg.conv {
		if body, err = translateAnswer(rq, lg, body); err != nil {
			return out, &failure{class: ClassBadReply, status: x.resp.StatusCode, err: err}
		}
	}
	if rerr := rq.awaitReserve(); rerr != nil { // nothing may reach the client before the money is held
		return out, &failure{class: ClassClient, local: rerr}
	}
	out.status, out.ok, out.delivered = mappedStatus(ch, x.resp.StatusCode), true, true
	writeJSON(c, rq, out.status, body)
	return out, nil
}

var (
	doneData    = []byte("[DONE]")
	eventPrefix = []byte("event:")
	dataPrefix  = []byte("data:")
	errorWord   = []byte(`"error"`)
	failedWord  = []byte("response.failed")
)

// parseEvent extracts the event name and the (joined) data of one raw SSE event.
func parseEvent(raw []byte) (string, []byte) {
	var name string
	var data []byte
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		line = bytes.TrimRight(line, "\r")
		switch {
		case bytes.HasPrefix(line, dataPrefix):
			d := bytes.TrimPrefix(line[len(dataPrefix):], []byte(" "))
			if data != nil {
				data = append(append(data[:len(data):len(data)], '\n'), d...) // a copy: raw is passed on as it came
			} else {
				data = d
			}
		case bytes.HasPrefix(line, eventPrefix):
			name = string(bytes.TrimSpace(line[len(eventPrefix):]))
		}
	}
	return name, data
}

// isErrorEvent recognises an upstream error reported inside the stream: an Anthropic or Responses error
// event, an OpenAI chat chunk carrying "error", or a Responses response.failed (which also ends the stream).
func isErrorEvent(name string, data []byte) bool {
	if name == "error" {
		return true
	}
	if !bytes.Contains(data, errorWord) && !bytes.Contains(data, failedWord) {
		return false // every event is checked: skip the parse for the content chunks that say neither
	}
	r := gjson.GetManyBytes(data, "type", "error")
	return r[0].String() == "error" || r[0].String() == "response.failed" || r[1].IsObject()
}

// droppedHeader names the caller's fields a translated answer was produced without (leg.dropped).
const droppedHeader = "X-Tollgate-Dropped"

// badEventError is an upstream event a translated stream could not read (its protocol does not allow it).
type badEventError struct{ err error }

func (e *badEventError) Error() string { return "upstream sent an event it may not: " + e.err.Error() }
func (e *badEventError) Unwrap() error { return e.err }

// stream passes SSE events through one by one, flushing each the moment it is complete. Nothing is sent
// before the first event, so a stream that dies before it can still be retried on another channel.
func (r *Relay) stream(c *gin.Context, rq *request, ad adaptor.Adaptor, x *exchange, out *outcome) (*outcome, *failure) {
	lg := out.leg
	var tr *translation // nil: the upstream's events pass through as they came
	if lg.conv {
		tr = newTranslation(rq, lg)
	}
	sb := r.takeStreamBuf(x)
	br := sb.r
	ev := sb.ev[:0]
	defer func() { r.putStreamBuf(sb, ev) }()
	committed, ended := false, false
	var readErr error
	// The event being sent that the meter has not read yet (see below): read once it is out, or, deferred, on
	// whichever way the stream ends first — before its bytes go back to the pool (an earlier defer).
	var unmetered []byte
	meterUnmetered := func() {
		if unmetered != nil {
			out.meter.Defer(unmetered)
			unmetered = nil
		}
	}
	defer meterUnmetered()
	w := c.Writer
	fl := coalescer{w: w, br: br}
	for !ended {
		line, err := br.ReadSlice('\n')
		ev = append(ev, line...)
		if len(ev) > EventLimit {
			// One event larger than any answer an upstream sends: an upstream that never ends its line must
			// not grow the gateway's memory without bound.
			readErr, ended = &badEventError{errors.New("an SSE event over the size limit")}, false
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			readErr = err
			break
		}
		if len(bytes.TrimRight(line, "\r\n")) > 0 {
			continue // event not complete yet
		}
		name, data := parseEvent(ev)
		if name == "" && data == nil { // comment or keep-alive
			if committed {
				_, _ = w.Write(ev)
				fl.written(false)
			}
			ev = ev[:0]
			continue
		}
		// The meter gets a passed-through event once it is written and flushed (or, in a backlog, left for the
		// flush after the last waiting event), and reads such events in batches (Defer): its parse is off the
		// event's way to the client and runs warm. It reads an event first when its answer decides whether the
		// event is sent (the usage-only chunk of a usage we asked for) or when a translation reuses its bytes.
		drop := false
		if data != nil && !bytes.Equal(data, doneData) {
			if tr != nil || rq.injectUsage && meter.MayCarryUsage(data) {
				drop = out.meter.Event(name, data) && rq.injectUsage && tr == nil
			} else {
				unmetered = data
			}
		}
		ended = ad.Terminal(lg.ep, name, data)
		upstreamErr := isErrorEvent(name, data)
		if upstreamErr {
			// An upstream that echoes request headers in its errors must not hand the channel's credentials to
			// the caller or the logs (the same masking as for error answers, see scrubSecrets).
			ev, data = scrubSecrets(out.ch, ev), scrubSecrets(out.ch, data)
		}
		if !committed {
			if upstreamErr { // nothing sent yet: another channel may still answer
				f := &failure{class: eventClass(data), status: http.StatusBadGateway, body: append([]byte(nil), data...), leg: lg}
				if f.class == ClassClient {
					f.status = http.StatusBadRequest // the event is the protocol's error body: passed through as a 400
				}
				return out, f
			}
			if rerr := rq.awaitReserve(); rerr != nil { // nothing may reach the client before the money is held
				return out, &failure{class: ClassClient, local: rerr}
			}
			h := w.Header()
			h.Set("Content-Type", tr.contentType())
			h.Set("Cache-Control", "no-cache")
			h.Set("X-Accel-Buffering", "no")
			w.WriteHeader(http.StatusOK)
			committed, out.delivered, out.ok, out.status = true, true, true, http.StatusOK
			out.firstByte = time.Since(rq.start)
		}
		if tr != nil {
			var terr error
			if ev, terr = tr.event(ev[:0], name, data); terr != nil {
				// The upstream sent an event its own protocol does not allow: the answer is cut here, even when
				// that event was the terminal one (it did not end the answer well).
				readErr, ended = &badEventError{terr}, false
				break
			}
			drop = len(ev) == 0
		}
		if !drop {
			if _, err := w.Write(ev); err != nil {
				readErr = err
				break
			}
		}
		// A dropped event still flushes what earlier ones left unflushed; the last event goes out at once.
		fl.written(ended || upstreamErr)
		meterUnmetered()
		if upstreamErr {
			// The upstream ended the answer with its own error, and the client has it: pass it on once, stop
			// (no error event of ours after it), log the upstream's class, bill only the usage it reported.
			out.class, out.errMsg = eventClass(data), truncate(string(data), 300)
			out.errCode, out.errShown, out.upstreamErr = "upstream_stream_error", true, true
			return out, nil
		}
		ev = ev[:0]
	}
	var bad *badEventError
	if !committed {
		switch {
		case readErr == nil || errors.Is(readErr, io.EOF):
			return out, &failure{class: ClassBadReply, err: errors.New("upstream stream ended before any event")}
		case errors.As(readErr, &bad):
			return out, &failure{class: ClassBadReply, err: readErr}
		}
		return out, x.readErr(c, readErr)
	}
	if ended {
		x.complete = true
		if tr != nil {
			_, _ = w.Write(tr.finish(nil, true))
			w.Flush()
		}
		return out, nil
	}
	// Committed, but the stream did not end normally: the client left, or the upstream cut or stalled.
	f := x.readErr(c, readErr)
	switch {
	case errors.Is(readErr, io.EOF):
		f = &failure{class: ClassReset, err: errors.New("upstream closed the stream early")}
	case errors.As(readErr, &bad):
		f = &failure{class: ClassBadReply, err: readErr}
	}
	if f.class != ClassCanceled {
		rerr := newErr(http.StatusBadGateway, "upstream_error", string(f.class))
		if tr != nil {
			_, _ = w.Write(tr.cut(nil, rerr, middleware.Lang(c)))
		} else {
			_, _ = w.Write(streamErrorEvent(rq.proto, middleware.Lang(c), rerr))
		}
		w.Flush()
		out.errCode = rerr.code
	}
	out.class, out.errMsg, out.deadlineCut = f.class, f.message(), errors.Is(f.err, errRequestDeadline)
	return out, nil
}

// streamBufSize is a stream's read buffer: most SSE events fit; a longer line is read in pieces (ReadSlice's
// ErrBufferFull) and joined in the event scratch.
const streamBufSize = 4 << 10

// maxPooledEvent is the largest event scratch kept for the next stream; a bigger one (a rare huge event) is left
// to the garbage collector so the pool does not pin it.
const maxPooledEvent = 64 << 10

// streamBuf is one stream's reader and event scratch, reused across streams.
type streamBuf struct {
	r  *bufio.Reader
	ev []byte
}

// takeStreamBuf returns a pooled reader reading src and an empty event scratch.
func (r *Relay) takeStreamBuf(src io.Reader) *streamBuf {
	if sb, ok := r.streamBufs.Get().(*streamBuf); ok {
		sb.r.Reset(src)
		return sb
	}
	return &streamBuf{r: bufio.NewReaderSize(src, streamBufSize)}
}

// putStreamBuf gives a finished stream's buffers back: the reader no longer refers to the exchange, and an
// oversized scratch is dropped.
func (r *Relay) putStreamBuf(sb *streamBuf, ev []byte) {
	sb.r.Reset(nil)
	sb.ev = ev[:0]
	if cap(ev) > maxPooledEvent {
		sb.ev = nil
	}
	r.streamBufs.Put(sb)
}

// coalescer decides when the events a stream wrote are flushed to the client. An event the client was
// waiting for (it was not yet complete in the read buffer when the one before it was done) goes out at once,
// even when others arrived with it: it never waits while the ones behind it are processed (an upstream sends
// its first content right behind the role chunk, and its finish, usage and [DONE] right behind the last
// content). Events that were already waiting in the buffer (a backlog: the relay is behind the upstream) are
// written together and flushed when no complete one is left: one write syscall for the lot, as a plain proxy
// does. A partial event, or nothing, buffered means the next event's end is not here yet: flush now, so no
// event is ever held back waiting for more.
type coalescer struct {
	w  http.Flusher
	br *bufio.Reader
	// behind: the next event was already complete in the buffer when the last one was written.
	behind bool
}

// written is called after each event is written (or dropped); now flushes whatever the buffers hold.
func (c *coalescer) written(now bool) {
	awaited := !c.behind
	c.behind = completeEventBuffered(c.br)
	if now || awaited || !c.behind {
		c.w.Flush()
	}
}

// completeEventBuffered says whether br holds, without reading, the end of an SSE event (a blank line).
func completeEventBuffered(br *bufio.Reader) bool {
	n := br.Buffered()
	if n == 0 {
		return false
	}
	b, _ := br.Peek(n)
	return bytes.Contains(b, lfLF) || bytes.Contains(b, lfCRLF)
}

var (
	lfLF   = []byte("\n\n")
	lfCRLF = []byte("\n\r\n")
)

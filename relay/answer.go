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
func (r *Relay) exchange(c *gin.Context, rq *request, ch *channel.Channel, k int) (*outcome, *failure) {
	out := &outcome{ch: ch, keyIdx: k, meter: meter.New(rq.ep)}
	x, f := r.send(c.Request.Context(), c.Request.Header, rq, ch, k)
	if f != nil {
		return out, f
	}
	defer x.close()
	out.header = x.resp.Header
	out.firstByte = time.Since(rq.start)
	if rq.stream && strings.HasPrefix(x.resp.Header.Get("Content-Type"), "text/event-stream") {
		return r.stream(c, rq, x, out)
	}
	body, err := io.ReadAll(io.LimitReader(x, ResponseLimit+1))
	if err != nil {
		return out, x.readErr(c, err)
	}
	if len(body) > ResponseLimit || !gjson.ValidBytes(body) {
		return out, &failure{class: ClassBadReply, status: x.resp.StatusCode, err: errors.New("upstream answered invalid JSON")}
	}
	if rerr := rq.awaitReserve(); rerr != nil { // nothing may reach the client before the money is held
		return out, &failure{class: ClassClient, local: rerr}
	}
	out.meter.Body(body)
	out.status, out.ok, out.delivered = mappedStatus(ch, x.resp.StatusCode), true, true
	writeJSON(c, out.status, body)
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

// terminal says whether an event ends the stream normally in its protocol.
func terminal(ep adaptor.Endpoint, name string, data []byte) bool {
	switch ep {
	case adaptor.Messages:
		return name == "message_stop" || gjson.GetBytes(data, "type").String() == "message_stop"
	case adaptor.Responses:
		t := gjson.GetBytes(data, "type").String()
		return t == "response.completed" || t == "response.incomplete" || t == "response.failed" || bytes.Equal(data, doneData)
	}
	return bytes.Equal(data, doneData)
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

// stream passes SSE events through one by one, flushing each the moment it is complete. Nothing is sent
// before the first event, so a stream that dies before it can still be retried on another channel.
func (r *Relay) stream(c *gin.Context, rq *request, x *exchange, out *outcome) (*outcome, *failure) {
	br := bufio.NewReaderSize(x, 32<<10)
	var ev []byte
	committed, ended := false, false
	var readErr error
	w := c.Writer
	for !ended {
		line, err := br.ReadSlice('\n')
		ev = append(ev, line...)
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
				w.Flush()
			}
			ev = ev[:0]
			continue
		}
		drop := false
		if data != nil && !bytes.Equal(data, doneData) {
			drop = out.meter.Event(name, data) && rq.injectUsage
		}
		ended = terminal(rq.ep, name, data)
		upstreamErr := isErrorEvent(name, data)
		if upstreamErr {
			// An upstream that echoes request headers in its errors must not hand the channel's credentials to
			// the caller or the logs (the same masking as for error answers, see scrubSecrets).
			ev, data = scrubSecrets(out.ch, ev), scrubSecrets(out.ch, data)
		}
		if !committed {
			if upstreamErr { // nothing sent yet: another channel may still answer
				f := &failure{class: eventClass(data), status: http.StatusBadGateway, body: append([]byte(nil), data...)}
				if f.class == ClassClient {
					f.status = http.StatusBadRequest // the event is the protocol's error body: passed through as a 400
				}
				return out, f
			}
			if rerr := rq.awaitReserve(); rerr != nil { // nothing may reach the client before the money is held
				return out, &failure{class: ClassClient, local: rerr}
			}
			h := w.Header()
			h.Set("Content-Type", "text/event-stream")
			h.Set("Cache-Control", "no-cache")
			h.Set("X-Accel-Buffering", "no")
			w.WriteHeader(http.StatusOK)
			committed, out.delivered, out.ok, out.status = true, true, true, http.StatusOK
			out.firstByte = time.Since(rq.start)
		}
		if !drop {
			if _, err := w.Write(ev); err != nil {
				readErr = err
				break
			}
			w.Flush()
		}
		if upstreamErr {
			// The upstream ended the answer with its own error, and the client has it: pass it on once, stop
			// (no error event of ours after it), log the upstream's class, bill only the usage it reported.
			out.class, out.errMsg = eventClass(data), truncate(string(data), 300)
			out.errCode, out.errShown, out.upstreamErr = "upstream_stream_error", true, true
			return out, nil
		}
		ev = ev[:0]
	}
	if !committed {
		if readErr == nil || errors.Is(readErr, io.EOF) {
			return out, &failure{class: ClassBadReply, err: errors.New("upstream stream ended before any event")}
		}
		return out, x.readErr(c, readErr)
	}
	if ended {
		return out, nil
	}
	// Committed, but the stream did not end normally: the client left, or the upstream cut or stalled.
	f := x.readErr(c, readErr)
	if errors.Is(readErr, io.EOF) {
		f = &failure{class: ClassReset, err: errors.New("upstream closed the stream early")}
	}
	if f.class != ClassCanceled {
		rerr := newErr(http.StatusBadGateway, "upstream_error", string(f.class))
		_, _ = w.Write(streamErrorEvent(rq.proto, middleware.Lang(c), rerr))
		w.Flush()
		out.errCode = rerr.code
	}
	out.class, out.errMsg, out.deadlineCut = f.class, f.message(), errors.Is(f.err, errRequestDeadline)
	return out, nil
}

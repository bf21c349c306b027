package bedrock

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"strconv"

	"github.com/tidwall/gjson"

	"tollgate/relay/eventstream"
)

// contentType is the AWS event-stream media type.
const contentType = "application/vnd.amazon.eventstream"

// exceptionTypes are Anthropic's error types for Bedrock's stream exceptions, so the relay classifies them
// like Anthropic's own error events (rate limit, overload, the caller's request, a server fault).
var exceptionTypes = map[string]string{
	"throttlingException":         "rate_limit_error",
	"serviceUnavailableException": "overloaded_error",
	"validationException":         "invalid_request_error",
	"modelTimeoutException":       "timeout_error",
	"internalServerException":     "api_error",
	"modelStreamErrorException":   "api_error",
	"accessDeniedException":       "permission_error",
}

// sseReader turns Bedrock's event stream into the Anthropic SSE text it carries: each chunk's
// {"bytes": base64(event JSON)} becomes "event: <type>\ndata: <json>\n\n"; an exception becomes an Anthropic
// error event and ends the stream; a malformed frame is a read error (the relay cuts the answer there).
type sseReader struct {
	body    io.ReadCloser
	dec     *eventstream.Decoder
	pending []byte
	err     error
}

func newSSEReader(body io.ReadCloser) *sseReader {
	return &sseReader{body: body, dec: eventstream.NewDecoder(body)}
}

// Close implements io.Closer.
func (s *sseReader) Close() error { return s.body.Close() }

// Read implements io.Reader.
func (s *sseReader) Read(p []byte) (int, error) {
	for len(s.pending) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		s.next()
	}
	n := copy(p, s.pending)
	s.pending = s.pending[n:]
	return n, nil
}

// next decodes one message into pending (or sets err).
func (s *sseReader) next() {
	m, err := s.dec.Decode()
	if err != nil {
		s.err = err
		return
	}
	switch m.Headers[":message-type"] {
	case "event":
		if m.Headers[":event-type"] != "chunk" {
			return // other event types carry nothing for the caller
		}
		raw := gjson.GetBytes(m.Payload, "bytes")
		data, err := base64.StdEncoding.DecodeString(raw.String())
		if !raw.Exists() || err != nil || !gjson.ValidBytes(data) {
			s.err = errors.New("bedrock: a chunk without a base64 JSON event")
			return
		}
		if bytes.ContainsAny(data, "\r\n") { // one SSE data line: whitespace between tokens goes
			var c bytes.Buffer
			_ = json.Compact(&c, data)
			data = c.Bytes()
		}
		s.pending = appendEvent(s.pending[:0], gjson.GetBytes(data, "type").String(), data)
	case "exception", "error":
		name := m.Headers[":exception-type"]
		if name == "" {
			name = m.Headers[":error-code"]
		}
		typ, ok := exceptionTypes[name]
		if !ok {
			typ = "api_error"
		}
		msg := gjson.GetBytes(m.Payload, "message").String()
		if msg == "" {
			msg = m.Headers[":error-message"]
		}
		data := []byte(`{"type":"error","error":{"type":` + strconv.Quote(typ) + `,"message":` + strconv.Quote(name+": "+msg) + `}}`)
		s.pending, s.err = appendEvent(s.pending[:0], "error", data), io.EOF
	}
}

func appendEvent(b []byte, name string, data []byte) []byte {
	if name != "" {
		b = append(append(append(b, "event: "...), name...), '\n')
	}
	b = append(append(append(b, "data: "...), data...), "\n\n"...)
	return b
}

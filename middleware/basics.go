package middleware

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"tollgate/i18n"
	"tollgate/service/apperr"
)

const (
	keyRequestID       = "tg.request_id"
	keyClientRequestID = "tg.client_request_id"
	keyLang            = "tg.lang"
)

// NewRequestID returns a gateway-owned id: a 48-bit Unix-millisecond timestamp then 80 random bits, as 32
// lowercase hex digits, so ids are unique without coordination between nodes and sort as text in time order.
// The caller never chooses it: it keys the ledger hold and the usage log row.
func NewRequestID() string {
	var b [16]byte
	ms := uint64(time.Now().UnixMilli())
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	_, _ = rand.Read(b[6:])
	return hex.EncodeToString(b[:])
}

// RequestIDHeader is returned on every response.
const RequestIDHeader = "X-Tollgate-Request-Id"

// ClientRequestIDHeader is the caller's own request id: kept (sanitised) for its logs and echoed back.
const ClientRequestIDHeader = "X-Request-Id"

// maxClientRequestID bounds the caller's id as stored in usage_logs.client_request_id.
const maxClientRequestID = 64

// RequestIDs gives every request a gateway-owned id (X-Tollgate-Request-Id). The caller's X-Request-Id is
// only a label: sanitised, kept for the usage log and echoed back, never used as the id, because a reused
// one would collide in the ledger and the logs.
func RequestIDs() gin.HandlerFunc {
	return func(c *gin.Context) {
		id := NewRequestID()
		c.Set(keyRequestID, id)
		c.Header(RequestIDHeader, id)
		if cid := sanitizeClientRequestID(c.GetHeader(ClientRequestIDHeader)); cid != "" {
			c.Set(keyClientRequestID, cid)
			c.Header(ClientRequestIDHeader, cid)
		}
		c.Next()
	}
}

// sanitizeClientRequestID keeps the printable ASCII of a caller's request id (no spaces or quotes, which
// would break log lines and headers), at most 64 bytes.
func sanitizeClientRequestID(v string) string {
	keep := func(ch byte) bool { return ch > ' ' && ch < 0x7f && ch != '"' && ch != '\\' }
	clean := len(v) <= maxClientRequestID
	for i := 0; i < len(v) && clean; i++ {
		clean = keep(v[i])
	}
	if clean {
		return v // the usual case: no copy
	}
	var b strings.Builder
	for i := 0; i < len(v) && b.Len() < maxClientRequestID; i++ {
		if keep(v[i]) {
			b.WriteByte(v[i])
		}
	}
	return b.String()
}

// ClientRequestID returns the caller's sanitised X-Request-Id, or "".
func ClientRequestID(c *gin.Context) string { return c.GetString(keyClientRequestID) }

// RequestID returns the request's id.
func RequestID(c *gin.Context) string { return c.GetString(keyRequestID) }

// Lang returns the request's language, read from Accept-Language on first use.
func Lang(c *gin.Context) i18n.Lang {
	if l, ok := c.Get(keyLang); ok {
		return l.(i18n.Lang)
	}
	l := i18n.Negotiate(c.GetHeader("Accept-Language"))
	c.Set(keyLang, l)
	return l
}

// AccessLog logs one line per request at debug level (warn for 5xx answers) with the request id.
func AccessLog() gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		st := c.Writer.Status()
		lvl := slog.LevelDebug
		if st >= 500 {
			lvl = slog.LevelWarn
		}
		if !slog.Default().Enabled(c.Request.Context(), lvl) {
			return // skip building the record (ClientIP parses headers) on the hot path
		}
		slog.Log(c.Request.Context(), lvl, "http", "request_id", RequestID(c), "method", c.Request.Method,
			"path", c.Request.URL.Path, "status", st, "ms", time.Since(start).Milliseconds(), "ip", c.ClientIP())
	}
}

// Recovery turns a panic into a 500 console error with the request id; the stack goes to the log only.
func Recovery() gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				slog.Error("panic", "request_id", RequestID(c), "panic", r, "stack", string(debug.Stack()))
				if !c.Writer.Written() {
					Fail(c, apperr.New(http.StatusInternalServerError, "internal_error", RequestID(c)))
				}
				c.Abort()
			}
		}()
		c.Next()
	}
}

// LimitBody caps the request body at n bytes; reading past it fails with 413.
func LimitBody(n int64) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.ContentLength > n {
			Fail(c, &http.MaxBytesError{Limit: n})
			return
		}
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, n)
		c.Next()
	}
}

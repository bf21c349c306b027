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
	keyRequestID = "tg.request_id"
	keyLang      = "tg.lang"
)

// NewRequestID returns a random 16-byte hex id.
func NewRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// RequestIDHeader is returned on every response.
const RequestIDHeader = "X-Tollgate-Request-Id"

// RequestIDs gives every request an id (kept from X-Request-Id when it looks sane) and returns it.
func RequestIDs() gin.HandlerFunc {
	return func(c *gin.Context) {
		id := c.GetHeader("X-Request-Id")
		if len(id) < 8 || len(id) > 64 || strings.ContainsAny(id, " \t\r\n\"") {
			id = NewRequestID()
		}
		c.Set(keyRequestID, id)
		c.Header(RequestIDHeader, id)
		c.Next()
	}
}

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

// AccessLog logs one line per request at debug level (info for errors) with the request id.
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

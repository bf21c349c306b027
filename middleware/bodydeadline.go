package middleware

import (
	"io"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// Body-read limits. The server has no ReadTimeout (it would also cut long streamed answers: net/http cancels a
// request whose connection read fails), so without these a client that sends its body one byte a second
// holds a connection and a goroutine for as long as it likes, on any route, signed in or not.
const (
	BodyIdleTimeout  = 30 * time.Second // longest pause between two reads of the body
	BodyTotalTimeout = 5 * time.Minute  // longest time to read a whole body (32 MiB at ~1 Mbit/s)
)

// BodyDeadline bounds reading each request body: a read that waits longer than idle since the previous one,
// or ends later than total after the request began, fails, and the handler answers as for a broken body.
// Once the body is read to its end the connection's read deadline is cleared again, so a streamed answer is
// not cut.
func BodyDeadline(idle, total time.Duration) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.Body == nil || c.Request.Body == http.NoBody || c.Request.ContentLength == 0 {
			c.Next()
			return
		}
		rc := http.NewResponseController(c.Writer)
		b := &deadlineBody{ReadCloser: c.Request.Body, rc: rc, idle: idle, end: time.Now().Add(total)}
		c.Request.Body = b
		c.Next()
		// A body not read to its end keeps its deadline: the server discards the rest before reusing the
		// connection, and that must not wait forever either. (The next request on the connection starts
		// with the server's own deadlines.)
	}
}

type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	idle time.Duration
	end  time.Time
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	if !b.done {
		d := time.Now().Add(b.idle)
		if d.After(b.end) {
			d = b.end
		}
		_ = b.rc.SetReadDeadline(d) // not supported (e.g. a test recorder): no limit, as before
	}
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.clear()
	}
	return n, err
}

// clear lifts the deadline once the body is read to its end, so an answer streamed afterwards is not cut.
func (b *deadlineBody) clear() {
	if !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
}

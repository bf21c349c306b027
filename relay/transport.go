package relay

import (
	"net"
	"net/http"
	"time"
)

// NewTransport is the one shared upstream transport, sized for load: Go's default of 2 idle connections per
// host forces a new TCP (and TLS) handshake for most requests under concurrency.
func NewTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          4096,
		MaxIdleConnsPerHost:   1024,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		// Streams must not be gzip-decoded in one piece, and we pass bodies through as they come.
		DisableCompression: true,
		// Each upstream connection keeps its two buffers for life, busy or idle: 4 KB each (Go's default) rather
		// than 32 KB saves 56 KB per concurrent stream and per idle connection. Nothing is slowed by it: a read
		// of at least the buffer's size (the stream reader's, io.ReadAll's) bypasses the buffer, and a request
		// body larger than the buffer is copied to the connection directly.
		WriteBufferSize: 4 << 10,
		ReadBufferSize:  4 << 10,
	}
}

// NewClient is the upstream HTTP client: the shared transport, and redirects are never followed. A 3xx
// from an upstream API is not an answer: following it would re-send the caller's body (and the channel's
// key and override headers, for a same-host redirect) wherever the upstream points. classifyStatus makes it
// a bad reply instead.
func NewClient() *http.Client {
	return &http.Client{Transport: NewTransport(), CheckRedirect: refuseRedirect}
}

// refuseRedirect hands the 3xx answer itself back to the caller (http.ErrUseLastResponse).
func refuseRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

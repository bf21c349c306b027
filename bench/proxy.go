package main

import (
	"bytes"
	"context"
	"errors"
	"io"

	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// newPlainProxy is the yardstick: net/http/httputil.ReverseProxy with a tuned transport, reading the request
// body into memory first (as any gateway must, to learn the model).
//
// Buffering is also what keeps the plain proxy correct: streaming the inbound body straight into the outbound
// request lets a fast upstream answer before the transport's final body read, the server then closes the
// inbound body, that read fails and the transport tears down the upstream connection mid-stream (golang/go
// #40747); the client sees "unexpected EOF" on a few percent of streams.
func newPlainProxy(upstream string) (http.Handler, error) {
	u, err := url.Parse(upstream)
	if err != nil {
		return nil, err
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			r.Out.Host = u.Host
		},
		Transport: tunedTransport(),
		ErrorLog:  log.New(os.Stderr, "bench proxy: ", 0),
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 32<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		rp.ServeHTTP(w, r)
	}), nil
}

// serveProxy runs the plain proxy on addr until SIGTERM/SIGINT; the benchmark starts it as a separate process
// (re-executing itself) so that it, like Tollgate, does not share a Go runtime with the load generator.
func serveProxy(addr, upstream string) error {
	h, err := newPlainProxy(upstream)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

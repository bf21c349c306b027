package modeltest

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
)

// Proxy is a TCP proxy in front of a database server that a test can cut (Down: the listener and every open
// connection close, new connections are refused) and restore (Up: the same address listens again), to
// simulate a database outage without stopping the shared server.
type Proxy struct {
	Addr   string
	target string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

// NewProxy listens on a free local port and forwards to target (host:port); it is closed when the test ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	p := &Proxy{target: target, conns: map[net.Conn]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	p.Addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(func() { p.Down(); p.wg.Wait() })
	return p
}

// DSN rewrites a DSN like user:pass@tcp(host:port)/db to go through the proxy.
func (p *Proxy) DSN(dsn string) string {
	open, end := strings.Index(dsn, "tcp("), strings.Index(dsn, ")")
	if open < 0 || end < open {
		return dsn
	}
	return dsn[:open+4] + p.Addr + dsn[end:]
}

// TargetOf returns the host:port of a DSN like user:pass@tcp(host:port)/db.
func TargetOf(dsn string) string {
	open, end := strings.Index(dsn, "tcp("), strings.Index(dsn, ")")
	if open < 0 || end < open {
		return "127.0.0.1:3306"
	}
	return dsn[open+4 : end]
}

func (p *Proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			if p.ln != ln { // cut meanwhile
				p.mu.Unlock()
				c.Close()
				up.Close()
				continue
			}
			p.conns[c], p.conns[up] = true, true
			p.mu.Unlock()
			pipe := func(dst, src net.Conn) {
				_, _ = io.Copy(dst, src)
				dst.Close()
				src.Close()
			}
			go pipe(up, c)
			go pipe(c, up)
		}
	}()
}

// Down refuses new connections and breaks the open ones.
func (p *Proxy) Down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	p.conns = map[net.Conn]bool{}
}

// Up listens on the same address again.
func (p *Proxy) Up(t testing.TB) {
	t.Helper()
	ln, err := net.Listen("tcp", p.Addr)
	if err != nil {
		t.Fatalf("proxy relisten: %v", err)
	}
	p.serve(ln)
}

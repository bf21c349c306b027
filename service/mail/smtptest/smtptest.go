// Package smtptest is a local SMTP sink for tests: a TCP listener that speaks enough SMTP (EHLO/HELO, MAIL,
// RCPT, DATA, RSET, NOOP, QUIT) to accept mail from net/smtp and keeps every message it was given.
package smtptest

import (
	"bufio"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/textproto"
	"strings"
	"sync"
	"time"
)

// Message is one accepted mail.
type Message struct {
	From    string
	To      []string
	Raw     []byte
	Subject string // decoded
	Text    string // the text/plain part, decoded
	HTML    string // the text/html part, decoded
}

// Sink is a running SMTP sink.
type Sink struct {
	ln   net.Listener
	mu   sync.Mutex
	msgs []Message
	wg   sync.WaitGroup
	got  chan struct{}
}

// New listens on 127.0.0.1 on a free port.
func New() (*Sink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Sink{ln: ln, got: make(chan struct{}, 1024)}
	s.wg.Add(1)
	go s.serve()
	return s, nil
}

// Host and Port are where the sink listens.
func (s *Sink) Host() string { return "127.0.0.1" }

// Port is the sink's TCP port.
func (s *Sink) Port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// Close stops the sink.
func (s *Sink) Close() {
	_ = s.ln.Close()
	s.wg.Wait()
}

// Messages returns the messages accepted so far.
func (s *Sink) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// Wait waits until at least n messages arrived or d passed, and returns what arrived.
func (s *Sink) Wait(n int, d time.Duration) []Message {
	deadline := time.After(d)
	for {
		if m := s.Messages(); len(m) >= n {
			return m
		}
		select {
		case <-s.got:
		case <-deadline:
			return s.Messages()
		}
	}
}

func (s *Sink) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.session(c)
		}()
	}
}

func (s *Sink) session(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	tp := textproto.NewConn(c)
	reply := func(line string) bool { return tp.PrintfLine("%s", line) == nil }
	if !reply("220 smtptest ESMTP") {
		return
	}
	var from string
	var to []string
	for {
		line, err := tp.ReadLine()
		if err != nil {
			return
		}
		verb, arg, _ := strings.Cut(line, " ")
		switch strings.ToUpper(verb) {
		case "EHLO":
			_ = reply("250-smtptest")
			_ = reply("250 8BITMIME")
		case "HELO":
			_ = reply("250 smtptest")
		case "MAIL":
			from, to = addrOf(arg), nil
			_ = reply("250 OK")
		case "RCPT":
			if from == "" {
				_ = reply("503 MAIL first")
				continue
			}
			to = append(to, addrOf(arg))
			_ = reply("250 OK")
		case "DATA":
			if len(to) == 0 {
				_ = reply("503 RCPT first")
				continue
			}
			_ = reply("354 end with <CRLF>.<CRLF>")
			raw, err := io.ReadAll(tp.DotReader())
			if err != nil {
				return
			}
			s.keep(from, to, raw)
			from, to = "", nil
			_ = reply("250 OK queued")
		case "RSET":
			from, to = "", nil
			_ = reply("250 OK")
		case "NOOP":
			_ = reply("250 OK")
		case "QUIT":
			_ = reply("221 bye")
			return
		default:
			_ = reply("502 not implemented")
		}
	}
}

func addrOf(arg string) string {
	if i := strings.IndexByte(arg, '<'); i >= 0 {
		if j := strings.IndexByte(arg[i:], '>'); j > 0 {
			return arg[i+1 : i+j]
		}
	}
	return arg
}

func (s *Sink) keep(from string, to []string, raw []byte) {
	m := Message{From: from, To: to, Raw: raw}
	if msg, err := mail.ReadMessage(strings.NewReader(string(raw))); err == nil {
		m.Subject, _ = new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
		if _, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type")); err == nil && params["boundary"] != "" {
			mr := multipart.NewReader(msg.Body, params["boundary"])
			for {
				p, err := mr.NextPart()
				if err != nil {
					break
				}
				var r io.Reader = p
				if strings.EqualFold(p.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
					r = quotedprintable.NewReader(p)
				}
				b, _ := io.ReadAll(bufio.NewReader(r))
				switch ct := p.Header.Get("Content-Type"); {
				case strings.HasPrefix(ct, "text/plain"):
					m.Text = string(b)
				case strings.HasPrefix(ct, "text/html"):
					m.HTML = string(b)
				}
			}
		}
	}
	s.mu.Lock()
	s.msgs = append(s.msgs, m)
	s.mu.Unlock()
	select {
	case s.got <- struct{}{}:
	default:
	}
}

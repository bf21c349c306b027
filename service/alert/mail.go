package alert

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"strconv"
	"strings"
	"time"

	"tollgate/service/setting"
)

// sendMail writes the event in the recipient's language and sends it through the configured server.
func (s *Service) sendMail(ctx context.Context, cfg setting.SMTP, to, lang string, ev Event) result {
	subject, text, html := render(ev, lang)
	res := result{attempts: 1, subject: subject}
	msg, err := buildMessage(cfg.From, to, subject, text, html, s.d.Now())
	if err == nil {
		err = s.deliver(ctx, cfg, to, msg)
	}
	res.err = err
	return res
}

// buildMessage is a multipart/alternative message: plain text and HTML, UTF-8, quoted-printable.
func buildMessage(from, to, subject, text, html string, now time.Time) ([]byte, error) {
	if strings.ContainsAny(to+from+subject, "\r\n") {
		return nil, errors.New("header value with a line break")
	}
	if _, err := mail.ParseAddress(to); err != nil {
		return nil, fmt.Errorf("recipient %q: %w", to, err)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, part := range []struct{ ctype, content string }{{"text/plain", text}, {"text/html", html}} {
		w, err := mw.CreatePart(textproto.MIMEHeader{"Content-Type": {part.ctype + "; charset=UTF-8"},
			"Content-Transfer-Encoding": {"quoted-printable"}})
		if err != nil {
			return nil, err
		}
		qp := quotedprintable.NewWriter(w)
		if _, err := qp.Write([]byte(part.content)); err != nil {
			return nil, err
		}
		if err := qp.Close(); err != nil {
			return nil, err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, err
	}
	var m bytes.Buffer
	fmt.Fprintf(&m, "From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\nMessage-ID: <%s@tollgate>\r\nMIME-Version: 1.0\r\n",
		from, to, mime.BEncoding.Encode("UTF-8", subject), now.UTC().Format(time.RFC1123Z), newID())
	fmt.Fprintf(&m, "Content-Type: multipart/alternative; boundary=%q\r\n\r\n", mw.Boundary())
	m.Write(body.Bytes())
	return m.Bytes(), nil
}

// deliver speaks SMTP: implicit TLS, STARTTLS (required when chosen) or plain; AUTH PLAIN when a user is set
// (net/smtp refuses to send a password over an unencrypted connection except to localhost).
func (s *Service) deliver(ctx context.Context, cfg setting.SMTP, to string, msg []byte) error {
	ctx, cancel := context.WithTimeout(ctx, s.opt.MailTimeout)
	defer cancel()
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	d := &net.Dialer{Timeout: 10 * time.Second}
	var conn net.Conn
	var err error
	if cfg.TLS == setting.SMTPTLSImplicit {
		conn, err = (&tls.Dialer{NetDialer: d, Config: &tls.Config{ServerName: cfg.Host, MinVersion: tls.VersionTLS12}}).DialContext(ctx, "tcp", addr)
	} else {
		conn, err = d.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return fmt.Errorf("smtp dial %s: %w", addr, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	c, err := smtp.NewClient(conn, cfg.Host)
	if err != nil {
		_ = conn.Close()
		return fmt.Errorf("smtp greeting: %w", err)
	}
	defer c.Close()
	if cfg.TLS == setting.SMTPTLSStartTLS {
		if ok, _ := c.Extension("STARTTLS"); !ok {
			return errors.New("smtp: the server does not offer STARTTLS")
		}
		if err := c.StartTLS(&tls.Config{ServerName: cfg.Host, MinVersion: tls.VersionTLS12}); err != nil {
			return fmt.Errorf("smtp starttls: %w", err)
		}
	}
	if cfg.User != "" {
		if err := c.Auth(smtp.PlainAuth("", cfg.User, cfg.Password, cfg.Host)); err != nil {
			return fmt.Errorf("smtp auth: %w", err)
		}
	}
	from, err := mail.ParseAddress(cfg.From)
	if err != nil {
		return fmt.Errorf("smtp from: %w", err)
	}
	if err := c.Mail(from.Address); err != nil {
		return fmt.Errorf("smtp MAIL: %w", err)
	}
	if err := c.Rcpt(to); err != nil {
		return fmt.Errorf("smtp RCPT: %w", err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("smtp DATA: %w", err)
	}
	if _, err := w.Write(msg); err != nil {
		return fmt.Errorf("smtp DATA: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("smtp DATA: %w", err)
	}
	return c.Quit()
}

// Package mail is Tollgate's one SMTP sender: alerts (service/alert) and sign-in e-mails (verification codes,
// password reset links, e-mail changes, the admin's test mail) all go out through Send with the single SMTP
// configuration kept in the settings (alerts.smtp). Every message is multipart/alternative: plain text and HTML.
package mail

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
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

// DefaultTimeout bounds one SMTP conversation when the caller's context has no earlier deadline.
const DefaultTimeout = 30 * time.Second

// Message is one e-mail to one recipient.
type Message struct {
	To      string
	Subject string
	Text    string // the text/plain part
	HTML    string // the text/html part (already escaped by whoever wrote it)
}

// Build is the message as it goes over the wire: headers, then a multipart/alternative body of plain text and
// HTML, UTF-8, quoted-printable. A header value with a line break or a recipient that is not an address is
// refused (no header injection).
func Build(from string, m Message, now time.Time) ([]byte, error) {
	if strings.ContainsAny(m.To+from+m.Subject, "\r\n") {
		return nil, errors.New("header value with a line break")
	}
	if _, err := mail.ParseAddress(m.To); err != nil {
		return nil, fmt.Errorf("recipient %q: %w", m.To, err)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, part := range []struct{ ctype, content string }{{"text/plain", m.Text}, {"text/html", m.HTML}} {
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
	var out bytes.Buffer
	fmt.Fprintf(&out, "From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\nMessage-ID: <%s@tollgate>\r\nMIME-Version: 1.0\r\n",
		from, m.To, mime.BEncoding.Encode("UTF-8", m.Subject), now.UTC().Format(time.RFC1123Z), newID())
	fmt.Fprintf(&out, "Content-Type: multipart/alternative; boundary=%q\r\n\r\n", mw.Boundary())
	out.Write(body.Bytes())
	return out.Bytes(), nil
}

// Send builds m and delivers it through cfg. The conversation ends at ctx's deadline or after DefaultTimeout.
func Send(ctx context.Context, cfg setting.SMTP, m Message, now time.Time) error {
	if !cfg.Enabled() {
		return ErrNotConfigured
	}
	raw, err := Build(cfg.From, m, now)
	if err != nil {
		return err
	}
	return deliver(ctx, cfg, m.To, raw)
}

// ErrNotConfigured is returned by Send when no SMTP server is set.
var ErrNotConfigured = errors.New("smtp is not configured")

// deliver speaks SMTP: implicit TLS, STARTTLS (required when chosen) or plain; AUTH PLAIN when a user is set
// (net/smtp refuses to send a password over an unencrypted connection except to localhost).
func deliver(ctx context.Context, cfg setting.SMTP, to string, msg []byte) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
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

func newID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

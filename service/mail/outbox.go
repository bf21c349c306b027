package mail

import (
	"context"
	"log/slog"
	"net/http"
	"net/mail"
	"sync"
	"time"

	"tollgate/service/apperr"
	"tollgate/service/setting"
)

// Outbox sends sign-in e-mails through the SMTP server in the settings (alerts.smtp), now or in the
// background; Close waits for the background ones.
type Outbox struct {
	settings *setting.Service
	now      func() time.Time
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// NewOutbox builds an outbox; now nil: time.Now.
func NewOutbox(settings *setting.Service, now func() time.Time) *Outbox {
	if now == nil {
		now = time.Now
	}
	o := &Outbox{settings: settings, now: now}
	o.ctx, o.cancel = context.WithCancel(context.Background())
	return o
}

// Ready reports whether an SMTP server is configured.
func (o *Outbox) Ready() bool { c := o.settings.Get().Alerts.SMTP; return c.Enabled() }

// Send delivers m now.
func (o *Outbox) Send(ctx context.Context, m Message) error {
	return Send(ctx, o.settings.Get().Alerts.SMTP, m, o.now())
}

// SendLater delivers m in the background; a failure is logged (without the message, which may hold a token).
func (o *Outbox) SendLater(m Message) {
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		if err := o.Send(o.ctx, m); err != nil {
			slog.Warn("e-mail not sent", "subject_len", len(m.Subject), "err", err)
		}
	}()
}

// Test sends the SMTP test e-mail to to in lang: 400 when no server is set, 502 smtp_failed with the server's
// answer when the conversation fails (an admin needs to see why).
func (o *Outbox) Test(ctx context.Context, to, lang string) error {
	if !o.Ready() {
		return apperr.New(http.StatusBadRequest, "email_unavailable")
	}
	if a, err := mail.ParseAddress(to); err != nil || a.Name != "" {
		return apperr.Field("to", "an e-mail address")
	}
	ctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	if err := o.Send(ctx, Render(KindTest, lang, to, Content{Site: o.settings.Get().SiteName})); err != nil {
		return apperr.New(http.StatusBadGateway, "smtp_failed", err.Error())
	}
	return nil
}

// Close stops taking background mail and waits for what is in flight (or ctx).
func (o *Outbox) Close(ctx context.Context) error {
	done := make(chan struct{})
	go func() { o.wg.Wait(); close(done) }()
	select {
	case <-done:
		o.cancel()
		return nil
	case <-ctx.Done():
		o.cancel()
		return ctx.Err()
	}
}

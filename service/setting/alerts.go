package setting

import (
	"fmt"
	"net/mail"
	"net/url"
	"strings"

	"tollgate/service/apperr"
	"tollgate/service/secret"
)

// Alert event names: what a webhook subscribes to in Webhook.Events (empty = every event).
const (
	EventChannelOpened       = "channel.opened"
	EventChannelAutoDisabled = "channel.auto_disabled"
	EventChannelRecovered    = "channel.recovered"
	EventKeyDisabled         = "key.disabled"
	EventModelErrorRate      = "model.error_rate"
	EventBalanceLow          = "balance.low"
	EventDailySummary        = "daily_summary"
	EventTest                = "test"
)

// AlertEvents are the event names a webhook may subscribe to.
var AlertEvents = map[string]bool{EventChannelOpened: true, EventChannelAutoDisabled: true, EventChannelRecovered: true,
	EventKeyDisabled: true, EventModelErrorRate: true, EventBalanceLow: true, EventDailySummary: true}

// SMTP TLS modes.
const (
	SMTPTLSNone     = "none"
	SMTPTLSStartTLS = "starttls"
	SMTPTLSImplicit = "tls"
)

// Alerts configures who is told when something breaks (service/alert). Webhook secrets and the SMTP password
// are stored sealed and shown masked, like payment secrets.
type Alerts struct {
	Webhooks  []Webhook      `json:"webhooks"`
	SMTP      SMTP           `json:"smtp"`
	CooldownS int            `json:"cooldown_s"` // one alert per event key per this many seconds (default 600)
	ErrorRate ErrorRateAlert `json:"error_rate"`
	// DailySummaryHourUTC is the hour (0-23) the daily summary goes out; -1 switches it off.
	DailySummaryHourUTC int `json:"daily_summary_hour_utc"`
}

// Webhook is one endpoint: POSTed JSON, signed with Secret (HMAC-SHA256), for Events (empty = all).
type Webhook struct {
	URL    string   `json:"url"`
	Secret string   `json:"secret"`
	Events []string `json:"events"`
}

// SMTP is the mail server alerts go out through; AdminTo receives the operator events and the daily summary
// (a user's low-balance e-mail goes to the user's own address).
type SMTP struct {
	Host     string   `json:"host"`
	Port     int      `json:"port"`
	TLS      string   `json:"tls"` // none, starttls or tls
	User     string   `json:"user"`
	Password string   `json:"password"`
	From     string   `json:"from"`
	AdminTo  []string `json:"admin_to"`
}

// Enabled reports whether mail can be sent.
func (s *SMTP) Enabled() bool { return s.Host != "" && s.From != "" }

// ErrorRateAlert fires when a model's share of failed requests over WindowS seconds is above Threshold (a
// fraction, 0 = off) with at least MinRequests requests in the window.
type ErrorRateAlert struct {
	Threshold   float64 `json:"threshold"`
	WindowS     int     `json:"window_s"`
	MinRequests int     `json:"min_requests"`
}

func defaultAlerts() Alerts {
	return Alerts{CooldownS: 600, DailySummaryHourUTC: -1, SMTP: SMTP{Port: 587, TLS: SMTPTLSStartTLS},
		ErrorRate: ErrorRateAlert{WindowS: 300, MinRequests: 20}}
}

// detachAlerts gives a its own slices (never nil, so the API shows [] rather than null).
func detachAlerts(a *Alerts) {
	hooks := make([]Webhook, len(a.Webhooks))
	for i, w := range a.Webhooks {
		w.Events = append([]string{}, w.Events...)
		hooks[i] = w
	}
	a.Webhooks = hooks
	a.SMTP.AdminTo = append([]string{}, a.SMTP.AdminTo...)
}

func validateAlerts(a *Alerts) error {
	if len(a.Webhooks) > 20 {
		return apperr.Field("alerts.webhooks", "at most 20 webhooks")
	}
	for _, w := range a.Webhooks {
		if u, err := url.Parse(w.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(w.URL) > 512 || u.User != nil {
			return apperr.Field("alerts.webhooks.url", "an http(s) URL of at most 512 characters, without user info")
		}
		if len(w.Secret) < 16 || len(w.Secret) > 256 {
			return apperr.Field("alerts.webhooks.secret", "between 16 and 256 characters")
		}
		if len(w.Events) > len(AlertEvents) {
			return apperr.Field("alerts.webhooks.events", "too many events")
		}
		for _, e := range w.Events {
			if !AlertEvents[e] {
				return apperr.Field("alerts.webhooks.events", fmt.Sprintf("unknown event %q", e))
			}
		}
	}
	s := &a.SMTP
	switch {
	case len(s.Host) > 253 || strings.ContainsAny(s.Host, " /:@\r\n"):
		return apperr.Field("alerts.smtp.host", "a host name or address without port")
	case s.Port < 1 || s.Port > 65535:
		return apperr.Field("alerts.smtp.port", "a port between 1 and 65535")
	case s.TLS != SMTPTLSNone && s.TLS != SMTPTLSStartTLS && s.TLS != SMTPTLSImplicit:
		return apperr.Field("alerts.smtp.tls", `one of "none", "starttls", "tls"`)
	case len(s.User) > 256 || strings.ContainsAny(s.User, "\r\n"):
		return apperr.Field("alerts.smtp.user", "at most 256 characters on one line")
	case len(s.Password) > 256 || strings.ContainsAny(s.Password, "\r\n"):
		return apperr.Field("alerts.smtp.password", "at most 256 characters on one line")
	case s.Host != "" && s.From == "":
		return apperr.Field("alerts.smtp.from", "required when a host is set")
	case len(s.AdminTo) > 20:
		return apperr.Field("alerts.smtp.admin_to", "at most 20 addresses")
	}
	if s.From != "" {
		if _, err := mail.ParseAddress(s.From); err != nil || len(s.From) > 254 || strings.ContainsAny(s.From, "\r\n") {
			return apperr.Field("alerts.smtp.from", "an e-mail address")
		}
	}
	for _, to := range s.AdminTo {
		if ad, err := mail.ParseAddress(to); err != nil || ad.Name != "" || len(to) > 254 {
			return apperr.Field("alerts.smtp.admin_to", "plain e-mail addresses")
		}
	}
	switch e := a.ErrorRate; {
	case a.CooldownS < 10 || a.CooldownS > 7*86400:
		return apperr.Field("alerts.cooldown_s", "seconds between 10 and 604800")
	case e.Threshold < 0 || e.Threshold > 1 || e.Threshold != e.Threshold:
		return apperr.Field("alerts.error_rate.threshold", "a fraction between 0 (off) and 1")
	case e.WindowS < 60 || e.WindowS > 86400:
		return apperr.Field("alerts.error_rate.window_s", "seconds between 60 and 86400")
	case e.MinRequests < 1 || e.MinRequests > 1_000_000:
		return apperr.Field("alerts.error_rate.min_requests", "between 1 and 1000000")
	case a.DailySummaryHourUTC < -1 || a.DailySummaryHourUTC > 23:
		return apperr.Field("alerts.daily_summary_hour_utc", "an hour 0-23, or -1 for off")
	}
	return nil
}

// alertSecrets lists the alert secrets and where each lives.
func alertSecrets(a *Alerts) []*string {
	out := []*string{&a.SMTP.Password}
	for i := range a.Webhooks {
		out = append(out, &a.Webhooks[i].Secret)
	}
	return out
}

// maskAlerts masks the alert secrets of a copy (the copy must own its slices).
func maskAlerts(a *Alerts) {
	detachAlerts(a)
	for _, p := range alertSecrets(a) {
		if *p != "" {
			*p = secret.Mask(*p)
		}
	}
}

// keepMaskedAlerts puts back each secret sent as the mask of the stored one: the SMTP password, and a
// webhook's secret when the webhook with the same URL had that secret. A mask that matches nothing is refused.
func keepMaskedAlerts(prev, next *Alerts) error {
	if p := prev.SMTP.Password; p != "" && next.SMTP.Password == secret.Mask(p) {
		next.SMTP.Password = p
	} else if strings.Contains(next.SMTP.Password, "****") {
		return apperr.Field("alerts.smtp.password", "a masked value that does not match the stored one")
	}
	stored := map[string]string{}
	for _, w := range prev.Webhooks {
		stored[w.URL] = w.Secret
	}
	for i := range next.Webhooks {
		w := &next.Webhooks[i]
		if s, ok := stored[w.URL]; ok && s != "" && w.Secret == secret.Mask(s) {
			w.Secret = s
		} else if strings.Contains(w.Secret, "****") {
			return apperr.Field("alerts.webhooks.secret", "a masked value that does not match the stored one")
		}
	}
	return nil
}

// sealAlerts returns a copy of a with its secrets encrypted for storage.
func (s *Service) sealAlerts(a Alerts) (Alerts, error) {
	detachAlerts(&a)
	for _, p := range alertSecrets(&a) {
		if *p == "" {
			continue
		}
		sealed, err := s.keys.Encrypt(*p)
		if err != nil {
			return a, fmt.Errorf("seal alert secret: %w", err)
		}
		*p = sealedPrefix + sealed
	}
	return a, nil
}

// openAlerts decrypts sealed alert secrets after a load; one that does not open is dropped (and logged).
func (s *Service) openAlerts(a *Alerts) {
	for _, p := range alertSecrets(a) {
		if !strings.HasPrefix(*p, sealedPrefix) {
			continue
		}
		if s.keys == nil {
			*p = ""
			continue
		}
		plain, err := s.keys.Decrypt(strings.TrimPrefix(*p, sealedPrefix))
		if err != nil {
			plain = ""
		}
		*p = plain
	}
}

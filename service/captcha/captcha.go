// Package captcha checks human-verification tokens on the server: Cloudflare Turnstile and hCaptcha, both
// behind Verifier (a form POST of secret, response and remoteip to the provider's siteverify URL, answered
// with JSON {"success": bool}). Service picks the verifier the settings name, so a changed setting applies at
// once on every node; tests point verify_url at a local fake.
package captcha

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"tollgate/service/apperr"
	"tollgate/service/setting"
)

// The providers' own verify endpoints.
const (
	TurnstileURL = "https://challenges.cloudflare.com/turnstile/v0/siteverify"
	HCaptchaURL  = "https://api.hcaptcha.com/siteverify"
)

// CodeFailed is the error code of a missing or refused captcha token (400).
const CodeFailed = "captcha_failed"

// Verifier checks one token with its provider.
type Verifier interface {
	// Verify reports whether the provider accepts token for remoteIP; an error means it could not be asked.
	Verify(ctx context.Context, token, remoteIP string) (bool, error)
}

// Turnstile is Cloudflare Turnstile.
type Turnstile struct {
	Secret, URL string // URL empty: TurnstileURL
	Client      *http.Client
}

// Verify implements Verifier.
func (t Turnstile) Verify(ctx context.Context, token, remoteIP string) (bool, error) {
	return siteverify(ctx, t.Client, or(t.URL, TurnstileURL), t.Secret, token, remoteIP)
}

// HCaptcha is hCaptcha.
type HCaptcha struct {
	Secret, URL string // URL empty: HCaptchaURL
	Client      *http.Client
}

// Verify implements Verifier.
func (h HCaptcha) Verify(ctx context.Context, token, remoteIP string) (bool, error) {
	return siteverify(ctx, h.Client, or(h.URL, HCaptchaURL), h.Secret, token, remoteIP)
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// siteverify is the protocol both providers share.
func siteverify(ctx context.Context, client *http.Client, verifyURL, secret, token, remoteIP string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	form := url.Values{"secret": {secret}, "response": {token}}
	if remoteIP != "" {
		form.Set("remoteip", remoteIP)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, verifyURL, strings.NewReader(form.Encode()))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := client.Do(req)
	if err != nil {
		return false, fmt.Errorf("captcha verify: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return false, fmt.Errorf("captcha verify: status %d", res.StatusCode)
	}
	var out struct {
		Success    bool     `json:"success"`
		ErrorCodes []string `json:"error-codes"`
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&out); err != nil {
		return false, fmt.Errorf("captcha verify: %w", err)
	}
	return out.Success, nil
}

// Service checks tokens against the provider the settings name.
type Service struct {
	settings *setting.Service
	client   *http.Client
}

// New builds the service; client nil: one with a 10 s timeout that follows no redirects.
func New(settings *setting.Service, client *http.Client) *Service {
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	return &Service{settings: settings, client: client}
}

// Enabled reports whether a provider is configured.
func (s *Service) Enabled() bool { c := s.settings.Get().Captcha; return c.Enabled() }

// LoginAfterFailures is how many recent failures of a username make its sign-in ask for the captcha.
func (s *Service) LoginAfterFailures() int { return s.settings.Get().Captcha.LoginAfterFailures }

// verifier is the configured provider's Verifier (nil when off).
func (s *Service) verifier() Verifier {
	c := s.settings.Get().Captcha
	switch c.Provider {
	case setting.CaptchaTurnstile:
		return Turnstile{Secret: c.Secret, URL: c.VerifyURL, Client: s.client}
	case setting.CaptchaHCaptcha:
		return HCaptcha{Secret: c.Secret, URL: c.VerifyURL, Client: s.client}
	}
	return nil
}

// Check passes when no captcha is configured or the provider accepts token; a missing or refused token is
// 400 captcha_failed, a provider that cannot be asked 503 captcha_unavailable (closed, not open: a captcha
// that any outage switches off protects nothing).
func (s *Service) Check(ctx context.Context, token, remoteIP string) error {
	v := s.verifier()
	if v == nil {
		return nil
	}
	if token == "" || len(token) > 4096 {
		return apperr.New(http.StatusBadRequest, CodeFailed)
	}
	ok, err := v.Verify(ctx, token, remoteIP)
	if err != nil {
		slog.Warn("captcha provider unreachable", "err", err)
		return apperr.New(http.StatusServiceUnavailable, "captcha_unavailable")
	}
	if !ok {
		return apperr.New(http.StatusBadRequest, CodeFailed)
	}
	return nil
}

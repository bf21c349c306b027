package setting

import (
	"fmt"
	"net/url"
	"strings"

	"tollgate/service/apperr"
	"tollgate/service/secret"
)

// Captcha providers.
const (
	CaptchaTurnstile = "turnstile"
	CaptchaHCaptcha  = "hcaptcha"
)

// Captcha configures the human check on sign-up, on sign-in after failures and on password-reset requests
// (service/captcha). Secret is stored sealed and shown masked.
type Captcha struct {
	Provider  string `json:"provider"` // "" (off), "turnstile" or "hcaptcha"
	SiteKey   string `json:"site_key"`
	Secret    string `json:"secret"`
	VerifyURL string `json:"verify_url"` // empty: the provider's own siteverify URL
	// LoginAfterFailures: a sign-in for a username needs the captcha once it has this many recent failures
	// (0: every sign-in).
	LoginAfterFailures int `json:"login_after_failures"`
}

// Enabled reports whether a captcha is required anywhere.
func (c *Captcha) Enabled() bool { return c.Provider != "" }

func defaultCaptcha() Captcha { return Captcha{LoginAfterFailures: 3} }

func validateSignin(s *Settings) error {
	c := &s.Captcha
	switch {
	case c.Provider != "" && c.Provider != CaptchaTurnstile && c.Provider != CaptchaHCaptcha:
		return apperr.Field("captcha.provider", `"", "turnstile" or "hcaptcha"`)
	case len(c.SiteKey) > 256 || strings.ContainsAny(c.SiteKey, "\r\n\"'<> "):
		return apperr.Field("captcha.site_key", "at most 256 characters without spaces or quotes")
	case len(c.Secret) > 256 || strings.ContainsAny(c.Secret, "\r\n"):
		return apperr.Field("captcha.secret", "at most 256 characters on one line")
	case c.Provider != "" && (c.SiteKey == "" || c.Secret == ""):
		return apperr.Field("captcha.secret", "a site key and a secret are required when a provider is chosen")
	case c.LoginAfterFailures < 0 || c.LoginAfterFailures > 100:
		return apperr.Field("captcha.login_after_failures", "between 0 (every sign-in) and 100")
	}
	if c.VerifyURL != "" {
		if u, err := url.Parse(c.VerifyURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(c.VerifyURL) > 512 || u.User != nil {
			return apperr.Field("captcha.verify_url", "an http(s) URL of at most 512 characters, without user info")
		}
	}
	if (s.EmailVerification || s.PasswordReset) && !s.Alerts.SMTP.Enabled() {
		field := "email_verification"
		if !s.EmailVerification {
			field = "password_reset"
		}
		return apperr.Field(field, "needs an SMTP server (alerts.smtp host and from)")
	}
	return nil
}

// keepMaskedCaptcha puts back the captcha secret when it is sent as the mask of the stored one.
func keepMaskedCaptcha(prev, next *Captcha) error {
	if p := prev.Secret; p != "" && next.Secret == secret.Mask(p) {
		next.Secret = p
	} else if strings.Contains(next.Secret, "****") {
		return apperr.Field("captcha.secret", "a masked value that does not match the stored one")
	}
	return nil
}

// sealCaptcha returns c with its secret encrypted for storage.
func (s *Service) sealCaptcha(c Captcha) (Captcha, error) {
	if c.Secret == "" || s.keys == nil {
		return c, nil
	}
	sealed, err := s.keys.Encrypt(c.Secret)
	if err != nil {
		return c, fmt.Errorf("seal captcha secret: %w", err)
	}
	c.Secret = sealedPrefix + sealed
	return c, nil
}

// openCaptcha decrypts the sealed captcha secret after a load; one that does not open is dropped.
func (s *Service) openCaptcha(c *Captcha) {
	if !strings.HasPrefix(c.Secret, sealedPrefix) {
		return
	}
	if s.keys == nil {
		c.Secret = ""
		return
	}
	plain, err := s.keys.Decrypt(strings.TrimPrefix(c.Secret, sealedPrefix))
	if err != nil {
		plain = ""
	}
	c.Secret = plain
}

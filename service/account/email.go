package account

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/audit"
	"tollgate/service/mail"
	"tollgate/service/netkey"
)

// E-mail flows: sign-up verification (a 6-digit code, 15 minutes), password reset (a link with a long random
// token, 30 minutes) and e-mail change (a code sent to the new address). Only hashes are stored
// (model.EmailToken); every token works once. Sending is limited per address and per IP, and wrong codes per
// address, in the cache (shared by every node on Redis). Asking for a reset or a verification code answers the
// same whether or not the address belongs to anyone.
const (
	codeTTL        = 15 * time.Minute
	resetTTL       = 30 * time.Minute
	mailPerAddress = 5  // e-mails to one address per hour
	mailPerIP      = 30 // e-mails asked for by one IP per hour
	codeTries      = 5  // wrong codes for one address (or user) per codeTTL
)

// Mailer sends sign-in e-mails through the one SMTP configuration (implemented by mail.Outbox).
type Mailer interface {
	// Send delivers m now and returns the SMTP error.
	Send(ctx context.Context, m mail.Message) error
	// SendLater delivers m in the background (errors are logged): an answer must not take longer when an
	// address exists than when it does not.
	SendLater(m mail.Message)
	// Ready reports whether an SMTP server is configured.
	Ready() bool
}

// Captcha checks human-verification tokens (implemented by service/captcha).
type Captcha interface {
	Enabled() bool
	LoginAfterFailures() int
	Check(ctx context.Context, token, remoteIP string) error
}

// SetMailer plugs the mail sender in; nil: no e-mail flows (they answer 503 email_unavailable).
func (s *Service) SetMailer(m Mailer) { s.mailer = m }

// SetCaptcha plugs the captcha checker in; nil: no captcha anywhere.
func (s *Service) SetCaptcha(c Captcha) { s.captcha = c }

// checkCaptcha passes when no captcha is configured.
func (s *Service) checkCaptcha(ctx context.Context, token, ip string) error {
	if s.captcha == nil || !s.captcha.Enabled() {
		return nil
	}
	return s.captcha.Check(ctx, token, ip)
}

// LoginCaptcha asks for the captcha on a sign-in once the username has LoginAfterFailures recent failures (the
// login throttle's count); before that, and with no captcha configured, it passes.
func (s *Service) LoginCaptcha(ctx context.Context, username, token, ip string) error {
	if s.captcha == nil || !s.captcha.Enabled() {
		return nil
	}
	if n := s.captcha.LoginAfterFailures(); n > 0 {
		failures, err := s.cache.Incr(ctx, keysFor(username, ip).user, 0, loginUserWindow)
		if err != nil {
			return fmt.Errorf("login failures: %w", err)
		}
		if failures < int64(n) {
			return nil
		}
	}
	return s.captcha.Check(ctx, token, ip)
}

// EmailSendInput is POST /api/auth/email/send.
type EmailSendInput struct {
	Email   string `json:"email"`
	Purpose string `json:"purpose"` // "verify" or "reset"
	Captcha string `json:"captcha"` // the captcha token (reset requests, when a captcha is configured)
}

func normEmail(e string) string { return strings.ToLower(strings.TrimSpace(e)) }

// SendEmail sends a sign-up verification code again (purpose verify) or a password reset link (purpose
// reset, built on origin). It answers nil whether or not the address belongs to an account that needs one.
func (s *Service) SendEmail(ctx context.Context, in EmailSendInput, ip, lang, origin string) error {
	st := s.settings.Get()
	email := normEmail(in.Email)
	switch {
	case in.Purpose != model.EmailVerify && in.Purpose != model.EmailReset:
		return apperr.Field("purpose", `"verify" or "reset"`)
	case !emailRE.MatchString(email):
		return apperr.Field("email", "an e-mail address")
	case in.Purpose == model.EmailReset && !st.PasswordReset:
		return apperr.New(http.StatusForbidden, "password_reset_disabled")
	case s.mailer == nil || !s.mailer.Ready():
		return apperr.New(http.StatusServiceUnavailable, "email_unavailable")
	}
	if in.Purpose == model.EmailReset {
		if err := s.checkCaptcha(ctx, in.Captcha, ip); err != nil {
			return err
		}
	}
	if err := s.mailSlot(ctx, email, ip); err != nil {
		return err
	}
	users, err := s.store.UsersByEmail(ctx, email, 5)
	if err != nil {
		return fmt.Errorf("users by email: %w", err)
	}
	for i := range users {
		u := &users[i]
		switch {
		case in.Purpose == model.EmailVerify && u.Status == model.StatusUnverified:
			if err := s.sendCode(ctx, u, model.EmailVerify, email, userLang(u, lang), true); err != nil {
				return err
			}
		case in.Purpose == model.EmailReset && u.Status != model.StatusUnverified:
			if err := s.sendReset(ctx, u, email, userLang(u, lang), origin); err != nil {
				return err
			}
		}
	}
	return nil
}

func userLang(u *model.User, lang string) string {
	if u.Language != "" {
		return u.Language
	}
	return lang
}

// mailSlot takes one e-mail of the address's and the IP's hourly allowance (429 too_many_emails past it).
func (s *Service) mailSlot(ctx context.Context, email, ip string) error {
	now := s.opt.Now()
	hour := now.Truncate(time.Hour)
	suffix := ":" + strconv.FormatInt(hour.Unix(), 10)
	for _, l := range []struct {
		key   string
		limit int64
	}{{"mail:addr:" + sha(email)[:32] + suffix, mailPerAddress}, {"mail:ip:" + netkey.Of(ip) + suffix, mailPerIP}} {
		n, err := s.cache.Incr(ctx, l.key, 1, time.Hour+time.Minute)
		if err != nil {
			return fmt.Errorf("e-mail limit: %w", err)
		}
		if n > l.limit {
			e := apperr.New(http.StatusTooManyRequests, "too_many_emails")
			e.RetryAfter = int(hour.Add(time.Hour).Sub(now).Seconds()) + 1
			return e
		}
	}
	return nil
}

// codeHash binds a code to its purpose and address: a 6-digit code alone would collide across users.
func codeHash(purpose, email, code string) string {
	return sha(purpose + "\x00" + email + "\x00" + code)
}

// sendCode replaces the user's live codes of purpose with a new one and mails it to email. sync false sends
// in the background.
func (s *Service) sendCode(ctx context.Context, u *model.User, purpose, email, lang string, sync bool) error {
	if err := s.store.RetireEmailTokens(ctx, u.ID, purpose); err != nil {
		return fmt.Errorf("retire codes: %w", err)
	}
	var code string
	for attempt := 0; ; attempt++ {
		n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
		if err != nil {
			return err
		}
		code = fmt.Sprintf("%06d", n.Int64())
		err = s.store.CreateEmailToken(ctx, &model.EmailToken{Hash: codeHash(purpose, email, code), Purpose: purpose,
			UserID: u.ID, Email: email, ExpiresAt: s.opt.Now().Add(codeTTL)})
		if err == nil {
			break
		}
		if !errors.Is(err, model.ErrDuplicate) || attempt == 5 {
			return fmt.Errorf("store code: %w", err)
		}
	}
	kind := mail.KindVerify
	if purpose == model.EmailChange {
		kind = mail.KindChange
	}
	m := mail.Render(kind, lang, email, mail.Content{Site: s.settings.Get().SiteName, Username: u.Username, Code: code,
		Minutes: int(codeTTL.Minutes())})
	if !sync {
		s.mailer.SendLater(m)
		return nil
	}
	if err := s.mailer.Send(ctx, m); err != nil {
		slog.Warn("sign-in e-mail not sent", "user", u.ID, "purpose", purpose, "err", err)
		return apperr.New(http.StatusBadGateway, "email_send_failed")
	}
	return nil
}

// sendReset mails a reset link to one account's address, in the background (see Mailer.SendLater).
func (s *Service) sendReset(ctx context.Context, u *model.User, email, lang, origin string) error {
	if err := s.store.RetireEmailTokens(ctx, u.ID, model.EmailReset); err != nil {
		return fmt.Errorf("retire reset tokens: %w", err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return err
	}
	token := base64.RawURLEncoding.EncodeToString(raw)
	if err := s.store.CreateEmailToken(ctx, &model.EmailToken{Hash: sha(token), Purpose: model.EmailReset, UserID: u.ID,
		Email: email, ExpiresAt: s.opt.Now().Add(resetTTL)}); err != nil {
		return fmt.Errorf("store reset token: %w", err)
	}
	link := strings.TrimRight(origin, "/") + "/reset-password?token=" + token
	s.mailer.SendLater(mail.Render(mail.KindReset, lang, email, mail.Content{Site: s.settings.Get().SiteName,
		Username: u.Username, Link: link, Minutes: int(resetTTL.Minutes())}))
	return nil
}

// codeGate refuses a code check once key has codeTries wrong codes (429 too_many_attempts), and returns
// the function that counts one more wrong code.
func (s *Service) codeGate(ctx context.Context, key string) (func(), error) {
	n, err := s.cache.Incr(ctx, key, 0, codeTTL)
	if err != nil {
		return nil, fmt.Errorf("code attempts: %w", err)
	}
	if n >= codeTries {
		e := apperr.New(http.StatusTooManyRequests, "too_many_attempts", int(codeTTL.Seconds()))
		e.RetryAfter = int(codeTTL.Seconds())
		return nil, e
	}
	return func() { _, _ = s.cache.Incr(ctx, key, 1, codeTTL) }, nil
}

// useCode finds the live code of purpose for email, checks its owner (0: any) and marks it used.
func (s *Service) useCode(ctx context.Context, purpose, email, code string, owner int64, gateKey string) (*model.EmailToken, error) {
	wrong, err := s.codeGate(ctx, gateKey)
	if err != nil {
		return nil, err
	}
	invalid := apperr.New(http.StatusBadRequest, "invalid_code")
	if len(code) != 6 {
		wrong()
		return nil, invalid
	}
	now := s.opt.Now()
	t, err := s.store.LiveEmailToken(ctx, codeHash(purpose, email, code), purpose, now)
	if errors.Is(err, model.ErrNotFound) || (err == nil && owner != 0 && t.UserID != owner) {
		wrong()
		return nil, invalid
	} else if err != nil {
		return nil, err
	}
	if err := s.store.UseEmailToken(ctx, t.ID, now); errors.Is(err, model.ErrNotFound) {
		return nil, invalid // used a moment ago by a concurrent request
	} else if err != nil {
		return nil, err
	}
	_ = s.cache.Del(ctx, gateKey)
	return t, nil
}

// VerifyEmail checks a sign-up code: the account becomes enabled and, the first time only, gets the new-user
// gift and its invite reward.
func (s *Service) VerifyEmail(ctx context.Context, email, code, ip string) (*model.User, error) {
	email = normEmail(email)
	if !emailRE.MatchString(email) {
		return nil, apperr.Field("email", "an e-mail address")
	}
	t, err := s.useCode(ctx, model.EmailVerify, email, strings.TrimSpace(code), 0, "mail:try:verify:"+sha(email)[:32])
	if err != nil {
		return nil, err
	}
	won, err := s.store.ActivateUser(ctx, t.UserID)
	if err != nil {
		return nil, fmt.Errorf("activate user %d: %w", t.UserID, err)
	}
	u, err := s.store.UserByID(ctx, t.UserID)
	if err != nil {
		return nil, err
	}
	if won {
		s.changed(ctx, u.ID)
		actor := audit.Actor{ID: u.ID, Name: u.Username, IP: ip}
		s.audit.Record(ctx, actor, "user.email_verified", u.Username, map[string]string{"email": email})
		if err := s.welcome(ctx, u, actor); err != nil {
			return nil, err
		}
	}
	return s.View(ctx, u), nil
}

// ResetPassword sets a new password with a reset token; every session of the user ends (refresh tokens
// revoked, access JWTs refused by the bumped session epoch).
func (s *Service) ResetPassword(ctx context.Context, token, newPw, ip string) error {
	invalid := apperr.New(http.StatusBadRequest, "invalid_reset_token")
	if token == "" || len(token) > 128 {
		return invalid
	}
	now := s.opt.Now()
	t, err := s.store.LiveEmailToken(ctx, sha(token), model.EmailReset, now)
	if errors.Is(err, model.ErrNotFound) {
		return invalid
	} else if err != nil {
		return err
	}
	u, err := s.store.UserByID(ctx, t.UserID)
	if errors.Is(err, model.ErrNotFound) {
		return invalid
	} else if err != nil {
		return err
	}
	// The password is checked before the token is spent: a refused password leaves the link usable.
	if err := s.policy().check("new_password", u.Username, newPw); err != nil {
		return err
	}
	if err := s.store.UseEmailToken(ctx, t.ID, now); errors.Is(err, model.ErrNotFound) {
		return invalid
	} else if err != nil {
		return err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(newPw), s.opt.BcryptCost)
	if err != nil {
		return err
	}
	if err := s.store.UpdateUserFields(ctx, u.ID, map[string]any{"password_hash": string(hash), "session_epoch": u.SessionEpoch + 1}); err != nil {
		return err
	}
	if err := s.store.RevokeUserSessions(ctx, u.ID, now); err != nil {
		return err
	}
	s.succeeded(ctx, keysFor(u.Username, ip)) // the owner proved who they are: no pending sign-in delay
	s.audit.Record(ctx, audit.Actor{ID: u.ID, Name: u.Username, IP: ip}, "user.password_reset", u.Username, nil)
	s.changed(ctx, u.ID)
	return nil
}

// SendEmailChange mails a code to the address a signed-in user wants instead of theirs.
func (s *Service) SendEmailChange(ctx context.Context, userID int64, email, ip, lang string) error {
	email = normEmail(email)
	if !emailRE.MatchString(email) {
		return apperr.Field("email", "an e-mail address")
	}
	if s.mailer == nil || !s.mailer.Ready() {
		return apperr.New(http.StatusServiceUnavailable, "email_unavailable")
	}
	u, err := s.store.UserByID(ctx, userID)
	if err != nil {
		return err
	}
	if strings.EqualFold(u.Email, email) {
		return apperr.Field("email", "already your address")
	}
	if err := s.emailFree(ctx, email, userID); err != nil {
		return err
	}
	if err := s.mailSlot(ctx, email, ip); err != nil {
		return err
	}
	return s.sendCode(ctx, u, model.EmailChange, email, userLang(u, lang), true)
}

// ChangeEmail applies the new address once its code is entered.
func (s *Service) ChangeEmail(ctx context.Context, userID int64, email, code, ip string) (*model.User, error) {
	email = normEmail(email)
	if !emailRE.MatchString(email) {
		return nil, apperr.Field("email", "an e-mail address")
	}
	if _, err := s.useCode(ctx, model.EmailChange, email, strings.TrimSpace(code), userID,
		"mail:try:change:"+strconv.FormatInt(userID, 10)); err != nil {
		return nil, err
	}
	u, err := s.store.UserByID(ctx, userID)
	if err != nil {
		return nil, err
	}
	if err := s.store.UpdateUserFields(ctx, userID, map[string]any{"email": email}); err != nil {
		return nil, err
	}
	s.audit.Record(ctx, audit.Actor{ID: u.ID, Name: u.Username, IP: ip}, "user.email_change", u.Username,
		map[string]string{"from": u.Email, "to": email})
	s.changed(ctx, userID)
	return s.Get(ctx, userID)
}

// emailFree refuses an address another account already uses (409 email_taken): with verification on, an
// address names one account, which is what a reset link or a code is sent for.
func (s *Service) emailFree(ctx context.Context, email string, self int64) error {
	users, err := s.store.UsersByEmail(ctx, email, 2)
	if err != nil {
		return fmt.Errorf("users by email: %w", err)
	}
	for _, o := range users {
		if o.ID != self {
			return apperr.New(http.StatusConflict, "email_taken")
		}
	}
	return nil
}

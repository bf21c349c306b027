package account

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/audit"
	"tollgate/service/totp"
)

// Two-factor sign-in (RFC 6238 TOTP) and its backup codes.
//
// The secret is sealed with the keyring like channel keys. Setup stores a fresh secret with 2FA still off;
// enabling it takes a code from that secret and returns ten backup codes, shown once and stored as salted
// SHA-256. A code is accepted once: the user's last accepted time step is claimed with one conditional
// UPDATE, so a code seen over someone's shoulder (or replayed to another node) is refused. A backup code is
// accepted wherever a TOTP code is, once.
//
// Wrong codes are counted per user in the cache (shared by every node): after tfaFreeFailures of them within
// tfaWindow, each further attempt waits a growing delay (429 totp_delayed with Retry-After). Only someone who
// already has the password (or a live session, for step-up) gets this far, so the per-user delay cannot be
// used by strangers to lock the owner out.
const (
	tfaWindow       = 15 * time.Minute
	tfaFreeFailures = 5
	tfaDelayBase    = 30 * time.Second
	tfaDelayCap     = 15 * time.Minute
	tfaTicketTTL    = 5 * time.Minute
	backupCodeCount = 10
)

// Error codes of the second factor.
const (
	CodeTOTPRequired = "totp_required"
	CodeTOTPInvalid  = "totp_invalid"
	CodeTOTPDelayed  = "totp_delayed"
)

// tfaDelay is the wait imposed after the n-th wrong code in the window.
func tfaDelay(n int64) time.Duration {
	if n < tfaFreeFailures {
		return 0
	}
	shift := n - tfaFreeFailures
	if shift >= 5 {
		return tfaDelayCap
	}
	return min(tfaDelayBase<<shift, tfaDelayCap)
}

func tfaFailKey(id int64) string { return "tfa:fail:" + strconv.FormatInt(id, 10) }
func tfaWaitKey(id int64) string { return "tfa:wait:" + strconv.FormatInt(id, 10) }
func ticketKey(t string) string  { return "tfa:ticket:" + sha(t) }

// NeedsSecondFactor reports whether u must give a TOTP (or backup) code before a session opens.
func NeedsSecondFactor(u *model.User) bool { return u.TOTPEnabled }

// TwoFactorStatus is what GET /api/user/2fa shows.
type TwoFactorStatus struct {
	Enabled         bool `json:"enabled"`
	BackupCodesLeft int  `json:"backup_codes_left"`
}

// TwoFactorSetup is a pending enrolment: the secret as text and as the URL an authenticator app scans.
type TwoFactorSetup struct {
	Secret     string `json:"secret"`
	OtpauthURL string `json:"otpauth_url"`
}

// TwoFactor reports whether the user has 2FA on and how many backup codes are left.
func (s *Service) TwoFactor(ctx context.Context, userID int64) (*TwoFactorStatus, error) {
	u, err := s.store.UserByID(ctx, userID)
	if err != nil {
		return nil, err
	}
	out := &TwoFactorStatus{Enabled: u.TOTPEnabled}
	if u.TOTPEnabled {
		codes, err := s.store.UnusedBackupCodes(ctx, userID)
		if err != nil {
			return nil, err
		}
		out.BackupCodesLeft = len(codes)
	}
	return out, nil
}

// SetupTwoFactor stores a fresh secret for the user (2FA stays off until EnableTwoFactor) and returns it.
// Calling it again replaces a pending secret; with 2FA already on it is refused.
func (s *Service) SetupTwoFactor(ctx context.Context, userID int64) (*TwoFactorSetup, error) {
	u, err := s.store.UserByID(ctx, userID)
	if err != nil {
		return nil, err
	}
	if u.TOTPEnabled {
		return nil, apperr.New(http.StatusConflict, "totp_already_enabled")
	}
	sec, err := totp.NewSecret()
	if err != nil {
		return nil, err
	}
	sealed, err := s.keys.Encrypt(sec)
	if err != nil {
		return nil, fmt.Errorf("seal totp secret: %w", err)
	}
	if err := s.store.UpdateUserFields(ctx, userID, map[string]any{"totp_secret": sealed}); err != nil {
		return nil, err
	}
	issuer := s.settings.Get().SiteName
	if issuer == "" {
		issuer = "Tollgate"
	}
	return &TwoFactorSetup{Secret: sec, OtpauthURL: totp.URL(issuer, u.Username, sec)}, nil
}

// EnableTwoFactor turns 2FA on with a code from the pending secret and returns the ten backup codes (the only
// time they are shown).
func (s *Service) EnableTwoFactor(ctx context.Context, userID int64, code, ip string) ([]string, error) {
	u, err := s.store.UserByID(ctx, userID)
	if err != nil {
		return nil, err
	}
	if u.TOTPEnabled {
		return nil, apperr.New(http.StatusConflict, "totp_already_enabled")
	}
	if u.TOTPSecret == "" {
		return nil, apperr.New(http.StatusBadRequest, "totp_not_setup")
	}
	if err := s.checkCode(ctx, u, code, false, http.StatusBadRequest); err != nil {
		return nil, err
	}
	codes, hashes, err := newBackupCodes()
	if err != nil {
		return nil, err
	}
	if err := s.store.ReplaceBackupCodes(ctx, userID, hashes); err != nil {
		return nil, fmt.Errorf("store backup codes: %w", err)
	}
	if err := s.store.UpdateUserFields(ctx, userID, map[string]any{"totp_enabled": true}); err != nil {
		return nil, err
	}
	s.audit.Record(ctx, audit.Actor{ID: u.ID, Name: u.Username, IP: ip}, "user.2fa_enable", u.Username, nil)
	s.changed(ctx, userID)
	return codes, nil
}

// DisableTwoFactor turns 2FA off with a current TOTP or backup code.
func (s *Service) DisableTwoFactor(ctx context.Context, userID int64, code, ip string) error {
	u, err := s.store.UserByID(ctx, userID)
	if err != nil {
		return err
	}
	if !u.TOTPEnabled {
		return apperr.New(http.StatusConflict, "totp_not_enabled")
	}
	if err := s.checkCode(ctx, u, code, true, http.StatusBadRequest); err != nil {
		return err
	}
	if err := s.clearTwoFactor(ctx, userID); err != nil {
		return err
	}
	s.audit.Record(ctx, audit.Actor{ID: u.ID, Name: u.Username, IP: ip}, "user.2fa_disable", u.Username, nil)
	return nil
}

// ResetTwoFactor is an admin's recovery for a user who lost their authenticator: 2FA off, secret and backup
// codes gone, an audit row written.
func (s *Service) ResetTwoFactor(ctx context.Context, actor *model.User, ip string, id int64) error {
	u, err := s.store.UserByID(ctx, id)
	if errors.Is(err, model.ErrNotFound) {
		return apperr.New(http.StatusNotFound, "user_not_found")
	} else if err != nil {
		return err
	}
	if !u.ManagedBy(actor) {
		return apperr.ErrForbidden
	}
	if err := s.clearTwoFactor(ctx, id); err != nil {
		return err
	}
	s.audit.Record(ctx, audit.Actor{ID: actor.ID, Name: actor.Username, IP: ip}, "user.2fa_reset", u.Username,
		map[string]any{"user_id": u.ID, "was_enabled": u.TOTPEnabled})
	return nil
}

func (s *Service) clearTwoFactor(ctx context.Context, id int64) error {
	if err := s.store.UpdateUserFields(ctx, id, map[string]any{"totp_enabled": false, "totp_secret": "", "totp_last_step": 0}); err != nil {
		return err
	}
	if err := s.store.ReplaceBackupCodes(ctx, id, nil); err != nil {
		return err
	}
	_ = s.cache.Del(ctx, tfaFailKey(id), tfaWaitKey(id))
	s.changed(ctx, id)
	return nil
}

// StepUp asks a user with 2FA on for a fresh code before a sensitive action (revealing a key, changing the
// password or e-mail, an admin changing channel keys): no code is a 403 totp_required, a wrong one a 403
// totp_invalid. Users without 2FA pass.
func (s *Service) StepUp(ctx context.Context, u *model.User, code string) error {
	if u == nil || !u.TOTPEnabled {
		return nil
	}
	if strings.TrimSpace(code) == "" {
		return apperr.New(http.StatusForbidden, CodeTOTPRequired)
	}
	fresh, err := s.store.UserByID(ctx, u.ID)
	if err != nil {
		return err
	}
	if !fresh.TOTPEnabled {
		return nil
	}
	return s.checkCode(ctx, fresh, code, true, http.StatusForbidden)
}

// SecondFactorTicket records that u passed the first factor (a password, an OAuth provider) and returns a
// ticket, valid for five minutes, that CompleteSecondFactor exchanges for a session with a code.
func (s *Service) SecondFactorTicket(ctx context.Context, u *model.User) (string, error) {
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	t := hex.EncodeToString(raw)
	v := strconv.FormatInt(u.ID, 10) + ":" + strconv.FormatInt(u.SessionEpoch, 10)
	if err := s.cache.Set(ctx, ticketKey(t), []byte(v), tfaTicketTTL); err != nil {
		return "", fmt.Errorf("second-factor ticket: %w", err)
	}
	return t, nil
}

// CompleteSecondFactor opens a session for the user of a ticket from SecondFactorTicket when code is right
// (a TOTP or a backup code). The ticket is single use; a wrong code leaves it for another try (wrong codes are
// throttled per user). An unknown or expired ticket is a 401 totp_ticket_invalid.
func (s *Service) CompleteSecondFactor(ctx context.Context, ticket, code, ip string) (*Session, error) {
	bad := apperr.New(http.StatusUnauthorized, "totp_ticket_invalid")
	if ticket == "" || len(ticket) > 128 {
		return nil, bad
	}
	v, ok, err := s.cache.Get(ctx, ticketKey(ticket))
	if err != nil {
		return nil, fmt.Errorf("second-factor ticket: %w", err)
	}
	if !ok {
		return nil, bad
	}
	idS, epochS, _ := strings.Cut(string(v), ":")
	id, _ := strconv.ParseInt(idS, 10, 64)
	u, err := s.store.UserByID(ctx, id)
	if err != nil || strconv.FormatInt(u.SessionEpoch, 10) != epochS {
		return nil, bad
	}
	if u.Status != model.StatusEnabled {
		return nil, apperr.New(http.StatusForbidden, "user_disabled")
	}
	if u.TOTPEnabled {
		if err := s.secondFactor(ctx, u, code); err != nil {
			return nil, err
		}
	}
	if first, err := s.cache.SetNX(ctx, ticketKey(ticket)+":used", []byte("1"), tfaTicketTTL); err != nil {
		return nil, fmt.Errorf("second-factor ticket: %w", err)
	} else if !first {
		return nil, bad // another request completed it first
	}
	_ = s.cache.Del(ctx, ticketKey(ticket))
	s.audit.Record(ctx, audit.Actor{ID: u.ID, Name: u.Username, IP: ip}, "user.login", u.Username, map[string]string{"second_factor": "totp"})
	return s.open(ctx, u, ip, "")
}

// secondFactor checks a sign-in's code: none is 401 totp_required, a wrong one 401 totp_invalid.
func (s *Service) secondFactor(ctx context.Context, u *model.User, code string) error {
	if strings.TrimSpace(code) == "" {
		return apperr.New(http.StatusUnauthorized, CodeTOTPRequired)
	}
	return s.checkCode(ctx, u, code, true, http.StatusUnauthorized)
}

// checkCode verifies a TOTP code (or, with backup, a backup code) of u, under the per-user delay; a refusal
// has status.
func (s *Service) checkCode(ctx context.Context, u *model.User, code string, backup bool, status int) error {
	if err := s.tfaAdmit(ctx, u.ID); err != nil {
		return err
	}
	ok, err := s.matchCode(ctx, u, code, backup)
	if err != nil {
		return err
	}
	if !ok {
		s.tfaFailed(ctx, u.ID)
		return apperr.New(status, CodeTOTPInvalid)
	}
	_ = s.cache.Del(ctx, tfaFailKey(u.ID), tfaWaitKey(u.ID))
	return nil
}

func (s *Service) matchCode(ctx context.Context, u *model.User, code string, backup bool) (bool, error) {
	code = strings.TrimSpace(code)
	if code == "" || len(code) > 32 {
		return false, nil
	}
	if len(code) == totp.Digits && u.TOTPSecret != "" {
		plain, err := s.keys.Decrypt(u.TOTPSecret)
		if err != nil {
			return false, fmt.Errorf("open totp secret of %d: %w", u.ID, err)
		}
		key, err := totp.Decode(plain)
		if err != nil {
			return false, fmt.Errorf("decode totp secret of %d: %w", u.ID, err)
		}
		step, ok := totp.Match(key, code, s.opt.Now(), u.TOTPLastStep)
		if !ok {
			return false, nil
		}
		return s.store.ClaimTOTPStep(ctx, u.ID, step)
	}
	if !backup {
		return false, nil
	}
	norm := normBackup(code)
	rows, err := s.store.UnusedBackupCodes(ctx, u.ID)
	if err != nil {
		return false, err
	}
	for _, r := range rows {
		if backupMatches(r.Hash, norm) {
			return s.store.UseBackupCode(ctx, r.ID, s.opt.Now())
		}
	}
	return false, nil
}

func (s *Service) tfaAdmit(ctx context.Context, id int64) error {
	return s.pendingDelay(ctx, tfaWaitKey(id), CodeTOTPDelayed)
}

func (s *Service) tfaFailed(ctx context.Context, id int64) {
	n, err := s.cache.Incr(ctx, tfaFailKey(id), 1, tfaWindow)
	if err != nil {
		return
	}
	if d := tfaDelay(n); d > 0 {
		until := s.opt.Now().Add(d).UnixMilli()
		_ = s.cache.Set(ctx, tfaWaitKey(id), []byte(strconv.FormatInt(until, 10)), d)
	}
}

// Backup codes: ten groups "xxxxx-xxxxx" of a 31-character alphabet without look-alikes (about 49 bits each).
const backupAlphabet = "abcdefghjkmnpqrstuvwxyz23456789"

func newBackupCodes() (codes, hashes []string, err error) {
	for range backupCodeCount {
		raw := make([]byte, 10)
		if _, err := rand.Read(raw); err != nil {
			return nil, nil, err
		}
		var b strings.Builder
		for i, c := range raw {
			if i == 5 {
				b.WriteByte('-')
			}
			b.WriteByte(backupAlphabet[int(c)%len(backupAlphabet)])
		}
		code := b.String()
		salt := make([]byte, 16)
		if _, err := rand.Read(salt); err != nil {
			return nil, nil, err
		}
		codes = append(codes, code)
		hashes = append(hashes, hashBackup(hex.EncodeToString(salt), normBackup(code)))
	}
	return codes, hashes, nil
}

func normBackup(code string) string {
	return strings.ToLower(strings.NewReplacer("-", "", " ", "").Replace(code))
}

func hashBackup(salt, norm string) string {
	h := sha256.Sum256([]byte(salt + "|" + norm))
	return salt + "$" + hex.EncodeToString(h[:])
}

func backupMatches(stored, norm string) bool {
	salt, _, ok := strings.Cut(stored, "$")
	if !ok {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(hashBackup(salt, norm)), []byte(stored)) == 1
}

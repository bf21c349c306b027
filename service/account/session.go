package account

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/crypto/bcrypt"

	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/audit"
)

// Claims are the JWT claims of a console session.
type Claims struct {
	Role  string `json:"role"`
	Epoch int64  `json:"epoch"`
	// Sid is the refresh-token family the JWT was minted for; logout or a reused refresh token revokes it.
	Sid string `json:"sid,omitempty"`
	jwt.RegisteredClaims
}

// Session is what login and refresh return.
type Session struct {
	Token        string        `json:"token"`
	ExpiresAt    time.Time     `json:"expires_at"`
	User         *model.User   `json:"user"`
	RefreshToken string        `json:"-"`
	RefreshTTL   time.Duration `json:"-"`
	// Ticket is set, and nothing else, when the password was right but the user has 2FA on and gave no code:
	// POST /api/auth/login/totp exchanges it and a code for a session (CompleteSecondFactor).
	Ticket string `json:"-"`
}

// Login checks credentials and opens a session. Failures are throttled per IP and per username (throttle.go).
// An unknown username costs one bcrypt comparison at the real cost, like a known one. A user with 2FA on
// needs code (TOTP or backup, twofactor.go): without one, the answer is a Session holding only a Ticket.
func (s *Service) Login(ctx context.Context, username, password, code, ip string) (*Session, error) {
	k := keysFor(username, ip)
	if err := s.admit(ctx, k); err != nil {
		return nil, err
	}
	// A name no user could have signed up with is nobody's, whatever the store's collation says (MariaDB
	// pads with spaces: "alice " would find alice while the throttle counts it as another username).
	var u *model.User
	if usernameRE.MatchString(username) {
		var err error
		if u, err = s.store.UserByUsername(ctx, username); err != nil && !errors.Is(err, model.ErrNotFound) {
			return nil, err
		}
	}
	if u == nil {
		_ = bcrypt.CompareHashAndPassword(s.dummyHash, []byte(password))
	}
	if u == nil || bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte(password)) != nil {
		s.failed(ctx, k)
		return nil, apperr.New(http.StatusUnauthorized, "invalid_credentials")
	}
	if u.Status == model.StatusUnverified {
		return nil, apperr.New(http.StatusForbidden, "email_unverified")
	}
	if u.Status != model.StatusEnabled {
		return nil, apperr.New(http.StatusForbidden, "user_disabled")
	}
	s.succeeded(ctx, k)
	if NeedsSecondFactor(u) {
		if code == "" {
			t, err := s.SecondFactorTicket(ctx, u)
			if err != nil {
				return nil, err
			}
			return &Session{Ticket: t}, nil
		}
		if err := s.secondFactor(ctx, u, code); err != nil {
			return nil, err
		}
	}
	s.audit.Record(ctx, audit.Actor{ID: u.ID, Name: u.Username, IP: ip}, "user.login", u.Username, nil)
	return s.open(ctx, u, ip, "")
}

// open mints a JWT and a refresh token of family (a new family when empty: a fresh login).
func (s *Service) open(ctx context.Context, u *model.User, ip, family string) (*Session, error) {
	if family == "" {
		f := make([]byte, 16)
		if _, err := rand.Read(f); err != nil {
			return nil, err
		}
		family = hex.EncodeToString(f)
	}
	now := s.opt.Now()
	exp := now.Add(s.opt.AccessTTL)
	claims := Claims{Role: u.Role, Epoch: u.SessionEpoch, Sid: family, RegisteredClaims: jwt.RegisteredClaims{
		Subject: strconv.FormatInt(u.ID, 10), IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(exp),
		Issuer: "tollgate",
	}}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(s.keys.JWTKey())
	if err != nil {
		return nil, fmt.Errorf("sign jwt: %w", err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	refresh := base64.RawURLEncoding.EncodeToString(raw)
	if err := s.store.CreateSession(ctx, &model.Session{UserID: u.ID, Hash: sha(refresh), Family: family, ExpiresAt: now.Add(s.opt.RefreshTTL), IP: ip,
		UserAgent: userAgentOf(ctx)}); err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	return &Session{Token: tok, ExpiresAt: exp, User: s.View(ctx, u), RefreshToken: refresh, RefreshTTL: s.opt.RefreshTTL}, nil
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// Refresh exchanges a refresh token for a new session of the same family (the old refresh token is revoked:
// rotation). A refresh token that was already rotated or revoked being presented again means it was copied:
// the whole family is revoked, access JWTs included, so neither the thief nor the victim keeps a session.
func (s *Service) Refresh(ctx context.Context, refresh, ip string) (*Session, error) {
	if refresh == "" {
		return nil, apperr.New(http.StatusUnauthorized, "invalid_refresh")
	}
	sess, err := s.store.RevokeSession(ctx, sha(refresh), s.opt.Now())
	if errors.Is(err, model.ErrNotFound) {
		if s.reused(ctx, sha(refresh), ip) {
			return nil, apperr.New(http.StatusUnauthorized, CodeRefreshRotated)
		}
		return nil, apperr.New(http.StatusUnauthorized, "invalid_refresh")
	} else if err != nil {
		return nil, err
	}
	u, err := s.store.UserByID(ctx, sess.UserID)
	if err != nil {
		return nil, apperr.New(http.StatusUnauthorized, "invalid_refresh")
	}
	if u.Status != model.StatusEnabled {
		return nil, apperr.New(http.StatusForbidden, "user_disabled")
	}
	return s.open(ctx, u, ip, sess.Family)
}

// CodeRefreshRotated refuses a refresh token that was rotated a moment ago (within Options.RefreshGrace): the
// caller is most likely a second tab that raced the first, and its cookie jar already holds the successor, so
// the console keeps the cookie and retries once instead of signing out.
const CodeRefreshRotated = "refresh_rotated"

// reused revokes the family of a known refresh token that is no longer live (rotated or logged out), unless
// it was rotated within the grace window; it reports that case.
func (s *Service) reused(ctx context.Context, hash, ip string) (justRotated bool) {
	old, err := s.store.SessionByHash(ctx, hash)
	if err != nil || old.RevokedAt == nil || !old.ExpiresAt.After(s.opt.Now()) {
		return false // unknown or merely expired: nothing was stolen
	}
	if old.Family != "" && s.opt.Now().Sub(*old.RevokedAt) < s.opt.RefreshGrace {
		// Rotated a moment ago into a successor that is still live: a second tab or a retry, refused but not a
		// theft. (Logged out a moment ago: the family has no live token, and the refusal is the usual one.)
		if live, err := s.store.FamilyLive(ctx, old.UserID, old.Family, s.opt.Now()); err == nil && live {
			return true
		}
	}
	live, err := s.endFamily(ctx, old.UserID, old.Family)
	if err != nil {
		slog.Error("revoke refresh family", "user", old.UserID, "err", err)
		return false
	}
	if live == 0 {
		return false // the family had already ended (logout, an earlier reuse): nothing new to report
	}
	s.audit.Record(ctx, audit.Actor{ID: old.UserID, IP: ip}, "user.refresh_reuse", strconv.FormatInt(old.UserID, 10),
		map[string]string{"family": old.Family})
	return false
}

// endFamily revokes a family's refresh tokens in SQL and its access JWTs in the cache (for as long as a JWT
// can live), and says how many refresh tokens were still live. A family-less session (made before families
// existed) ends every session of its user.
func (s *Service) endFamily(ctx context.Context, userID int64, family string) (int64, error) {
	now := s.opt.Now()
	if family == "" {
		return 1, s.store.RevokeUserSessions(ctx, userID, now)
	}
	live, err := s.store.RevokeFamily(ctx, userID, family, now)
	if err != nil {
		return 0, err
	}
	return live, s.cache.Set(ctx, revokedKey(family), []byte("1"), s.opt.AccessTTL+time.Minute)
}

func revokedKey(family string) string { return "sessrev:" + family }

// Logout ends the session of the refresh token and of the access JWT (either may be empty or invalid; unknown
// ones are ignored): both the refresh family and its JWTs stop working on every node.
func (s *Service) Logout(ctx context.Context, refresh, access string) error {
	ended := "" // the cookie's family: usually the JWT's too, and ended once
	if refresh != "" {
		sess, err := s.store.SessionByHash(ctx, sha(refresh))
		if err == nil {
			if _, err := s.endFamily(ctx, sess.UserID, sess.Family); err != nil {
				return err
			}
			ended = sess.Family
		} else if !errors.Is(err, model.ErrNotFound) {
			return err
		}
	}
	if access != "" {
		if c, err := s.parse(access); err == nil && c.Sid != "" && c.Sid != ended {
			if id, err := strconv.ParseInt(c.Subject, 10, 64); err == nil {
				_, err := s.endFamily(ctx, id, c.Sid)
				return err
			}
		}
	}
	return nil
}

// parse verifies a JWT's signature, issuer and expiry.
func (s *Service) parse(token string) (*Claims, error) {
	var c Claims
	_, err := jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return s.keys.JWTKey(), nil },
		jwt.WithValidMethods([]string{"HS256"}), jwt.WithIssuer("tollgate"), jwt.WithTimeFunc(s.opt.Now),
		jwt.WithExpirationRequired())
	return &c, err
}

// Authenticate verifies a console JWT and returns its user (from the cache). A JWT issued before a password
// change or a disable is refused.
func (s *Service) Authenticate(ctx context.Context, token string) (*model.User, error) {
	c, err := s.parse(token)
	if errors.Is(err, jwt.ErrTokenExpired) {
		return nil, apperr.New(http.StatusUnauthorized, "token_expired")
	}
	if err != nil {
		return nil, apperr.New(http.StatusUnauthorized, "invalid_session")
	}
	id, err := strconv.ParseInt(c.Subject, 10, 64)
	if err != nil {
		return nil, apperr.New(http.StatusUnauthorized, "invalid_session")
	}
	u, err := s.users.Get(ctx, id)
	if errors.Is(err, model.ErrNotFound) {
		return nil, apperr.New(http.StatusUnauthorized, "invalid_session")
	} else if err != nil {
		return nil, err
	}
	if u.SessionEpoch != c.Epoch {
		return nil, apperr.New(http.StatusUnauthorized, "invalid_session")
	}
	if c.Sid != "" {
		// One cache read: logout and refresh-token reuse end live JWTs on every node, not only at expiry.
		_, revoked, err := s.cache.Get(ctx, revokedKey(c.Sid))
		if err != nil {
			return nil, fmt.Errorf("session revocation: %w", err)
		}
		if revoked {
			return nil, apperr.New(http.StatusUnauthorized, "invalid_session")
		}
	}
	if u.Status != model.StatusEnabled {
		return nil, apperr.New(http.StatusForbidden, "user_disabled")
	}
	return u, nil
}

// ChangePassword checks the old password, stores the new one and ends every other session.
func (s *Service) ChangePassword(ctx context.Context, userID int64, oldPw, newPw, ip string) error {
	u, err := s.store.UserByID(ctx, userID)
	if err != nil {
		return err
	}
	// A user made by an external sign-in has no password yet: they set their first one without an old one.
	if u.PasswordHash != "" && bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte(oldPw)) != nil {
		// Signed in already: the name is not in question, only the password typed as the current one.
		return apperr.New(http.StatusBadRequest, "wrong_current_password")
	}
	if err := s.policy().check("new_password", u.Username, newPw); err != nil {
		return err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(newPw), s.opt.BcryptCost)
	if err != nil {
		return err
	}
	if err := s.store.UpdateUserFields(ctx, userID, map[string]any{"password_hash": string(hash), "session_epoch": u.SessionEpoch + 1}); err != nil {
		return err
	}
	if err := s.store.RevokeUserSessions(ctx, userID, s.opt.Now()); err != nil {
		return err
	}
	s.audit.Record(ctx, audit.Actor{ID: u.ID, Name: u.Username, IP: ip}, "user.password", u.Username, nil)
	s.changed(ctx, userID)
	return nil
}

package account

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/crypto/bcrypt"

	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/audit"
)

// Login attempt limits: failures per window, per IP and per username.
const (
	loginWindow     = 5 * time.Minute
	loginMaxPerUser = 10
	loginMaxPerIP   = 30
)

// Claims are the JWT claims of a console session.
type Claims struct {
	Role  string `json:"role"`
	Epoch int64  `json:"epoch"`
	jwt.RegisteredClaims
}

// Session is what login and refresh return.
type Session struct {
	Token        string        `json:"token"`
	ExpiresAt    time.Time     `json:"expires_at"`
	User         *model.User   `json:"user"`
	RefreshToken string        `json:"-"`
	RefreshTTL   time.Duration `json:"-"`
}

// dummyHash makes a login for an unknown user cost as much as one for a known user.
var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("tollgate-timing-equaliser"), bcrypt.MinCost)

// Login checks credentials and opens a session. Failures are counted per IP and per username.
func (s *Service) Login(ctx context.Context, username, password, ip string) (*Session, error) {
	ipKey, userKey := "login:ip:"+ip, "login:user:"+username
	for _, k := range []struct {
		key string
		max int64
	}{{ipKey, loginMaxPerIP}, {userKey, loginMaxPerUser}} {
		n, err := s.cache.Incr(ctx, k.key, 0, loginWindow)
		if err != nil {
			return nil, fmt.Errorf("login limit: %w", err)
		}
		if n >= k.max {
			return nil, apperr.New(http.StatusTooManyRequests, "too_many_attempts", int(loginWindow.Seconds()))
		}
	}
	u, err := s.store.UserByUsername(ctx, username)
	if err != nil && !errors.Is(err, model.ErrNotFound) {
		return nil, err
	}
	if u == nil {
		_ = bcrypt.CompareHashAndPassword(dummyHash, []byte(password))
	}
	if u == nil || bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte(password)) != nil {
		_, _ = s.cache.Incr(ctx, ipKey, 1, loginWindow)
		_, _ = s.cache.Incr(ctx, userKey, 1, loginWindow)
		return nil, apperr.New(http.StatusUnauthorized, "invalid_credentials")
	}
	if u.Status != model.StatusEnabled {
		return nil, apperr.New(http.StatusForbidden, "user_disabled")
	}
	_ = s.cache.Del(ctx, userKey)
	s.audit.Record(ctx, audit.Actor{ID: u.ID, Name: u.Username, IP: ip}, "user.login", u.Username, nil)
	return s.open(ctx, u, ip)
}

func (s *Service) open(ctx context.Context, u *model.User, ip string) (*Session, error) {
	now := s.opt.Now()
	exp := now.Add(s.opt.AccessTTL)
	claims := Claims{Role: u.Role, Epoch: u.SessionEpoch, RegisteredClaims: jwt.RegisteredClaims{
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
	if err := s.store.CreateSession(ctx, &model.Session{UserID: u.ID, Hash: sha(refresh), ExpiresAt: now.Add(s.opt.RefreshTTL), IP: ip}); err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	return &Session{Token: tok, ExpiresAt: exp, User: s.View(ctx, u), RefreshToken: refresh, RefreshTTL: s.opt.RefreshTTL}, nil
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// Refresh exchanges a refresh token for a new session (the old refresh token is revoked: rotation).
func (s *Service) Refresh(ctx context.Context, refresh, ip string) (*Session, error) {
	if refresh == "" {
		return nil, apperr.New(http.StatusUnauthorized, "invalid_refresh")
	}
	sess, err := s.store.RevokeSession(ctx, sha(refresh), s.opt.Now())
	if errors.Is(err, model.ErrNotFound) {
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
	return s.open(ctx, u, ip)
}

// Logout revokes a refresh token; unknown tokens are ignored.
func (s *Service) Logout(ctx context.Context, refresh string) error {
	if refresh == "" {
		return nil
	}
	_, err := s.store.RevokeSession(ctx, sha(refresh), s.opt.Now())
	if errors.Is(err, model.ErrNotFound) {
		return nil
	}
	return err
}

// Authenticate verifies a console JWT and returns its user (from the cache). A JWT issued before a password
// change or a disable is refused.
func (s *Service) Authenticate(ctx context.Context, token string) (*model.User, error) {
	var c Claims
	_, err := jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return s.keys.JWTKey(), nil },
		jwt.WithValidMethods([]string{"HS256"}), jwt.WithIssuer("tollgate"), jwt.WithTimeFunc(s.opt.Now),
		jwt.WithExpirationRequired())
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
	if bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte(oldPw)) != nil {
		return apperr.New(http.StatusBadRequest, "invalid_credentials")
	}
	if err := checkPassword(newPw); err != nil {
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

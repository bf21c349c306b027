// Package account manages users: sign-up, sign-in with short-lived JWTs and rotating refresh tokens,
// passwords, roles, groups, status and balances. Users are served to the hot path from a per-node cache
// that the bus invalidates on every write.
package account

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"

	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/audit"
	"tollgate/service/bus"
	"tollgate/service/cache"
	"tollgate/service/netkey"
	"tollgate/service/secret"
	"tollgate/service/setting"
)

// Topic is the bus topic of user changes (payload: user id; empty: all).
const Topic = "user"

// Balances is the live money book as the account service needs it (implemented by service/ledger).
type Balances interface {
	UserBalance(ctx context.Context, userID int64) (int64, error)
	AdjustUser(ctx context.Context, userID, delta int64) error
	Forget(ctx context.Context, userID, tokenID int64) error
}

// Groups says which groups exist (implemented by service/group).
type Groups interface {
	Get(name string) (model.Group, bool)
}

// Options tune the service; zero values pick production defaults.
type Options struct {
	AccessTTL  time.Duration // JWT lifetime (15 min)
	RefreshTTL time.Duration // refresh token lifetime (30 days)
	BcryptCost int           // bcrypt.DefaultCost
	// RefreshGrace is how long after its rotation a refresh token presented again is only refused, not taken
	// for a stolen copy (10 s): two tabs refreshing at once, or a retry after a lost answer, send the token
	// that was just rotated, and must not log the user out everywhere. Negative: no grace.
	RefreshGrace time.Duration
	Now          func() time.Time
}

// Service is the account book.
type Service struct {
	store    *model.Store
	cache    cache.Cache
	bus      bus.Bus
	keys     *secret.Keyring
	settings *setting.Service
	groups   Groups
	balances Balances
	audit    *audit.Log
	users    *cache.Local[int64, *model.User]
	// policy is built on first use: its 10,000-word set (~0.5 MB) is not needed until someone sets a password.
	policy  func() *passwordPolicy
	invites Invites // nil: no invites (see SetInvites)
	mailer  Mailer  // nil: no e-mail flows (see SetMailer)
	captcha Captcha // nil: no captcha (see SetCaptcha)
	tiers   Tiers   // nil: every tier name but "default" is refused (see SetTiers)
	// dummyHash is compared against when the username is unknown, at the real cost, so that sign-in takes as
	// long for an unknown user as for a known one (no user enumeration by timing).
	dummyHash []byte
	opt       Options
}

// New builds the account service.
func New(store *model.Store, c cache.Cache, b bus.Bus, keys *secret.Keyring, settings *setting.Service,
	groups Groups, balances Balances, a *audit.Log, opt Options) *Service {
	if opt.AccessTTL == 0 {
		opt.AccessTTL = 15 * time.Minute
	}
	if opt.RefreshTTL == 0 {
		opt.RefreshTTL = 30 * 24 * time.Hour
	}
	if opt.BcryptCost == 0 {
		opt.BcryptCost = bcrypt.DefaultCost
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.RefreshGrace == 0 {
		opt.RefreshGrace = 10 * time.Second
	}
	s := &Service{store: store, cache: c, bus: b, keys: keys, settings: settings, groups: groups, balances: balances, audit: a, opt: opt,
		policy: sync.OnceValue(newPasswordPolicy)}
	dummy := make([]byte, 18)
	_, _ = rand.Read(dummy)
	s.dummyHash, _ = bcrypt.GenerateFromPassword(dummy, opt.BcryptCost)
	s.users = cache.NewLocal(60*time.Second, 100_000, func(ctx context.Context, id int64) (*model.User, error) {
		return store.UserByID(ctx, id)
	})
	b.Subscribe(Topic, func(m bus.Message) {
		if id, err := strconv.ParseInt(m.Payload, 10, 64); err == nil {
			s.users.Invalidate(id)
		} else {
			s.users.Purge()
		}
	})
	return s
}

// Cached returns a user from the per-node cache (the hot path's view).
func (s *Service) Cached(ctx context.Context, id int64) (*model.User, error) {
	u, err := s.users.Get(ctx, id)
	if errors.Is(err, model.ErrNotFound) {
		return nil, apperr.New(http.StatusNotFound, "user_not_found")
	}
	return u, err
}

func (s *Service) changed(ctx context.Context, id int64) {
	s.users.Invalidate(id)
	_ = s.bus.Publish(ctx, Topic, strconv.FormatInt(id, 10))
}

var usernameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{3,32}$`)
var emailRE = regexp.MustCompile(`^[^@\s]{1,64}@[^@\s]{1,126}$`)

// RegisterInput is a sign-up request.
type RegisterInput struct {
	Username string `json:"username"`
	Password string `json:"password"`
	Email    string `json:"email"`
	AffCode  string `json:"aff_code"` // the inviter's code (optional)
	// Captcha is the captcha token (required when a captcha is configured).
	Captcha string `json:"captcha"`
	// Language of the user's e-mails ("en", "zh-CN" or "").
	Language string `json:"language"`

	inviterID int64  // resolved from AffCode by Register
	status    string // "" = enabled; unverified while the e-mail awaits its code
}

// Register creates a user with role user in the default group.
func (s *Service) Register(ctx context.Context, in RegisterInput, ip string) (*model.User, error) {
	st := s.settings.Get()
	if !st.RegistrationOpen {
		return nil, apperr.New(http.StatusForbidden, "registration_closed")
	}
	if err := s.checkCaptcha(ctx, in.Captcha, ip); err != nil {
		return nil, err
	}
	if st.EmailVerification {
		// The account waits for its code: no sign-in, no gift until then (VerifyEmail).
		in.Email, in.status = normEmail(in.Email), model.StatusUnverified
		if in.Email == "" {
			return nil, apperr.Field("email", "required: the site verifies e-mail addresses")
		}
		if emailRE.MatchString(in.Email) {
			if err := s.emailFree(ctx, in.Email, 0); err != nil {
				return nil, err
			}
		}
	}
	release, err := s.signupSlot(ctx, ip, st.SignupRateLimit)
	if err != nil {
		return nil, err
	}
	if s.invites != nil {
		if in.inviterID, err = s.invites.Inviter(ctx, in.AffCode); err != nil {
			release()
			return nil, err
		}
	}
	u, err := s.create(ctx, in, model.RoleUser, st.DefaultGroup, 0, true)
	if err != nil {
		release()
		return nil, err
	}
	actor := audit.Actor{ID: u.ID, Name: u.Username, IP: ip}
	s.audit.Record(ctx, actor, "user.register", u.Username, nil)
	if u.Status == model.StatusUnverified {
		if s.mailer == nil || !s.mailer.Ready() {
			return u, nil // the code can be asked for again once mail works (POST /api/auth/email/send)
		}
		if err := s.mailSlot(ctx, u.Email, ip); err != nil {
			return u, nil
		}
		if err := s.sendCode(ctx, u, model.EmailVerify, u.Email, in.Language, true); err != nil {
			slog.Warn("sign-up code not sent", "user", u.ID, "err", err)
		}
		return u, nil
	}
	if err := s.welcome(ctx, u, actor); err != nil {
		return nil, err
	}
	return u, nil
}

// welcome pays a new account's gift and its invite reward, once (both are credits keyed by the user's id).
func (s *Service) welcome(ctx context.Context, u *model.User, actor audit.Actor) error {
	st := s.settings.Get()
	if st.NewUserQuota > 0 {
		// The gift is a credit like any other, keyed by the new user's id: it happens once.
		err := s.Credit(ctx, u.ID, st.NewUserQuota, CreditSource{Kind: model.CreditSignup, Ref: strconv.FormatInt(u.ID, 10),
			Action: "user.quota", Target: u.Username, Actor: actor, Note: "new_user_quota",
			Detail: map[string]any{"delta": st.NewUserQuota, "reason": "new_user_quota"}})
		switch {
		case err == nil:
			u.Quota = st.NewUserQuota
		case !errors.Is(err, ErrAlreadyCredited):
			return fmt.Errorf("new-user gift: %w", err)
		}
	}
	if s.invites != nil {
		if err := s.invites.Welcome(ctx, u, actor.IP); err != nil {
			return fmt.Errorf("invite: %w", err)
		}
	}
	return nil
}

// signupSlot takes one of the IP's sign-ups for this hour (limit 0: unlimited); the returned func gives it
// back when the sign-up fails. The counter is in the cache, so on Redis the limit holds across nodes.
func (s *Service) signupSlot(ctx context.Context, ip string, limit int) (func(), error) {
	if limit <= 0 {
		return func() {}, nil
	}
	now := s.opt.Now()
	hour := now.Truncate(time.Hour)
	key := "signup:" + netkey.Of(ip) + ":" + strconv.FormatInt(hour.Unix(), 10)
	n, err := s.cache.Incr(ctx, key, 1, time.Hour+time.Minute)
	if err != nil {
		return nil, fmt.Errorf("sign-up limit: %w", err)
	}
	release := func() { _, _ = s.cache.Incr(context.WithoutCancel(ctx), key, -1, time.Hour+time.Minute) }
	if n > int64(limit) {
		release()
		e := apperr.New(http.StatusTooManyRequests, "too_many_signups", limit)
		e.RetryAfter = int(hour.Add(time.Hour).Sub(now).Seconds()) + 1
		return nil, e
	}
	return release, nil
}

// create inserts a user. strict applies the whole password policy; the operator's ROOT_PASSWORD at first
// start is only held to the length and letter/digit rule (it is not chosen through the sign-up form).
func (s *Service) create(ctx context.Context, in RegisterInput, role, group string, quota int64, strict bool) (*model.User, error) {
	if !usernameRE.MatchString(in.Username) {
		return nil, apperr.Field("username", "3-32 letters, digits, '_', '.', '-'")
	}
	err := checkShape("password", in.Password)
	if strict {
		err = s.policy().check("password", in.Username, in.Password)
	}
	if err != nil {
		return nil, err
	}
	if in.Email != "" && !emailRE.MatchString(in.Email) {
		return nil, apperr.Field("email", "not an email address")
	}
	if _, ok := s.groups.Get(group); !ok {
		group = "default"
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(in.Password), s.opt.BcryptCost)
	if err != nil {
		return nil, fmt.Errorf("hash password: %w", err)
	}
	if !Languages[in.Language] {
		return nil, apperr.Field("language", `"en" or "zh-CN"`)
	}
	status := model.StatusEnabled
	if in.status != "" {
		status = in.status
	}
	u := &model.User{Username: in.Username, Email: in.Email, PasswordHash: string(hash), Role: role, Group: group,
		Status: status, Quota: quota, InviterID: in.inviterID, Language: in.Language}
	if err := s.store.CreateUser(ctx, u); errors.Is(err, model.ErrDuplicate) {
		return nil, apperr.New(http.StatusConflict, "username_taken")
	} else if err != nil {
		return nil, fmt.Errorf("create user: %w", err)
	}
	return u, nil
}

// EnsureRoot creates the root user when the database has no user yet. It returns the generated password
// when none was given (to print once), or "".
func (s *Service) EnsureRoot(ctx context.Context, password string) (string, error) {
	n, err := s.store.CountUsers(ctx)
	if err != nil || n > 0 {
		return "", err
	}
	generated := ""
	if password == "" {
		p, err := secret.RandomBase62(20)
		if err != nil {
			return "", err
		}
		// A random base62 string may lack a letter or a digit, which the password rule requires.
		password, generated = p+"9a", p+"9a"
	}
	_, err = s.create(ctx, RegisterInput{Username: "root", Password: password}, model.RoleRoot, "default", 0, false)
	if ae, ok := apperr.As(err); ok && ae.Code == "username_taken" {
		return "", nil // another node created it first
	}
	return generated, err
}

// View is a user as the API shows it, with the live balance.
func (s *Service) View(ctx context.Context, u *model.User) *model.User {
	out := *u
	if s.balances != nil {
		if b, err := s.balances.UserBalance(ctx, u.ID); err == nil {
			out.Quota = b
		}
	}
	return &out
}

package account

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/audit"
	"tollgate/service/secret"
)

// ExternalSignup is a first sign-in with an external account (service/oauth) when sign-up is open.
type ExternalSignup struct {
	Username string // wanted name (the provider's login or e-mail's local part); made valid and unique
	Email    string // a verified e-mail from the provider, or ""
	AffCode  string // the inviter's code carried through the sign-in (optional)
}

var notUsername = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// RegisterExternal creates a user without a password for an external account: the same rules as Register
// (sign-up open, per-IP sign-up limit, invite code, new-user gift once, invite welcome), but the name is made
// up from the provider's and a taken one gets a numeric suffix.
func (s *Service) RegisterExternal(ctx context.Context, in ExternalSignup, ip string) (*model.User, error) {
	st := s.settings.Get()
	if !st.RegistrationOpen {
		return nil, apperr.New(http.StatusForbidden, "registration_closed")
	}
	release, err := s.signupSlot(ctx, ip, st.SignupRateLimit)
	if err != nil {
		return nil, err
	}
	var inviter int64
	if s.invites != nil && in.AffCode != "" {
		if inviter, err = s.invites.Inviter(ctx, in.AffCode); err != nil {
			inviter = 0 // a stale code in a sign-in link does not block the sign-in
		}
	}
	if in.Email != "" && !emailRE.MatchString(in.Email) {
		in.Email = ""
	}
	if st.EmailVerification && in.Email == "" {
		// The site pays its gift to verified addresses only: a provider that vouches for none cannot open an
		// account here (the person signs up with an e-mail, then links the provider).
		release()
		return nil, apperr.New(http.StatusForbidden, "oauth_email_required")
	}
	group := st.DefaultGroup
	if _, ok := s.groups.Get(group); !ok {
		group = "default"
	}
	base := strings.Trim(notUsername.ReplaceAllString(in.Username, "_"), "_.-")
	if len(base) > 24 {
		base = base[:24]
	}
	for len(base) < 3 {
		base += "_"
	}
	var u *model.User
	for attempt := 0; attempt < 6; attempt++ {
		name := base
		if attempt > 0 {
			suffix, err := secret.RandomBase62(6)
			if err != nil {
				release()
				return nil, err
			}
			name = base + "-" + strings.ToLower(suffix)
		}
		// An empty password hash matches no password: this user signs in through the provider until they set one.
		cand := &model.User{Username: name, Email: in.Email, Role: model.RoleUser, Group: group,
			Status: model.StatusEnabled, InviterID: inviter}
		err := s.store.CreateUser(ctx, cand)
		if errors.Is(err, model.ErrDuplicate) {
			continue
		}
		if err != nil {
			release()
			return nil, fmt.Errorf("create user: %w", err)
		}
		u = cand
		break
	}
	if u == nil {
		release()
		return nil, apperr.New(http.StatusConflict, "username_taken")
	}
	actor := audit.Actor{ID: u.ID, Name: u.Username, IP: ip}
	s.audit.Record(ctx, actor, "user.register", u.Username, map[string]string{"via": "oauth"})
	if err := s.welcome(ctx, u, actor); err != nil {
		return nil, err
	}
	return u, nil
}

// OpenExternal opens a session for u after an external provider vouched for them (service/oauth), with the
// same checks and audit as a password sign-in. Callers decide about a second factor before calling it.
func (s *Service) OpenExternal(ctx context.Context, u *model.User, provider, ip string) (*Session, error) {
	if u.Status != model.StatusEnabled {
		return nil, apperr.New(http.StatusForbidden, "user_disabled")
	}
	if NeedsSecondFactor(u) {
		// A provider is a first factor like a password: the session opens after the code
		// (POST /api/auth/login/totp with this ticket).
		t, err := s.SecondFactorTicket(ctx, u)
		if err != nil {
			return nil, err
		}
		return &Session{Ticket: t}, nil
	}
	s.audit.Record(ctx, audit.Actor{ID: u.ID, Name: u.Username, IP: ip}, "user.login", u.Username, map[string]string{"via": provider})
	return s.open(ctx, u, ip, "")
}

// HasPassword reports whether the user can sign in with a password (users made by an external sign-in
// have none until they set one).
func (s *Service) HasPassword(ctx context.Context, userID int64) (bool, error) {
	u, err := s.store.UserByID(ctx, userID)
	if err != nil {
		return false, err
	}
	return u.PasswordHash != "", nil
}

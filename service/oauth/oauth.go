// Package oauth signs users in with external accounts: GitHub (OAuth 2) and any OpenID Connect provider found by
// discovery. Every flow uses PKCE (S256) and a single-use state kept in the shared cache (so the callback may
// land on another node and a replayed state is refused); OIDC flows also carry a nonce, and the ID token's
// signature is verified against the provider's JWKS, with its issuer, audience and expiry (go-oidc).
package oauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"tollgate/model"
	"tollgate/service/account"
	"tollgate/service/apperr"
	"tollgate/service/audit"
	"tollgate/service/cache"
	"tollgate/service/setting"
)

// Provider types, as GET /api/status lists them.
const (
	TypeGitHub = "github"
	TypeOIDC   = "oidc"
)

// Flow modes: a sign-in, or linking a provider to the signed-in user from the profile.
const (
	ModeSignIn = "signin"
	ModeLink   = "link"
)

// stateTTL is how long a started flow may take at the provider.
const stateTTL = 10 * time.Minute

// exchangeTimeout bounds each call to a provider (token, user info, discovery).
const exchangeTimeout = 15 * time.Second

// Accounts is what sign-in needs of the account book (implemented by service/account).
type Accounts interface {
	RegisterExternal(ctx context.Context, in account.ExternalSignup, ip string) (*model.User, error)
	OpenExternal(ctx context.Context, u *model.User, provider, ip string) (*account.Session, error)
	HasPassword(ctx context.Context, userID int64) (bool, error)
}

// Info is an enabled provider as the login page shows it.
type Info struct {
	Slug string `json:"slug"`
	Name string `json:"name"`
	Type string `json:"type"`
}

// Profile is what a provider vouches for about the signed-in account.
type Profile struct {
	Subject       string // stable id at the provider
	Email         string
	EmailVerified bool
	Username      string // preferred login name, a hint for a new account's username
}

// provider is one configured provider.
type provider interface {
	info() Info
	// authURL builds the authorization request.
	authURL(ctx context.Context, redirectURI, state, nonce, verifier string) (string, error)
	// exchange trades the code for tokens and reads the account's profile, verifying what it must.
	exchange(ctx context.Context, redirectURI, code, verifier, nonce string) (*Profile, error)
}

// Service runs the flows.
type Service struct {
	store    *model.Store
	cache    cache.Cache
	settings *setting.Service
	accounts Accounts
	audit    *audit.Log
	client   *http.Client
	now      func() time.Time

	mu        sync.Mutex
	discovery map[string]*discovered // issuer → provider metadata and keys (refreshed hourly)
}

// New builds the service. client is used for every call to a provider (nil: a client with a 15 s timeout);
// now is the clock ID tokens are checked against (nil: time.Now).
func New(store *model.Store, c cache.Cache, settings *setting.Service, accounts Accounts, a *audit.Log,
	client *http.Client, now func() time.Time) *Service {
	if client == nil {
		client = &http.Client{Timeout: exchangeTimeout}
	}
	if now == nil {
		now = time.Now
	}
	return &Service{store: store, cache: c, settings: settings, accounts: accounts, audit: a, client: client, now: now,
		discovery: map[string]*discovered{}}
}

// Enabled lists the enabled providers (GitHub first, then OIDC providers in their configured order).
func (s *Service) Enabled() []Info {
	out := []Info{}
	for _, p := range s.providers() {
		out = append(out, p.info())
	}
	return out
}

func (s *Service) providers() []provider {
	o := s.settings.Get().OAuth
	var out []provider
	if o.GitHub.Enabled {
		out = append(out, &github{cfg: o.GitHub, client: s.client})
	}
	for _, p := range o.OIDC {
		if p.Enabled {
			out = append(out, &oidcProvider{cfg: p, svc: s})
		}
	}
	return out
}

func (s *Service) provider(slug string) (provider, error) {
	for _, p := range s.providers() {
		if p.info().Slug == slug {
			return p, nil
		}
	}
	return nil, apperr.New(http.StatusNotFound, CodeUnknownProvider)
}

// Error codes of the flow; the callback redirects to /login?error=<code> (or the profile for a link).
const (
	CodeUnknownProvider = "oauth_provider_unknown"
	CodeInvalidState    = "oauth_invalid_state"
	CodeDenied          = "oauth_denied"
	CodeFailed          = "oauth_failed"
	CodeEmailExists     = "oauth_email_exists"
	CodeIdentityTaken   = "oauth_identity_taken"
	CodeLastSignIn      = "oauth_last_sign_in"
)

// flow is what a started flow keeps in the cache until its callback.
type flow struct {
	Provider    string `json:"p"`
	Mode        string `json:"m"`
	UserID      int64  `json:"u,omitempty"`
	Nonce       string `json:"n"`
	Verifier    string `json:"v"`
	RedirectURI string `json:"r"`
	Binding     string `json:"b"` // SHA-256 of the browser binding cookie
	AffCode     string `json:"a,omitempty"`
}

// Started is a flow ready to send the browser to the provider.
type Started struct {
	URL string
	// Binding goes into a short-lived cookie: the callback must come from the browser that started the flow
	// (otherwise an attacker could have a victim complete the attacker's sign-in).
	Binding string
}

// StartInput starts a flow.
type StartInput struct {
	Provider    string
	Mode        string
	UserID      int64  // ModeLink: the signed-in user
	RedirectURI string // the callback URL, from the public base URL
	AffCode     string // ModeSignIn: an invite code for a new account
}

func random(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func stateKey(state string) string { return "oauth:state:" + sha(state) }
func usedKey(state string) string  { return "oauth:used:" + sha(state) }

// Start begins a flow: it stores the state with the PKCE verifier and nonce and returns the provider's URL.
func (s *Service) Start(ctx context.Context, in StartInput) (*Started, error) {
	p, err := s.provider(in.Provider)
	if err != nil {
		return nil, err
	}
	if len(in.AffCode) > 32 {
		in.AffCode = ""
	}
	var vals [3]string
	for i := range vals {
		if vals[i], err = random(32); err != nil {
			return nil, err
		}
	}
	state, nonce, binding := vals[0], vals[1], vals[2]
	f := flow{Provider: in.Provider, Mode: in.Mode, UserID: in.UserID, Nonce: nonce, Verifier: oauth2.GenerateVerifier(),
		RedirectURI: in.RedirectURI, Binding: sha(binding), AffCode: in.AffCode}
	u, err := p.authURL(ctx, f.RedirectURI, state, nonce, f.Verifier)
	if err != nil {
		slog.Warn("oauth start", "provider", in.Provider, "err", err)
		return nil, apperr.New(http.StatusBadGateway, CodeFailed)
	}
	b, _ := json.Marshal(f)
	if err := s.cache.Set(ctx, stateKey(state), b, stateTTL); err != nil {
		return nil, fmt.Errorf("store oauth state: %w", err)
	}
	return &Started{URL: u, Binding: binding}, nil
}

// CallbackInput is the provider's redirect back to us.
type CallbackInput struct {
	Provider string
	State    string
	Code     string
	Error    string // the provider's error parameter (e.g. access_denied)
	Binding  string // the binding cookie
	IP       string
}

// Result is a finished flow: a session (sign-in) or a linked identity (link).
type Result struct {
	Mode     string
	Session  *account.Session
	Identity *model.UserIdentity
}

// FlowError is a failed callback: Mode says where the browser goes back to (the login page or the profile).
type FlowError struct {
	Mode string
	Code string
	Err  error
}

func (e *FlowError) Error() string {
	if e.Err != nil {
		return e.Code + ": " + e.Err.Error()
	}
	return e.Code
}

func (e *FlowError) Unwrap() error { return e.Err }

// Callback finishes a flow. Every failure is a *FlowError.
func (s *Service) Callback(ctx context.Context, in CallbackInput) (*Result, error) {
	f, err := s.takeState(ctx, in.State)
	if err != nil {
		return nil, &FlowError{Mode: ModeSignIn, Code: CodeInvalidState, Err: err}
	}
	fail := func(code string, err error) (*Result, error) {
		return nil, &FlowError{Mode: f.Mode, Code: code, Err: err}
	}
	if f.Provider != in.Provider || in.Binding == "" || sha(in.Binding) != f.Binding {
		return fail(CodeInvalidState, errors.New("state of another provider or another browser"))
	}
	if in.Error != "" {
		return fail(CodeDenied, errors.New(in.Error))
	}
	if in.Code == "" {
		return fail(CodeFailed, errors.New("no code"))
	}
	p, err := s.provider(f.Provider)
	if err != nil {
		return fail(CodeUnknownProvider, err)
	}
	xctx, cancel := context.WithTimeout(ctx, 2*exchangeTimeout)
	defer cancel()
	prof, err := p.exchange(xctx, f.RedirectURI, in.Code, f.Verifier, f.Nonce)
	if err != nil {
		slog.Warn("oauth exchange refused", "provider", f.Provider, "err", err)
		return fail(CodeFailed, err)
	}
	if f.Mode == ModeLink {
		id, err := s.link(ctx, f, prof, in.IP)
		if err != nil {
			return fail(codeOf(err), err)
		}
		return &Result{Mode: ModeLink, Identity: id}, nil
	}
	u, err := s.resolve(ctx, f, prof, in.IP)
	if err != nil {
		return fail(codeOf(err), err)
	}
	sess, err := s.finishSignIn(ctx, u, f.Provider, in.IP)
	if err != nil {
		return fail(codeOf(err), err)
	}
	return &Result{Mode: ModeSignIn, Session: sess}, nil
}

// finishSignIn opens the session of a user the provider vouched for.
//
// A user with a second factor on does not skip it because they came through a provider: OpenExternal then
// returns a Session holding only a Ticket, and the callback sends the browser to the console's code step
// (/login?ticket=…, completed by POST /api/auth/login/totp), the same step a password sign-in gets.
func (s *Service) finishSignIn(ctx context.Context, u *model.User, provider, ip string) (*account.Session, error) {
	return s.accounts.OpenExternal(ctx, u, provider, ip)
}

func codeOf(err error) string {
	if ae, ok := apperr.As(err); ok {
		return ae.Code
	}
	return CodeFailed
}

// takeState loads a flow's state and makes sure it is used once: the first caller to mark it used wins (SETNX
// in the shared cache), so a replayed callback is refused on every node, even one racing the first.
func (s *Service) takeState(ctx context.Context, state string) (*flow, error) {
	if state == "" || len(state) > 128 {
		return nil, errors.New("no state")
	}
	raw, ok, err := s.cache.Get(ctx, stateKey(state))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errors.New("unknown or expired state")
	}
	first, err := s.cache.SetNX(ctx, usedKey(state), []byte("1"), stateTTL)
	if err != nil {
		return nil, err
	}
	if !first {
		return nil, errors.New("state already used")
	}
	_ = s.cache.Del(ctx, stateKey(state))
	var f flow
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, err
	}
	return &f, nil
}

// resolve finds or creates the user a sign-in is for: the linked identity's user; else a new account when
// sign-up is open. An existing account with the provider's verified e-mail is never linked silently: its owner
// signs in and links from the profile.
func (s *Service) resolve(ctx context.Context, f *flow, p *Profile, ip string) (*model.User, error) {
	id, err := s.store.IdentityBySubject(ctx, f.Provider, p.Subject)
	if err == nil {
		u, err := s.store.UserByID(ctx, id.UserID)
		if errors.Is(err, model.ErrNotFound) {
			return nil, apperr.New(http.StatusUnauthorized, CodeFailed)
		}
		return u, err
	}
	if !errors.Is(err, model.ErrNotFound) {
		return nil, err
	}
	if !s.settings.Get().RegistrationOpen {
		return nil, apperr.New(http.StatusForbidden, "registration_closed")
	}
	email := ""
	if p.EmailVerified {
		email = p.Email
	}
	if email != "" {
		same, err := s.store.UsersByEmail(ctx, email, 1)
		if err != nil {
			return nil, err
		}
		if len(same) > 0 {
			return nil, apperr.New(http.StatusConflict, CodeEmailExists)
		}
	}
	hint := p.Username
	if hint == "" && email != "" {
		hint = email[:strings.IndexByte(email, '@')]
	}
	if hint == "" {
		hint = f.Provider + "-user"
	}
	u, err := s.accounts.RegisterExternal(ctx, account.ExternalSignup{Username: hint, Email: email, AffCode: f.AffCode}, ip)
	if err != nil {
		return nil, err
	}
	if err := s.store.CreateIdentity(ctx, &model.UserIdentity{UserID: u.ID, Provider: f.Provider, Subject: p.Subject, Email: email}); err != nil {
		// Two first sign-ins of one account at once: the other made the link; use its user.
		if errors.Is(err, model.ErrDuplicate) {
			if other, err2 := s.store.IdentityBySubject(ctx, f.Provider, p.Subject); err2 == nil {
				return s.store.UserByID(ctx, other.UserID)
			}
		}
		return nil, fmt.Errorf("link new user: %w", err)
	}
	return u, nil
}

// link attaches the provider's account to the signed-in user who started the flow (their consent).
func (s *Service) link(ctx context.Context, f *flow, p *Profile, ip string) (*model.UserIdentity, error) {
	email := ""
	if p.EmailVerified {
		email = p.Email
	}
	id := &model.UserIdentity{UserID: f.UserID, Provider: f.Provider, Subject: p.Subject, Email: email}
	if err := s.store.CreateIdentity(ctx, id); errors.Is(err, model.ErrDuplicate) {
		old, err := s.store.IdentityBySubject(ctx, f.Provider, p.Subject)
		if err == nil && old.UserID == f.UserID {
			return old, nil // linked already
		}
		return nil, apperr.New(http.StatusConflict, CodeIdentityTaken)
	} else if err != nil {
		return nil, err
	}
	s.audit.Record(ctx, audit.Actor{ID: f.UserID, IP: ip}, "user.identity_link", f.Provider, map[string]string{"subject": p.Subject})
	return id, nil
}

// Identities lists a user's linked accounts and whether they have a password.
func (s *Service) Identities(ctx context.Context, userID int64) ([]model.UserIdentity, bool, error) {
	ids, err := s.store.IdentitiesOf(ctx, userID)
	if err != nil {
		return nil, false, err
	}
	if ids == nil {
		ids = []model.UserIdentity{}
	}
	has, err := s.accounts.HasPassword(ctx, userID)
	return ids, has, err
}

// Unlink removes one of the user's linked accounts, unless it is the last way a passwordless user signs in.
func (s *Service) Unlink(ctx context.Context, userID, id int64, ip string) error {
	err := s.store.DeleteIdentity(ctx, userID, id)
	switch {
	case errors.Is(err, model.ErrNotFound):
		return apperr.New(http.StatusNotFound, "identity_not_found")
	case errors.Is(err, model.ErrLastSignIn):
		return apperr.New(http.StatusConflict, CodeLastSignIn)
	case err != nil:
		return err
	}
	s.audit.Record(ctx, audit.Actor{ID: userID, IP: ip}, "user.identity_unlink", fmt.Sprint(id), nil)
	return nil
}

// Package token manages users' sk- API keys. Keys are stored encrypted and found by keyed hash; the relay
// authenticates them from a per-node cache that the bus invalidates on every write.
package token

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/audit"
	"tollgate/service/bus"
	"tollgate/service/cache"
	"tollgate/service/ledger"
	"tollgate/service/pricing"
	"tollgate/service/routing"
	"tollgate/service/secret"
)

// Topic is the bus topic of key changes (payload: key hash; empty: all).
const Topic = "token"

// KeyLen is the number of base62 characters after "sk-".
const KeyLen = 48

// Quotas is the live money book as the key service needs it (implemented by service/ledger).
type Quotas interface {
	TokenRemain(ctx context.Context, tokenID int64) (int64, error)
	SetToken(ctx context.Context, tokenID int64, remain int64) error
	WindowSpent(ctx context.Context, tokenID int64, w ledger.Window) (int64, bool, error)
	ResetWindows(ctx context.Context, tokenID int64, ws ...ledger.Window) error
}

// GroupPolicy says which groups a user may put on a key (implemented by service/group).
type GroupPolicy interface {
	MayUse(u *model.User, name string) bool
}

// MaxFallbackGroups bounds a key's fallback groups.
const MaxFallbackGroups = 5

// Owners finds a key's owner from the per-node user cache (implemented by service/account).
type Owners interface {
	Cached(ctx context.Context, id int64) (*model.User, error)
}

// Service is the key book.
type Service struct {
	store  *model.Store
	bus    bus.Bus
	keys   *secret.Keyring
	groups GroupPolicy
	quotas Quotas
	owners Owners
	audit  *audit.Log
	byHash *cache.Local[string, *Cached]
	hashes keyHashes // clear key -> lookup hash, for keys found
	// Clock places spend in its UTC day and month (nil: time.Now); the relay's Clock in tests.
	Clock func() time.Time
	// Logs is this node's usage log writer (nil: none). A budget switched on reloads what the key spent from
	// SQL, so what the writer still holds (settled calls not yet written) is written first.
	Logs interface{ Flush() }
}

// Cached is a key as the relay sees it: the row plus its parsed IP allowlist.
type Cached struct {
	model.Token
	Nets []*net.IPNet
}

// New builds the key service.
func New(store *model.Store, b bus.Bus, keys *secret.Keyring, groups GroupPolicy, quotas Quotas, owners Owners, a *audit.Log) *Service {
	s := &Service{store: store, bus: b, keys: keys, groups: groups, quotas: quotas, owners: owners, audit: a}
	s.byHash = cache.NewLocal(60*time.Second, 200_000, func(ctx context.Context, hash string) (*Cached, error) {
		t, err := store.TokenByHash(ctx, hash)
		if err != nil {
			return nil, err
		}
		nets, _ := parseIPs(t.AllowedIPs.V)
		return &Cached{Token: *t, Nets: nets}, nil
	})
	b.Subscribe(Topic, func(m bus.Message) {
		if m.Payload == "" {
			s.byHash.Purge()
		} else {
			s.byHash.Invalidate(m.Payload)
		}
	})
	return s
}

// Lookup finds a key by its clear text (hot path: served from the per-node cache).
func (s *Service) Lookup(ctx context.Context, key string) (*Cached, error) {
	if !strings.HasPrefix(key, "sk-") || len(key) != 3+KeyLen {
		return nil, model.ErrNotFound
	}
	if h, ok := s.hashes.get(key); ok {
		t, err := s.byHash.Get(ctx, h)
		if errors.Is(err, model.ErrNotFound) {
			s.hashes.forget(key)
		}
		return t, err
	}
	h := s.keys.Hash(key)
	t, err := s.byHash.Get(ctx, h)
	if err == nil {
		s.hashes.put(key, h)
	}
	return t, err
}

func (s *Service) changed(ctx context.Context, hash string) {
	s.byHash.Invalidate(hash)
	_ = s.bus.Publish(ctx, Topic, hash)
}

// Input is the editable part of a key; nil fields stay unchanged on update.
type Input struct {
	Name        *string      `json:"name"`
	RemainQuota *int64       `json:"remain_quota"`
	Unlimited   *bool        `json:"unlimited"`
	ExpiresAt   OptionalTime `json:"expires_at"`
	Models      *[]string    `json:"models"`
	AllowedIPs  *[]string    `json:"allowed_ips"`
	Group       *string      `json:"group"`
	// FallbackGroups are tried in order when every route of the key's group is unavailable.
	FallbackGroups *[]string `json:"fallback_groups"`
	RPM            *int      `json:"rpm"`
	Concurrency    *int      `json:"concurrency"`
	Status         *string   `json:"status"`
	// Spend limits in units per UTC day / month and tokens per minute (0 = none).
	DailyBudget   *int64 `json:"daily_budget"`
	MonthlyBudget *int64 `json:"monthly_budget"`
	TPM           *int64 `json:"tpm"`
	// Routing is the key's routing preferences (over its owner's profile; a request's override them).
	Routing *model.RoutePrefs `json:"routing"`
}

// OptionalTime tells an absent JSON field (Set false: leave as is) from null (Set true, V nil: clear).
// A **time.Time cannot: encoding/json turns null into a nil outer pointer, the same as absent.
type OptionalTime struct {
	Set bool
	V   *time.Time
}

// UnmarshalJSON implements json.Unmarshaler; a value that is not an RFC 3339 string names the field.
func (o *OptionalTime) UnmarshalJSON(b []byte) error {
	o.Set, o.V = true, nil
	if string(b) == "null" {
		return nil
	}
	var t time.Time
	if err := json.Unmarshal(b, &t); err != nil {
		return &json.UnmarshalTypeError{Value: string(b), Type: reflect.TypeOf(t)} // the decoder adds the field
	}
	o.V = &t
	return nil
}

func parseIPs(list []string) ([]*net.IPNet, error) {
	var out []*net.IPNet
	for _, s := range list {
		s = strings.TrimSpace(s)
		if !strings.Contains(s, "/") {
			ip := net.ParseIP(s)
			if ip == nil {
				return nil, fmt.Errorf("%q is not an IP or CIDR", s)
			}
			bits := 32
			if ip.To4() == nil {
				bits = 128
			}
			s = fmt.Sprintf("%s/%d", s, bits)
		}
		_, n, err := net.ParseCIDR(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not an IP or CIDR", s)
		}
		out = append(out, n)
	}
	return out, nil
}

func (s *Service) apply(t *model.Token, owner *model.User, in Input, now time.Time) error {
	if in.Name != nil {
		n := strings.TrimSpace(*in.Name)
		if n == "" || len(n) > 64 {
			return apperr.Field("name", "1-64 characters")
		}
		t.Name = n
	}
	if in.RemainQuota != nil {
		if *in.RemainQuota < 0 || *in.RemainQuota > 1e15 {
			return apperr.Field("remain_quota", "must be between 0 and 1e15")
		}
		t.RemainQuota = *in.RemainQuota
	}
	if in.Unlimited != nil {
		t.Unlimited = *in.Unlimited
	}
	if in.ExpiresAt.Set {
		if e := in.ExpiresAt.V; e != nil && !e.After(now) {
			return apperr.Field("expires_at", "must be in the future")
		}
		t.ExpiresAt = in.ExpiresAt.V
	}
	if in.Models != nil {
		if len(*in.Models) > 200 {
			return apperr.Field("models", "at most 200 models")
		}
		for _, m := range *in.Models {
			if m == "" || len(m) > 128 {
				return apperr.Field("models", "each model 1-128 characters")
			}
		}
		t.Models.V = *in.Models
	}
	if in.AllowedIPs != nil {
		if len(*in.AllowedIPs) > 100 {
			return apperr.Field("allowed_ips", "at most 100 entries")
		}
		if _, err := parseIPs(*in.AllowedIPs); err != nil {
			return apperr.Field("allowed_ips", err.Error())
		}
		t.AllowedIPs.V = *in.AllowedIPs
	}
	if in.Group != nil {
		if !s.groups.MayUse(owner, *in.Group) {
			return apperr.New(http.StatusForbidden, "group_not_allowed", *in.Group)
		}
		t.Group = *in.Group
	}
	if in.FallbackGroups != nil {
		fb := *in.FallbackGroups
		if len(fb) > MaxFallbackGroups {
			return apperr.Field("fallback_groups", fmt.Sprintf("at most %d groups", MaxFallbackGroups))
		}
		for i, g := range fb {
			if g == "" || slices.Contains(fb[:i], g) {
				return apperr.Field("fallback_groups", "group names, each once")
			}
			if !s.groups.MayUse(owner, g) {
				return apperr.New(http.StatusForbidden, "group_not_allowed", g)
			}
		}
		t.FallbackGroups.V = slices.Clone(fb)
	}
	if in.RPM != nil {
		if *in.RPM < 0 || *in.RPM > 1_000_000 {
			return apperr.Field("rpm", "must be between 0 and 1000000")
		}
		t.RPM = *in.RPM
	}
	if in.Concurrency != nil {
		if *in.Concurrency < 0 || *in.Concurrency > 10_000 {
			return apperr.Field("concurrency", "must be between 0 and 10000")
		}
		t.Concurrency = *in.Concurrency
	}
	for _, b := range []struct {
		name string
		in   *int64
		to   *int64
		max  int64
	}{
		{"daily_budget", in.DailyBudget, &t.DailyBudget, pricing.MaxCost},
		{"monthly_budget", in.MonthlyBudget, &t.MonthlyBudget, pricing.MaxCost},
		{"tpm", in.TPM, &t.TPM, 1_000_000_000},
	} {
		if b.in == nil {
			continue
		}
		if *b.in < 0 || *b.in > b.max {
			return apperr.Field(b.name, fmt.Sprintf("must be between 0 and %d", b.max))
		}
		*b.to = *b.in
	}
	if in.Status != nil {
		if *in.Status != model.StatusEnabled && *in.Status != model.StatusDisabled {
			return apperr.Field("status", `must be "enabled" or "disabled"`)
		}
		if *in.Status == model.StatusEnabled && t.AdminDisabled {
			return apperr.New(http.StatusForbidden, "key_admin_disabled")
		}
		t.Status = *in.Status
	}
	if in.Routing != nil {
		if err := routing.Check(*in.Routing); err != nil {
			return err
		}
		t.Routing.V = *in.Routing
	}
	return nil
}

// Create makes a new key for owner and returns it with the key in clear (the only time besides Reveal).
func (s *Service) Create(ctx context.Context, owner *model.User, in Input) (*View, error) {
	if in.Name == nil {
		return nil, apperr.Field("name", "required")
	}
	t := &model.Token{UserID: owner.ID, Status: model.StatusEnabled, Unlimited: in.RemainQuota == nil}
	if err := s.apply(t, owner, in, time.Now()); err != nil {
		return nil, err
	}
	rnd, err := secret.RandomBase62(KeyLen)
	if err != nil {
		return nil, err
	}
	key := "sk-" + rnd
	if t.KeyCipher, err = s.keys.Encrypt(key); err != nil {
		return nil, err
	}
	t.KeyHash = s.keys.Hash(key)
	t.KeyHint = key[:7] + key[len(key)-4:]
	if err := s.store.CreateToken(ctx, t); err != nil {
		return nil, fmt.Errorf("create token: %w", err)
	}
	v := s.view(ctx, t)
	v.Key = key
	return v, nil
}

// View is a key as the API shows it.
type View struct {
	model.Token
	Key string `json:"key"`
	// GroupRevoked: the key names a group its owner may no longer use; the relay refuses it (group_revoked).
	GroupRevoked bool `json:"group_revoked"`
	// SpentToday and SpentMonth are what the key was charged this UTC day and month (read-only).
	SpentToday int64 `json:"spent_today"`
	SpentMonth int64 `json:"spent_month"`
}

// GroupRevoked reports whether a key's own group is one its owner may no longer use: the admin moved the
// owner out of it, closed it or disabled it. A key without a group follows its owner's.
func (s *Service) GroupRevoked(t *model.Token, owner *model.User) bool {
	return t.Group != "" && !s.groups.MayUse(owner, t.Group)
}

func (s *Service) view(ctx context.Context, t *model.Token) *View {
	v := s.bare(ctx, t)
	now := s.now()
	v.SpentToday = s.spent(ctx, t.ID, ledger.DayWindow(now, t.DailyBudget))
	v.SpentMonth = s.spent(ctx, t.ID, ledger.MonthWindow(now, t.MonthlyBudget))
	return v
}

// bare is a key's view without what it spent.
func (s *Service) bare(ctx context.Context, t *model.Token) *View {
	v := &View{Token: *t, Key: t.KeyHint[:7] + "****" + t.KeyHint[7:]}
	if t.Group != "" && s.owners != nil {
		if u, err := s.owners.Cached(ctx, t.UserID); err == nil {
			v.GroupRevoked = s.GroupRevoked(t, u)
		}
	}
	if !t.Unlimited && s.quotas != nil {
		if r, err := s.quotas.TokenRemain(ctx, t.ID); err == nil {
			v.RemainQuota = r
		}
	}
	if v.Models.V == nil {
		v.Models.V = []string{}
	}
	if v.AllowedIPs.V == nil {
		v.AllowedIPs.V = []string{}
	}
	return v
}

func (s *Service) now() time.Time {
	if s.Clock != nil {
		return s.Clock()
	}
	return time.Now()
}

// spent is what a key was charged in w: from the live window when its budget (w.Limit > 0) keeps it live (that
// includes settlements the log writer has not written yet), else from SQL: a window left live by a budget
// since switched off has missed what was spent after. 0 when neither answers.
func (s *Service) spent(ctx context.Context, tokenID int64, w ledger.Window) int64 {
	if v, ok := s.live(ctx, tokenID, w); ok {
		return v
	}
	v, _ := s.store.LoadSpent(ctx, tokenID, w.Start, w.End)
	return v
}

// live is what a key was charged in w from its live window, when its budget (w.Limit > 0) keeps one.
func (s *Service) live(ctx context.Context, tokenID int64, w ledger.Window) (int64, bool) {
	if s.quotas == nil || w.Limit <= 0 {
		return 0, false
	}
	v, ok, err := s.quotas.WindowSpent(ctx, tokenID, w)
	return v, err == nil && ok
}

// spentPage fills SpentToday and SpentMonth of a page of keys as spent does for one key, but with one grouped
// SQL query per period for all the keys that no live window answers (not two queries per key).
func (s *Service) spentPage(ctx context.Context, vs []*View) error {
	now := s.now()
	periods := []struct {
		window func(now time.Time, limit int64) ledger.Window
		limit  func(t *model.Token) int64
		field  func(v *View) *int64
	}{
		{ledger.DayWindow, func(t *model.Token) int64 { return t.DailyBudget }, func(v *View) *int64 { return &v.SpentToday }},
		{ledger.MonthWindow, func(t *model.Token) int64 { return t.MonthlyBudget }, func(v *View) *int64 { return &v.SpentMonth }},
	}
	for _, p := range periods {
		var ask []int64
		for _, v := range vs {
			if n, ok := s.live(ctx, v.ID, p.window(now, p.limit(&v.Token))); ok {
				*p.field(v) = n
			} else {
				ask = append(ask, v.ID)
			}
		}
		if len(ask) == 0 {
			continue
		}
		w := p.window(now, 0) // the period's bounds do not depend on the limit
		sums, err := s.store.SpentByTokens(ctx, ask, w.Start, w.End)
		if err != nil {
			return fmt.Errorf("keys' spend: %w", err)
		}
		for _, v := range vs {
			if n, ok := sums[v.ID]; ok { // only asked keys are in sums: a live answer above stays
				*p.field(v) = n
			}
		}
	}
	return nil
}

// own loads a key that must belong to userID (0 = any owner, for admins). Someone else's key is "not found".
func (s *Service) own(ctx context.Context, id, userID int64) (*model.Token, error) {
	t, err := s.store.TokenByID(ctx, id)
	if errors.Is(err, model.ErrNotFound) || (err == nil && userID != 0 && t.UserID != userID) {
		return nil, apperr.New(http.StatusNotFound, "token_not_found")
	}
	return t, err
}

// List pages through keys (masked), with what each spent this day and month (spentPage).
func (s *Service) List(ctx context.Context, f model.TokenFilter, p model.Page) ([]*View, int64, error) {
	ts, n, err := s.store.ListTokens(ctx, f, p)
	if err != nil {
		return nil, 0, err
	}
	out := make([]*View, len(ts))
	for i := range ts {
		out[i] = s.bare(ctx, &ts[i])
	}
	if err := s.spentPage(ctx, out); err != nil {
		return nil, 0, err
	}
	return out, n, nil
}

// Get loads one key of userID (0 = any).
func (s *Service) Get(ctx context.Context, id, userID int64) (*View, error) {
	t, err := s.own(ctx, id, userID)
	if err != nil {
		return nil, err
	}
	return s.view(ctx, t), nil
}

// Update edits a key of owner; admins change other users' keys only through SetStatus.
func (s *Service) Update(ctx context.Context, owner *model.User, id int64, in Input) (*View, error) {
	t, err := s.own(ctx, id, owner.ID)
	if err != nil {
		return nil, err
	}
	daily, monthly := t.DailyBudget, t.MonthlyBudget
	if err := s.apply(t, owner, in, time.Now()); err != nil {
		return nil, err
	}
	if err := s.store.SaveToken(ctx, t); err != nil {
		return nil, err
	}
	if s.quotas != nil {
		// A budget switched on: nothing kept its window live while it was off, so the next request reloads
		// what was spent from SQL. A changed budget needs nothing: the limit travels with each request.
		now := s.now()
		var stale []ledger.Window
		if daily == 0 && t.DailyBudget > 0 {
			stale = append(stale, ledger.DayWindow(now, t.DailyBudget))
		}
		if monthly == 0 && t.MonthlyBudget > 0 {
			stale = append(stale, ledger.MonthWindow(now, t.MonthlyBudget))
		}
		if len(stale) > 0 && s.Logs != nil {
			s.Logs.Flush()
		}
		if err := s.quotas.ResetWindows(ctx, t.ID, stale...); err != nil {
			return nil, fmt.Errorf("reset spend windows: %w", err)
		}
	}
	if in.RemainQuota != nil && s.quotas != nil {
		if err := s.quotas.SetToken(ctx, t.ID, t.RemainQuota); err != nil {
			return nil, fmt.Errorf("set live key quota: %w", err)
		}
	}
	s.changed(ctx, t.KeyHash)
	return s.view(ctx, t), nil
}

// Delete removes a key of userID.
func (s *Service) Delete(ctx context.Context, id, userID int64) error {
	t, err := s.own(ctx, id, userID)
	if err != nil {
		return err
	}
	if err := s.store.DeleteToken(ctx, id, userID); err != nil {
		return err
	}
	s.changed(ctx, t.KeyHash)
	return nil
}

// Reveal decrypts a key for its owner.
func (s *Service) Reveal(ctx context.Context, id, userID int64) (string, error) {
	t, err := s.own(ctx, id, userID)
	if err != nil {
		return "", err
	}
	return s.keys.Decrypt(t.KeyCipher)
}

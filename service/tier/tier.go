// Package tier manages price tiers (a user's ratio on top of the group's) and serves them from a snapshot
// refreshed on every node by the bus.
package tier

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"

	"github.com/shopspring/decimal"

	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/audit"
	"tollgate/service/book"
	"tollgate/service/bus"
)

// Topic is the bus topic of tier changes.
const Topic = "tier"

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// maxRatio bounds a tier's ratio, like a group's.
var maxRatio = decimal.NewFromInt(1000)

// Service is the tier book.
type Service struct {
	store *model.Store
	bus   bus.Bus
	audit *audit.Log
	book  *book.Book[model.Tier]
	one   decimal.Decimal // the ratio of an unknown tier, built once so Ratio never allocates
}

// New builds the service; call Load before serving.
func New(store *model.Store, b bus.Bus, a *audit.Log) *Service {
	s := &Service{store: store, bus: b, audit: a, one: decimal.NewFromInt(1)}
	s.book = book.New("tiers", b, Topic, store.ListTiers, func(x *model.Tier) string { return x.Name })
	return s
}

// Load refreshes the snapshot from SQL.
func (s *Service) Load(ctx context.Context) error { return s.book.Load(ctx) }

// Get returns a tier from the snapshot.
func (s *Service) Get(name string) (model.Tier, bool) { return s.book.Get(name) }

// Exists reports whether a tier is in the snapshot.
func (s *Service) Exists(name string) bool {
	_, ok := s.Get(name)
	return ok
}

// Ratio returns the tier's price ratio, 1 for an empty or unknown name. It reads only the snapshot (no SQL,
// no allocation): the relay calls it on every request.
func (s *Service) Ratio(name string) decimal.Decimal {
	if t, ok := s.book.Get(name); ok {
		return t.Ratio
	}
	return s.one
}

// View is a tier as the admin API lists it: with the number of users in it.
type View struct {
	model.Tier
	Users int64 `json:"users"`
}

// List returns every tier, sorted by name, with its user count.
func (s *Service) List(ctx context.Context) ([]View, error) {
	ts, err := s.store.ListTiers(ctx)
	if err != nil {
		return nil, err
	}
	counts, err := s.store.CountUsersByTier(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]View, len(ts))
	for i, t := range ts {
		out[i] = View{Tier: t, Users: counts[t.Name]}
	}
	return out, nil
}

// Input is the editable part of a tier; nil fields are left unchanged on update.
type Input struct {
	Name        string  `json:"name"`
	Description *string `json:"description"`
	Ratio       *string `json:"ratio"`
}

func apply(t *model.Tier, in Input) error {
	if in.Description != nil {
		if len(*in.Description) > 255 {
			return apperr.Field("description", "at most 255 characters")
		}
		t.Description = *in.Description
	}
	if in.Ratio != nil {
		r, err := decimal.NewFromString(*in.Ratio)
		if err != nil || r.IsNegative() || r.GreaterThan(maxRatio) {
			return apperr.Field("ratio", "a decimal between 0 and 1000")
		}
		t.Ratio = r
	}
	return nil
}

// Create adds a tier; the ratio is required.
func (s *Service) Create(ctx context.Context, actor audit.Actor, in Input) (*model.Tier, error) {
	if !nameRE.MatchString(in.Name) {
		return nil, apperr.Field("name", "1-64 letters, digits, '_', '.', '-'")
	}
	if in.Ratio == nil {
		return nil, apperr.Field("ratio", "required, a decimal between 0 and 1000")
	}
	t := model.Tier{Name: in.Name}
	if err := apply(&t, in); err != nil {
		return nil, err
	}
	if err := s.store.CreateTier(ctx, &t); err != nil {
		if errors.Is(err, model.ErrDuplicate) {
			return nil, apperr.New(http.StatusConflict, "tier_exists")
		}
		return nil, fmt.Errorf("create tier %s: %w", in.Name, err)
	}
	s.changed(ctx, actor, "tier.create", t.Name, t)
	return &t, nil
}

// Update edits a tier's ratio or description.
func (s *Service) Update(ctx context.Context, actor audit.Actor, name string, in Input) (*model.Tier, error) {
	t, err := s.store.TierByName(ctx, name)
	if errors.Is(err, model.ErrNotFound) {
		return nil, apperr.New(http.StatusNotFound, "tier_not_found")
	} else if err != nil {
		return nil, err
	}
	before := *t
	if err := apply(t, in); err != nil {
		return nil, err
	}
	if err := s.store.UpdateTier(ctx, t); errors.Is(err, model.ErrNotFound) {
		return nil, apperr.New(http.StatusNotFound, "tier_not_found")
	} else if err != nil {
		return nil, fmt.Errorf("update tier %s: %w", name, err)
	}
	if t, err = s.store.TierByName(ctx, name); err != nil {
		return nil, err
	}
	s.changed(ctx, actor, "tier.update", name, map[string]any{"before": before, "after": *t})
	return t, nil
}

// Delete removes a tier no user is in; "default" stays.
func (s *Service) Delete(ctx context.Context, actor audit.Actor, name string) error {
	if name == model.DefaultTier {
		return apperr.New(http.StatusConflict, "tier_default")
	}
	switch err := s.store.DeleteUnusedTier(ctx, name); {
	case errors.Is(err, model.ErrNotFound):
		return apperr.New(http.StatusNotFound, "tier_not_found")
	case errors.Is(err, model.ErrTierInUse):
		return apperr.New(http.StatusConflict, "tier_in_use")
	case err != nil:
		return fmt.Errorf("delete tier %s: %w", name, err)
	}
	s.changed(ctx, actor, "tier.delete", name, map[string]string{"name": name})
	return nil
}

// changed audits a change, reloads this node's snapshot at once and tells the other nodes to reload theirs.
func (s *Service) changed(ctx context.Context, actor audit.Actor, action, target string, detail any) {
	s.audit.Record(ctx, actor, action, target, detail)
	_ = s.Load(ctx)
	_ = s.bus.Publish(ctx, Topic, "")
}

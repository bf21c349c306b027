// Package group manages logical groups (what a key buys and how it is routed) and serves them from a snapshot refreshed on every node by the bus.
package group

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/audit"
	"tollgate/service/book"
	"tollgate/service/bus"
)

// Topic is the bus topic of group changes.
const Topic = "group"

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// Service is the group book.
type Service struct {
	// ChannelExists checks route channel ids on create and update (nil: not checked); set before serving.
	ChannelExists func(int64) bool
	store         *model.Store
	bus           bus.Bus
	audit         *audit.Log
	book          *book.Book[model.Group]
}

// New builds the service; call Load before serving.
func New(store *model.Store, b bus.Bus, a *audit.Log) *Service {
	s := &Service{store: store, bus: b, audit: a}
	s.book = book.New("groups", b, Topic, store.ListGroups, func(x *model.Group) string { return x.Name })
	return s
}

// Load refreshes the snapshot from SQL.
func (s *Service) Load(ctx context.Context) error { return s.book.Load(ctx) }

// Get returns a group from the snapshot.
func (s *Service) Get(name string) (model.Group, bool) { return s.book.Get(name) }

// Ratio returns the group's price ratio (1 for an unknown group).
func (s *Service) Ratio(name string) decimal.Decimal {
	if g, ok := s.Get(name); ok {
		return g.Ratio
	}
	return decimal.NewFromInt(1)
}

// List returns every group, sorted by name.
func (s *Service) List(ctx context.Context) ([]model.Group, error) { return s.store.ListGroups(ctx) }

// Selectable returns the enabled groups user u may put on a key, sorted by name.
func (s *Service) Selectable(u *model.User) []model.Group {
	var out []model.Group
	for _, g := range *s.book.Current() {
		if mayUse(&g, u) {
			out = append(out, g)
		}
	}
	slices.SortFunc(out, func(a, b model.Group) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// MayUse reports whether user u may put group name on a key (and send requests through it): "" and the
// user's own group always; otherwise an enabled group open to all, to the user's tier or to the user.
func (s *Service) MayUse(u *model.User, name string) bool {
	if name == "" || name == u.Group {
		return true
	}
	g, ok := s.Get(name)
	return ok && mayUse(&g, u)
}

func mayUse(g *model.Group, u *model.User) bool {
	if g.Status == model.StatusDisabled {
		return false
	}
	a := g.Access.V
	return g.Name == u.Group || g.Selectable || a.All || slices.Contains(a.Tiers, u.Tier) || slices.Contains(a.Users, u.ID)
}

// Book is the current group book by name (read only; replaced whole on every change, so the pointer tells
// a new book from the last one).
func (s *Service) Book() *map[string]model.Group { return s.book.Current() }

// Create adds a group.
func (s *Service) Create(ctx context.Context, actor audit.Actor, in Input) (*model.Group, error) {
	if !nameRE.MatchString(in.Name) {
		return nil, apperr.Field("name", "1-64 letters, digits, '_', '.', '-'")
	}
	g := model.Group{Name: in.Name, Ratio: decimal.NewFromInt(1), Status: model.StatusEnabled}
	if err := apply(&g, in, s.ChannelExists); err != nil {
		return nil, err
	}
	if err := s.store.CreateGroup(ctx, &g); err != nil {
		if errors.Is(err, model.ErrDuplicate) {
			return nil, apperr.New(http.StatusConflict, "group_exists")
		}
		return nil, err
	}
	s.changed(ctx, actor, "group.create", g)
	return &g, nil
}

// Update edits a group.
func (s *Service) Update(ctx context.Context, actor audit.Actor, name string, in Input) (*model.Group, error) {
	g, err := s.store.GroupByName(ctx, name)
	if errors.Is(err, model.ErrNotFound) {
		return nil, apperr.New(http.StatusNotFound, "group_not_found")
	} else if err != nil {
		return nil, err
	}
	if err := apply(g, in, s.ChannelExists); err != nil {
		return nil, err
	}
	if err := s.store.SaveGroup(ctx, g); err != nil {
		return nil, err
	}
	s.changed(ctx, actor, "group.update", *g)
	return g, nil
}

// Delete removes a group that nothing uses; "default" stays.
func (s *Service) Delete(ctx context.Context, actor audit.Actor, name string) error {
	if name == "default" {
		return apperr.New(http.StatusConflict, "group_in_use")
	}
	nu, err := s.store.CountUsersInGroup(ctx, name)
	if err != nil {
		return err
	}
	nt, err := s.store.CountTokensInGroup(ctx, name)
	if err != nil {
		return err
	}
	if nu+nt > 0 {
		return apperr.New(http.StatusConflict, "group_in_use")
	}
	if err := s.store.DeleteGroup(ctx, name); errors.Is(err, model.ErrNotFound) {
		return apperr.New(http.StatusNotFound, "group_not_found")
	} else if err != nil {
		return err
	}
	s.changed(ctx, actor, "group.delete", map[string]string{"name": name})
	return nil
}

func (s *Service) changed(ctx context.Context, actor audit.Actor, action string, detail any) {
	target := ""
	if g, ok := detail.(model.Group); ok {
		target = g.Name
	}
	s.audit.Record(ctx, actor, action, target, detail)
	_ = s.Load(ctx)
	_ = s.bus.Publish(ctx, Topic, "")
}

package routing

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"slices"

	"tollgate/model"
	"tollgate/service/apperr"
)

// SimInput is a simulation request (POST /api/routing/simulate): route model for a user (the caller, or for an
// admin user_id), through a group (default: the user's) or one of the user's keys, with extra preferences.
type SimInput struct {
	Group       string            `json:"group"`
	Model       string            `json:"model"`
	Preferences *model.RoutePrefs `json:"preferences"`
	UserID      int64             `json:"user_id"`
	TokenID     int64             `json:"token_id"`
}

// SimResult is the ranking the relay would use now, with scores and reasons; nothing is sent upstream.
type SimResult struct {
	Strategy   string           `json:"strategy"`
	Groups     []string         `json:"groups"`
	Prefs      model.RoutePrefs `json:"preferences"`
	Candidates []Ranked         `json:"candidates"`
	DecisionUs int64            `json:"decision_us"`
}

// Simulator answers simulations from live data (the same snapshot, live numbers and tuning the relay uses).
type Simulator struct {
	Engine *Engine
	User   func(ctx context.Context, id int64) (*model.User, error)
	Token  func(ctx context.Context, id int64) (*model.Token, error)
	MayUse func(u *model.User, group string) bool
	// SellPer1M is the model's sell price (USD per 1M tokens, mean of input and output); ok false: unpriced.
	SellPer1M func(model string) (float64, bool)
	// ShowChannels says whether users may see channel names and ids (the show_channel_to_users setting);
	// without it a user's simulation names each candidate by its provider tag only.
	ShowChannels func() bool
}

// Simulate ranks the candidates for actor's request. A user simulates for themselves only, through groups
// they may use and their own keys; an admin for anyone, through any group.
func (s *Simulator) Simulate(ctx context.Context, actor *model.User, in SimInput) (*SimResult, error) {
	if in.Model == "" || len(in.Model) > 128 {
		return nil, apperr.Field("model", "a model name")
	}
	admin := actor.IsAdmin()
	who := actor
	if in.UserID != 0 && in.UserID != actor.ID {
		if !admin {
			return nil, apperr.New(http.StatusForbidden, "forbidden")
		}
		u, err := s.User(ctx, in.UserID)
		if err != nil {
			return nil, err
		}
		who = u
	}
	levels := []model.RoutePrefs{who.Routing.V}
	var groups []string
	switch {
	case in.TokenID != 0:
		t, err := s.Token(ctx, in.TokenID)
		if errors.Is(err, model.ErrNotFound) || err == nil && t.UserID != who.ID {
			return nil, apperr.New(http.StatusNotFound, "token_not_found")
		} else if err != nil {
			return nil, err
		}
		g := t.Group
		if g == "" {
			g = who.Group
		}
		groups = []string{g}
		for _, fb := range t.FallbackGroups.V {
			if fb != g && s.MayUse(who, fb) && !slices.Contains(groups, fb) {
				groups = append(groups, fb)
			}
		}
		levels = append(levels, t.Routing.V)
	case in.Group != "":
		if !admin && !s.MayUse(who, in.Group) {
			return nil, apperr.New(http.StatusForbidden, "forbidden")
		}
		groups = []string{in.Group}
	default:
		groups = []string{who.Group}
	}
	if in.Preferences != nil {
		if err := Check(*in.Preferences); err != nil {
			return nil, err
		}
		levels = append(levels, *in.Preferences)
	}
	rq := &Request{Model: in.Model, Intn: rand.IntN, Prefs: Merge(levels...), Tuning: s.Engine.Tuning(groups[0], in.Model), DryRun: true}
	if s.SellPer1M != nil {
		rq.SellPer1M, _ = s.SellPer1M(in.Model)
	}
	pool := s.Engine.Pool(groups, in.Model)
	plan := s.Engine.Select(pool, rq)
	ranked := s.Engine.Ranking(pool, plan, rq, true)
	if !admin && (s.ShowChannels == nil || !s.ShowChannels()) {
		for i := range ranked { // what users may see of channels: their provider, never the channel itself
			ranked[i].ChannelID, ranked[i].Name, ranked[i].Route = 0, ranked[i].Tag, ""
		}
	}
	return &SimResult{Strategy: plan.Strategy, Groups: groups, Prefs: rq.Prefs, Candidates: ranked, DecisionUs: plan.Took.Microseconds()}, nil
}

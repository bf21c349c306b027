package relay

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"tollgate/service/channel"
	"tollgate/service/pricing"
	"tollgate/service/routing"
	"tollgate/service/sticky"
)

// TierRatios gives a user tier's price ratio (implemented by service/tier).
type TierRatios interface {
	Ratio(name string) decimal.Decimal
}

// routed is a request's routing: its plan, where the walk is, the sticky binding it started from and the
// decision it writes as it goes.
type routed struct {
	pool     routing.Pool
	plan     routing.Plan
	pos      int // the candidate being tried, or the next one
	decision routing.Decision
	// stickiness (useSticky false: one candidate with one key, nothing to keep)
	useSticky bool
	sk        sticky.Key
	bound     sticky.Binding
	hasBound  bool
	how       string // routing.Sticky* from planning
	ttl       time.Duration
}

// routeRequest is what the selector needs to know about rq.
func (r *Relay) routeRequest(rq *request) *routing.Request {
	s := r.Settings.Get()
	out := &routing.Request{Model: rq.model, Intn: r.intn, Tuning: r.Routing.Tuning(rq.who.group, rq.model),
		Serves: func(ch *channel.Channel) bool {
			ad, ok := r.adaptorOf(ch, rq.model)
			return ok && r.serves(ad, rq) && len(ch.Keys) > 0
		}}
	if s.PreferSameProtocol {
		out.Native = func(ch *channel.Channel) bool { ad, ok := r.adaptorOf(ch, rq.model); return ok && native(ad, rq) }
	}
	if ramp := time.Duration(s.RecoveryRamp) * time.Second; ramp > 0 {
		out.Ramp = func(ch *channel.Channel) float64 { return r.Health.RampShare(ch.ID, ramp) }
	}
	return out
}

// poolServes says whether any channel of the pool can take rq.
func (r *Relay) poolServes(p routing.Pool, rq *request) bool {
	for _, g := range p {
		for _, rt := range g.Routes {
			if slices.ContainsFunc(rt.Channels, rq.route.Serves) {
				return true
			}
		}
	}
	return false
}

// plan orders rq's pool: the selector's order, with the session's bound channel first while it is healthy
// (or back to a better route, by the group's return-to-primary). Stickiness follows the key's own group's
// policy: which identifier kinds bind, and for how long; a kind whose TTL is 0 costs no cache read.
func (r *Relay) plan(ctx context.Context, h http.Header, rq *request) *routed {
	rt := &routed{pool: rq.pool}
	rt.plan = r.Routing.Select(rq.pool, rq.route)
	rt.decision = routing.Decision{Policy: rt.plan.Strategy, DecisionUs: rt.plan.Took.Microseconds()}
	rq.routed = rt
	defer rt.skipRoutes()
	if !choice(rq.pool) {
		return rt
	}
	var levels []sticky.Kind
	var own map[string]int
	if g, ok := r.Routing.Group(rq.who.group); ok {
		for _, l := range g.Sticky.V.Levels {
			levels = append(levels, sticky.Kind(l))
		}
		own = g.Sticky.V.TTLs
	}
	var ok bool
	if rt.sk, ok = sticky.Derive(rq.body, h, rq.who.tok.ID, rq.model, levels); !ok {
		return rt
	}
	if rt.ttl = r.Sticky.TTL(rt.sk.Kind, own); rt.ttl <= 0 {
		return rt
	}
	rt.useSticky = true
	if rt.bound, rt.hasBound = r.Sticky.Get(ctx, rq.who.group, rq.model, rt.sk); rt.hasBound {
		rt.plan, rt.how = r.Routing.Arrange(rq.pool, rt.plan, &rt.bound)
	}
	return rt
}

// choice says whether the pool offers more than one upstream key (a second channel or a second key of one
// channel), counting routes that are open right now: a session keeps its place through an outage.
func choice(p routing.Pool) bool {
	var only *channel.Channel
	for _, g := range p {
		for _, rt := range g.Routes {
			for _, ch := range rt.Channels {
				if len(ch.Keys) > 1 || (only != nil && only != ch) {
					return true
				}
				only = ch
			}
		}
	}
	return false
}

// skipRoutes writes the routes the plan left out into the decision.
func (rt *routed) skipRoutes() {
	for _, x := range rt.plan.Skipped {
		rt.decision.Skip(x.Group, x.Name, 0, routing.ReasonRouteOpen)
	}
}

// note is the log's sticky column: "hit:<kind>" when the bound channel answered, "returned:<kind>" when the
// session went back to its primary route, "miss:<kind>" otherwise ("" without stickiness).
func (rt *routed) note(served *channel.Channel) string {
	switch {
	case !rt.useSticky:
		return ""
	case rt.how == routing.StickyReturned:
		return "returned:" + string(rt.sk.Kind)
	case rt.hasBound && served != nil && served.ID == rt.bound.ChannelID:
		return "hit:" + string(rt.sk.Kind)
	}
	return "miss:" + string(rt.sk.Kind)
}

// bind keeps the session on what answered: its group, route, channel and key.
func (r *Relay) bind(ctx context.Context, rq *request, rt *routed, cand routing.Candidate, key int) {
	if !rt.useSticky {
		return
	}
	next := sticky.Binding{Group: rt.pool[cand.Group].Group.Name, Route: cand.Route.Name, ChannelID: cand.Channel.ID, Key: key}
	r.Sticky.Bind(ctx, rq.who.group, rq.model, rt.sk, rt.bound, rt.hasBound, next, rt.ttl)
}

// sellPer1M is a model's sell price in USD per 1M tokens (mean of input and output): what a channel without
// an upstream price of its own costs to the cost score.
func sellPer1M(p pricing.Price) float64 {
	in, _ := p.Input.Float64()
	out, _ := p.Output.Float64()
	return (in + out) / 2
}

// ratioFor is the price ratio of a call served by group for user tier: group ratio × tier ratio (the
// product is exact; pricing rounds once, at the cost).
func (r *Relay) ratioFor(group, tier string) decimal.Decimal {
	ratio := r.Groups.Ratio(group)
	if r.Tiers != nil {
		ratio = pricing.MulRatio(ratio, r.Tiers.Ratio(tier))
	}
	return ratio
}

// Package routing decides where a relayed request goes: the caller's logical groups in order (its own, then
// its key's fallbacks), each group's routes by priority (weighted among equals), each route's channels by
// priority (weighted among equals, same protocol first). The policy that orders them is a Selector; the
// Engine indexes the groups' routes per model and keeps the route-level breakers. The relay's attempt loop
// walks the plan, asks health and caps at each step and writes every step into the Decision.
package routing

import (
	"hash/fnv"
	"time"

	"tollgate/model"
	"tollgate/service/channel"
)

// Route is one route of a group for one model: its channels that are enabled, have keys and serve the model,
// highest priority first. A group without routes has one implicit route named "" over the channels that list it.
type Route struct {
	ID       int64 // the route breaker's id (RouteID)
	Group    string
	Name     string
	Priority int64
	Weight   int
	Channels []*channel.Channel
}

// RouteID is the breaker id of a group's route: a stable hash, so every node agrees without a table; 0 (no
// breaker) for the implicit route "" of a group without routes.
func RouteID(group, route string) int64 {
	if route == "" {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(group))
	h.Write([]byte{0})
	h.Write([]byte(route))
	return int64(h.Sum64()>>1) | 1
}

// GroupPool is one logical group's routes for a model, highest priority first.
type GroupPool struct {
	Group  *model.Group
	Routes []*Route
}

// Pool is everything a request may use: its groups in the order they are tried.
type Pool []GroupPool

// Request is what the policy needs to know about a call.
type Request struct {
	Model  string
	Serves func(*channel.Channel) bool    // the call can be sent to the channel (its protocol, translated or not)
	Native func(*channel.Channel) bool    // the channel speaks the caller's protocol (nil: no preference)
	Ramp   func(*channel.Channel) float64 // the share of its weight a recovering channel gets (nil: 1)
	Intn   func(int) int                  // random source
	// Prefs are the caller's routing preferences (profile, key and request merged); Tuning the group ×
	// model configuration; SellPer1M the model's sell price (USD per 1M, mean of input and output), the
	// cost of a channel without an upstream price; Capable says whether a channel has a capability a
	// preference requires (nil: every channel has every one).
	Prefs     model.RoutePrefs
	Tuning    model.RouteTuning
	SellPer1M float64
	Capable   func(ch *channel.Channel, capability string) bool
	// DryRun: a simulation, which must not move round-robin counters or exploration times.
	DryRun bool
}

// State is what a policy may read about routes: whether a route's breaker admits traffic now.
type State interface {
	RouteAvailable(id int64) bool
}

// Candidate is one step of a plan.
type Candidate struct {
	Group   int // index into the pool
	Route   *Route
	Channel *channel.Channel
}

// Plan is the ordered list of candidates the attempt loop walks.
type Plan struct {
	Candidates []Candidate
	// Skipped are the routes left out of the plan (their breaker is open), for the decision.
	Skipped []*Route
	// Strategy is the strategy that made the plan; Scores the metric strategies' ranking (in plan order);
	// Excluded the candidates the caller's preferences left out; Took how long deciding took.
	Strategy string
	Scores   []Score
	Excluded []Exclusion
	Took     time.Duration
}

// Selector is a routing policy.
type Selector interface {
	Name() string
	Select(p Pool, rq *Request, st State) Plan
}

// Reasons a candidate is skipped, as the decision shows them.
const (
	ReasonRouteOpen      = "route_open"
	ReasonChannelOpen    = "channel_open"
	ReasonNoKey          = "no_usable_key"
	ReasonAtCap          = "at_capacity"
	ReasonModel          = "model_unsupported"
	ReasonUntranslatable = "untranslatable"
	ReasonTried          = "tried"
	ReasonFailed         = "failed"
)

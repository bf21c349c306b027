package routing

import (
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"tollgate/model"
	"tollgate/service/channel"
	"tollgate/service/health"
	"tollgate/service/sticky"
)

// Defaults of a group's failover policy where it sets none.
const (
	DefaultConsecutiveFailures = 3
	DefaultCooldown            = 60 * time.Second
)

// Engine indexes every group's routes per model from the channel and group snapshots (rebuilt when either
// is replaced), plans requests with its Selector and keeps the route breakers: a second health.Tracker whose
// ids are RouteIDs, shared across nodes like the channel breakers.
type Engine struct {
	// Selector is the priority strategy's policy (PriorityWeighted).
	Selector Selector
	// Book is the metric snapshot the scored strategies read, Live the node's live numbers per channel and
	// Configs the per group × model tuning (each may be nil: no data, built-in defaults).
	Book    *Book
	Live    LiveOf
	Configs *Configs
	engineState
	channels func() *channel.Snapshot
	groups   func() *map[string]model.Group
	routes   *health.Tracker
	now      func() time.Time
	idx      atomic.Pointer[index]
	mu       sync.Mutex
}

// NewEngine builds an engine over the snapshots; routes holds the route breakers and now is its clock (for
// return-to-primary; nil: time.Now).
func NewEngine(channels func() *channel.Snapshot, groups func() *map[string]model.Group, routes *health.Tracker, now func() time.Time) *Engine {
	if now == nil {
		now = time.Now
	}
	return &Engine{Selector: PriorityWeighted{}, channels: channels, groups: groups, routes: routes, now: now}
}

type index struct {
	ch      *channel.Snapshot
	gs      *map[string]model.Group
	pools   map[string]map[string][]*Route // group → model → routes, priority desc
	members map[string]map[int64]bool      // group → every channel in it, enabled or not
	groups  map[string]*model.Group        // group rows (a group only channels name has a bare row)
	prices  map[*channel.Channel]chPrice   // upstream prices as floats, for the cost score
}

func (e *Engine) current() *index {
	ch, gs := e.channels(), e.groups()
	if ix := e.idx.Load(); ix != nil && ix.ch == ch && ix.gs == gs {
		return ix
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if ix := e.idx.Load(); ix != nil && ix.ch == ch && ix.gs == gs {
		return ix
	}
	ix := e.build(ch, gs)
	e.idx.Store(ix)
	return ix
}

func (e *Engine) build(snap *channel.Snapshot, gs *map[string]model.Group) *index {
	ix := &index{ch: snap, gs: gs, pools: map[string]map[string][]*Route{}, members: map[string]map[int64]bool{},
		groups: map[string]*model.Group{}, prices: make(map[*channel.Channel]chPrice, len(snap.ByID))}
	for _, ch := range snap.ByID {
		ix.prices[ch] = priceTable(ch)
	}
	for name, g := range *gs {
		g := g
		ix.groups[name] = &g
	}
	group := func(name string) *model.Group {
		if g := ix.groups[name]; g != nil {
			return g
		}
		g := &model.Group{Name: name, Status: model.StatusEnabled}
		ix.groups[name] = g
		return g
	}
	member := func(name string, id int64) {
		if ix.members[name] == nil {
			ix.members[name] = map[int64]bool{}
		}
		ix.members[name][id] = true
	}
	type routeKey struct{ group, model, route string }
	built := map[routeKey]*Route{}
	add := func(g *model.Group, r model.Route, ch *channel.Channel) {
		member(g.Name, ch.ID)
		if ch.Status != model.StatusEnabled || len(ch.Keys) == 0 {
			return
		}
		for _, m := range ch.Models.V {
			if len(g.Models.V) > 0 && !slices.Contains(g.Models.V, m) {
				continue
			}
			k := routeKey{g.Name, m, r.Name}
			rt := built[k]
			if rt == nil {
				rt = &Route{ID: RouteID(g.Name, r.Name), Group: g.Name, Name: r.Name, Priority: r.Priority, Weight: r.Weight}
				built[k] = rt
				if ix.pools[g.Name] == nil {
					ix.pools[g.Name] = map[string][]*Route{}
				}
				ix.pools[g.Name][m] = append(ix.pools[g.Name][m], rt)
			}
			if !slices.Contains(rt.Channels, ch) {
				rt.Channels = append(rt.Channels, ch)
			}
		}
	}
	ids := make([]int64, 0, len(snap.ByID))
	for id := range snap.ByID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids { // groups without routes: one implicit route over the channels that name them
		ch := snap.ByID[id]
		for _, name := range ch.Groups.V {
			if g := group(name); len(g.Routes.V) == 0 {
				add(g, model.Route{Weight: 1}, ch)
			}
		}
	}
	for _, g := range ix.groups {
		for _, r := range g.Routes.V {
			for _, id := range r.Channels {
				if ch := snap.ByID[id]; ch != nil {
					add(g, r, ch)
				}
			}
		}
		e.configure(g)
	}
	for _, byModel := range ix.pools {
		for _, rs := range byModel {
			sort.SliceStable(rs, func(i, j int) bool { return rs[i].Priority > rs[j].Priority })
			for _, r := range rs {
				sort.SliceStable(r.Channels, func(i, j int) bool {
					if r.Channels[i].Priority != r.Channels[j].Priority {
						return r.Channels[i].Priority > r.Channels[j].Priority
					}
					return r.Channels[i].ID < r.Channels[j].ID
				})
			}
		}
	}
	return ix
}

// configure hands a group's failover policy to its route breakers: trip after n consecutive retryable
// failures (the failure-ratio rule is off for routes), cool for the policy's cooldown (not doubled).
func (e *Engine) configure(g *model.Group) {
	if e.routes == nil {
		return
	}
	f := g.Failover.V
	n := f.ConsecutiveFailures
	if n <= 0 {
		n = DefaultConsecutiveFailures
	}
	cd := time.Duration(f.CooldownS) * time.Second
	if cd <= 0 {
		cd = DefaultCooldown
	}
	o := health.Overrides{ConsecutiveFails: n, MinRequests: 1 << 30, BaseCooldownMs: int(cd.Milliseconds()),
		MaxCooldownMs: int(cd.Milliseconds())}
	for _, r := range g.Routes.V {
		e.routes.SetChannelConfig(RouteID(g.Name, r.Name), o)
	}
}

// Group returns a group's row as the engine sees it (a group only channels name has a bare enabled row).
func (e *Engine) Group(name string) (*model.Group, bool) {
	g, ok := e.current().groups[name]
	return g, ok
}

// Pool is what a request for model may use in groups (in order); groups with nothing for the model are
// left out.
func (e *Engine) Pool(groups []string, m string) Pool {
	ix := e.current()
	p := make(Pool, 0, len(groups))
	for _, name := range groups {
		g := ix.groups[name]
		if g == nil || g.Status == model.StatusDisabled {
			continue
		}
		if rs := ix.pools[name][m]; len(rs) > 0 {
			p = append(p, GroupPool{Group: g, Routes: rs})
		}
	}
	return p
}

// Models lists the models requests in groups may ask for: a group's own public list where it has one (and
// something routes them), else what its routes serve; sorted, each once.
func (e *Engine) Models(groups []string) []string {
	ix := e.current()
	var out []string
	for _, name := range groups {
		if g := ix.groups[name]; g == nil || g.Status == model.StatusDisabled {
			continue
		}
		for m := range ix.pools[name] {
			if !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	sort.Strings(out)
	return out
}

// Member says whether channel id belongs to group (through a route, or by naming a group without routes),
// enabled or not.
func (e *Engine) Member(group string, id int64) bool { return e.current().members[group][id] }

// RouteAvailable implements State: the route breaker admits traffic (no probe slot is taken). The implicit
// route of a group without routes (id 0) has no breaker of its own: its channels' breakers are the ones.
func (e *Engine) RouteAvailable(id int64) bool {
	return e.routes == nil || id == 0 || e.routes.Available(id)
}

// AllowRoute asks the route breaker to admit one attempt; probe says it is a HALF_OPEN probe.
func (e *Engine) AllowRoute(id int64) (ok, probe bool) {
	if e.routes == nil || id == 0 {
		return true, false
	}
	return e.routes.Allow(id)
}

// RecordRoute feeds an attempt's outcome to its route's breaker.
func (e *Engine) RecordRoute(id int64, class health.Class, status int, latency time.Duration, probe bool) {
	if e.routes != nil && id != 0 {
		e.routes.Record(health.Outcome{ChannelID: id, Key: -1, Class: class, Status: status, Latency: latency, Probe: probe, RateLimitRemaining: -1})
	}
}

// RouteHealth is the admin view of a route's breaker.
func (e *Engine) RouteHealth(group, route string) health.ChannelHealth {
	if e.routes == nil || route == "" {
		return health.ChannelHealth{State: health.StateClosed}
	}
	return e.routes.Snapshot(RouteID(group, route), 0)
}

// Sticky outcomes of planning.
const (
	StickyNone     = ""         // no binding
	StickyFirst    = "first"    // the bound channel leads the plan
	StickyReturned = "returned" // the binding was left for a better route back in health (return to primary)
	StickyGone     = "gone"     // the bound channel is not in the plan (its route is open, it left the group)
)

// Plan orders the pool with the Selector and, for a session bound to a channel, puts that channel first
// unless its group returns sessions to a better route that has been healthy for return_to_primary_s.
func (e *Engine) Plan(p Pool, rq *Request, b *sticky.Binding) (Plan, string) {
	return e.Arrange(p, e.Selector.Select(p, rq, e), b)
}

// Arrange applies a sticky binding to a plan the Selector made (see Plan).
func (e *Engine) Arrange(p Pool, plan Plan, b *sticky.Binding) (Plan, string) {
	if b == nil {
		return plan, StickyNone
	}
	at := -1
	for i, c := range plan.Candidates {
		if c.Channel.ID == b.ChannelID && p[c.Group].Group.Name == b.Group {
			at = i
			break
		}
	}
	if at < 0 {
		return plan, StickyGone
	}
	if at > 0 && e.returns(p, plan.Candidates[0], plan.Candidates[at]) {
		return plan, StickyReturned
	}
	c := plan.Candidates[at]
	copy(plan.Candidates[1:at+1], plan.Candidates[:at])
	plan.Candidates[0] = c
	return plan, StickyFirst
}

// returns says whether a session bound to cur should go to best instead: best is on a better route (an
// earlier group, or a higher priority in the same group) whose breaker has been closed for the group's
// return_to_primary_s.
func (e *Engine) returns(p Pool, best, cur Candidate) bool {
	g := p[cur.Group].Group
	if g.ReturnToPrimaryS <= 0 {
		return false
	}
	better := best.Group < cur.Group || (best.Group == cur.Group && best.Route.Priority > cur.Route.Priority)
	if !better || e.routes == nil {
		return better
	}
	if best.Route.ID == 0 {
		return true
	}
	closed, since := e.routes.ClosedSince(best.Route.ID)
	return closed && (since.IsZero() || e.now().Sub(since) >= time.Duration(g.ReturnToPrimaryS)*time.Second)
}

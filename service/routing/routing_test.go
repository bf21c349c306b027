package routing

import (
	"math/rand/v2"
	"testing"
	"time"

	"tollgate/model"
	"tollgate/service/channel"
	"tollgate/service/health"
	"tollgate/service/sticky"
)

func ch(id, prio int64, weight int, models ...string) *channel.Channel {
	return &channel.Channel{Channel: model.Channel{ID: id, Priority: prio, Weight: weight, Status: model.StatusEnabled,
		Models: model.JSON[[]string]{V: models}}, Keys: []string{"k"}}
}

func ids(p Plan) []int64 {
	var out []int64
	for _, c := range p.Candidates {
		out = append(out, c.Channel.ID)
	}
	return out
}

type closedState struct{ open map[int64]bool }

func (s closedState) RouteAvailable(id int64) bool { return !s.open[id] }

// Routes go by priority, channels inside a route by priority; a channel in two routes is tried once; an
// open route is left out and reported.
func TestPriorityWeighted_OrdersRoutesThenChannels(t *testing.T) {
	a, b, c := ch(1, 0, 1), ch(2, 5, 1), ch(3, 0, 1)
	hi := &Route{ID: 10, Name: "asxs", Priority: 20, Channels: []*channel.Channel{a, b}}
	lo := &Route{ID: 11, Name: "codex2api", Priority: 10, Channels: []*channel.Channel{c, a}}
	p := Pool{{Group: &model.Group{Name: "g"}, Routes: []*Route{lo, hi}}}
	rq := &Request{Intn: rand.IntN}
	if got := ids(PriorityWeighted{}.Select(p, rq, nil)); len(got) != 3 || got[0] != 2 || got[1] != 1 || got[2] != 3 {
		t.Fatalf("plan = %v, want [2 1 3]", got)
	}
	plan := PriorityWeighted{}.Select(p, rq, closedState{open: map[int64]bool{10: true}})
	if got := ids(plan); len(got) != 2 || got[0]+got[1] != 4 || len(plan.Skipped) != 1 || plan.Skipped[0] != hi {
		t.Fatalf("plan with asxs open = %v skipped %v", got, plan.Skipped)
	}
}

// Among equals, weight sets the share of first places (9:1 → about 90 %), and same-protocol channels lead
// their tier.
func TestPriorityWeighted_WeightsAndNativeFirst(t *testing.T) {
	a, b := ch(1, 0, 9), ch(2, 0, 1)
	p := Pool{{Group: &model.Group{Name: "g"}, Routes: []*Route{{Channels: []*channel.Channel{a, b}}}}}
	r := rand.New(rand.NewPCG(1, 2))
	rq := &Request{Intn: r.IntN}
	first := 0
	for range 10000 {
		if ids(PriorityWeighted{}.Select(p, rq, nil))[0] == 1 {
			first++
		}
	}
	if first < 8700 || first > 9300 {
		t.Fatalf("weight 9 led %d of 10000", first)
	}
	rq.Native = func(c *channel.Channel) bool { return c.ID == 2 }
	for range 100 {
		if got := ids(PriorityWeighted{}.Select(p, rq, nil)); got[0] != 2 {
			t.Fatalf("native channel must lead: %v", got)
		}
	}
}

// Fallback groups come after the first group's routes, and the engine's index follows the snapshots: a group
// with routes uses only its routes, one without uses the channels that name it, a disabled group gives nothing.
func TestEngine_IndexesGroupsAndRoutes(t *testing.T) {
	a, b, c := ch(1, 0, 1, "m"), ch(2, 0, 1, "m"), ch(3, 0, 1, "m", "x")
	a.Groups.V = []string{"shared"}
	c.Groups.V = []string{"backup"}
	snap := &channel.Snapshot{ByID: map[int64]*channel.Channel{1: a, 2: b, 3: c}}
	book := map[string]model.Group{
		"shared": {Name: "shared", Status: "enabled", Routes: model.JSON[[]model.Route]{V: []model.Route{
			{Name: "asxs", Priority: 20, Weight: 1, Channels: []int64{2}}, {Name: "codex2api", Priority: 10, Weight: 1, Channels: []int64{3}}}}},
		"backup": {Name: "backup", Status: "enabled", Models: model.JSON[[]string]{V: []string{"m"}}},
		"off":    {Name: "off", Status: "disabled"},
	}
	e := NewEngine(func() *channel.Snapshot { return snap }, func() *map[string]model.Group { return &book }, nil, nil)
	p := e.Pool([]string{"shared", "backup", "off"}, "m")
	if len(p) != 2 || p[0].Group.Name != "shared" || p[1].Group.Name != "backup" {
		t.Fatalf("pool groups = %+v", p)
	}
	if got := ids(e.Selector.Select(p, &Request{Intn: rand.IntN}, nil)); len(got) != 2 || got[0] != 2 || got[1] != 3 {
		t.Fatalf("plan = %v (channel 1 names shared, but shared has routes)", got)
	}
	if e.Member("shared", 1) || !e.Member("shared", 3) || !e.Member("backup", 3) {
		t.Fatal("membership")
	}
	if ms := e.Models([]string{"backup"}); len(ms) != 1 || ms[0] != "m" {
		t.Fatalf("backup's public list is [m], got %v", ms)
	}
}

// A bound session leads with its channel; with return-to-primary on, it goes back to the better route once
// that route has been closed for the policy's time, and not before.
func TestEngine_StickyAndReturnToPrimary(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	clock := func() time.Time { return now }
	routes := health.New(health.Config{Namespace: "route"}, nil, nil, clock)
	a, b := ch(1, 0, 1, "m"), ch(2, 0, 1, "m")
	snap := &channel.Snapshot{ByID: map[int64]*channel.Channel{1: a, 2: b}}
	book := map[string]model.Group{"g": {Name: "g", Status: "enabled", ReturnToPrimaryS: 60,
		Failover: model.JSON[model.FailoverPolicy]{V: model.FailoverPolicy{ConsecutiveFailures: 2, CooldownS: 60}},
		Routes: model.JSON[[]model.Route]{V: []model.Route{
			{Name: "asxs", Priority: 20, Weight: 1, Channels: []int64{1}}, {Name: "codex2api", Priority: 10, Weight: 1, Channels: []int64{2}}}}}}
	e := NewEngine(func() *channel.Snapshot { return snap }, func() *map[string]model.Group { return &book }, routes, clock)
	rq := &Request{Intn: rand.IntN}
	p := e.Pool([]string{"g"}, "m")
	asxs := RouteID("g", "asxs")
	bound := &sticky.Binding{Group: "g", Route: "codex2api", ChannelID: 2, Key: 0}
	if _, how := e.Plan(p, rq, bound); how != StickyReturned {
		t.Fatalf("asxs never failed: the session returns at once, got %q", how)
	}
	for range 2 {
		e.RecordRoute(asxs, health.ClassServer, 500, time.Millisecond, false)
	}
	if plan, how := e.Plan(p, rq, bound); how != StickyFirst || ids(plan)[0] != 2 || len(plan.Skipped) != 1 {
		t.Fatalf("asxs open: plan %v %q", ids(plan), how)
	}
	now = now.Add(61 * time.Second)
	for range 2 {
		ok, probe := e.AllowRoute(asxs)
		if !ok || !probe {
			t.Fatal("after the cooldown asxs takes probes")
		}
		e.RecordRoute(asxs, health.ClassSuccess, 200, time.Millisecond, true)
	}
	if _, how := e.Plan(p, rq, bound); how != StickyFirst {
		t.Fatalf("asxs closed just now: the session stays, got %q", how)
	}
	now = now.Add(61 * time.Second)
	if plan, how := e.Plan(p, rq, bound); how != StickyReturned || ids(plan)[0] != 1 {
		t.Fatalf("asxs healthy 61 s: the session returns, got %v %q", ids(plan), how)
	}
	book["g"] = func(g model.Group) model.Group { g.ReturnToPrimaryS = 0; return g }(book["g"])
	nb := book
	e.groups = func() *map[string]model.Group { return &nb }
	if _, how := e.Plan(e.Pool([]string{"g"}, "m"), rq, bound); how != StickyFirst {
		t.Fatalf("return-to-primary off: the session stays, got %q", how)
	}
}

// A routing decision over 20 channels in two routes: the bar is 10 µs p50.
func BenchmarkSelect_20Channels(b *testing.B) {
	var chs []*channel.Channel
	for i := range 20 {
		chs = append(chs, ch(int64(i+1), int64(i%3), 1+i%4, "m"))
	}
	p := Pool{{Group: &model.Group{Name: "g"}, Routes: []*Route{
		{ID: 1, Priority: 20, Weight: 1, Channels: chs[:10]}, {ID: 2, Priority: 10, Weight: 1, Channels: chs[10:]}}}}
	rq := &Request{Intn: rand.IntN, Serves: func(*channel.Channel) bool { return true },
		Ramp: func(*channel.Channel) float64 { return 1 }}
	b.ReportAllocs()
	for b.Loop() {
		_ = PriorityWeighted{}.Select(p, rq, closedState{})
	}
}

package routing

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"tollgate/model"
	"tollgate/service/channel"
)

// Exclusion is a candidate a preference (or the key's limits) left out, and why.
type Exclusion struct {
	Group     int    `json:"-"`
	ChannelID int64  `json:"channel_id"`
	Name      string `json:"name"`
	Pref      string `json:"pref"`   // the preference that excluded it: avoid, max_price, min_success, max_p95_ms, require
	Reason    string `json:"reason"` // e.g. "success 0.70 < min_success 0.90"
}

// Strategy returns the strategy rq will be routed by: the request's preference, else the tuning's.
func (e *Engine) Strategy(rq *Request) string {
	if rq.Prefs.Strategy != "" {
		return rq.Prefs.Strategy
	}
	if rq.Tuning.Strategy != "" {
		return rq.Tuning.Strategy
	}
	return StrategyPriority
}

// Tuning is the routing configuration for group × model (built-in defaults without Configs).
func (e *Engine) Tuning(group, m string) model.RouteTuning { return e.Configs.Tuning(group, m) }

// Select plans rq over the pool by its strategy, then applies its preferences: candidates they exclude
// leave the plan (Plan.Excluded says which and why), preferred ones move to the front of their group. How
// long it took is Plan.Took.
func (e *Engine) Select(p Pool, rq *Request) Plan {
	start := time.Now()
	strategy := e.Strategy(rq)
	var plan Plan
	switch strategy {
	case StrategyPriority:
		plan = e.Selector.Select(p, rq, e)
	default:
		plan = e.flatten(p, rq)
		switch strategy {
		case StrategyRoundRobin:
			e.roundRobin(p, rq, &plan)
		case StrategyLeastBusy:
			e.leastBusy(rq, &plan)
		default:
			e.scored(p, rq, &plan, strategy)
		}
	}
	plan.Strategy = strategy
	e.applyPrefs(rq, &plan)
	plan.Took = time.Since(start)
	return plan
}

// flatten lists the pool's usable channels once each, group by group (routes by priority, channels in
// route order), leaving out open routes (Plan.Skipped) and channels the call cannot go to. A channel takes
// the first route it appears in.
func (e *Engine) flatten(p Pool, rq *Request) Plan {
	var plan Plan
	n := 0
	for _, g := range p {
		for _, r := range g.Routes {
			n += len(r.Channels)
		}
	}
	plan.Candidates = make([]Candidate, 0, n)
	for gi, g := range p {
		for _, r := range g.Routes {
			if !e.RouteAvailable(r.ID) {
				plan.Skipped = append(plan.Skipped, r)
				continue
			}
		next:
			for _, ch := range r.Channels {
				if rq.Serves != nil && !rq.Serves(ch) {
					continue
				}
				for _, c := range plan.Candidates {
					if c.Channel == ch {
						continue next
					}
				}
				plan.Candidates = append(plan.Candidates, Candidate{Group: gi, Route: r, Channel: ch})
			}
		}
	}
	return plan
}

// groupSpans calls fn for each group's run of candidates in the plan (a flattened plan keeps groups in order).
func groupSpans(cs []Candidate, fn func([]Candidate)) {
	for start := 0; start < len(cs); {
		end := start + 1
		for end < len(cs) && cs[end].Group == cs[start].Group {
			end++
		}
		fn(cs[start:end])
		start = end
	}
}

type rrKey struct{ group, model string }

// roundRobin rotates each group's channels (by id) by a per-node counter per group × model: over n·k calls
// each of k channels leads n times exactly.
func (e *Engine) roundRobin(p Pool, rq *Request, plan *Plan) {
	groupSpans(plan.Candidates, func(cs []Candidate) {
		sort.Slice(cs, func(i, j int) bool { return cs[i].Channel.ID < cs[j].Channel.ID })
		v, _ := e.rr.LoadOrStore(rrKey{p[cs[0].Group].Group.Name, rq.Model}, new(atomic.Uint64))
		n := v.(*atomic.Uint64).Load()
		if !rq.DryRun {
			n = v.(*atomic.Uint64).Add(1) - 1
		}
		rotate(cs, int(n%uint64(len(cs))))
	})
}

// rotate moves cs[k:] before cs[:k] in place.
func rotate(cs []Candidate, k int) {
	slices.Reverse(cs[:k])
	slices.Reverse(cs[k:])
	slices.Reverse(cs)
}

// leastBusy orders each group's channels by attempts in flight on this node, fewest first (random among equals).
func (e *Engine) leastBusy(rq *Request, plan *Plan) {
	if e.Live == nil {
		return
	}
	groupSpans(plan.Candidates, func(cs []Candidate) {
		var buf [32]int64
		active := buf[:0]
		for _, c := range cs {
			active = append(active, e.Live(c.Channel.ID).Active)
		}
		for i := len(cs) - 1; i > 0; i-- { // shuffle, then a stable sort keeps equals random
			j := rq.Intn(i + 1)
			cs[i], cs[j] = cs[j], cs[i]
			active[i], active[j] = active[j], active[i]
		}
		for i := 1; i < len(cs); i++ {
			for j := i; j > 0 && active[j] < active[j-1]; j-- {
				cs[j], cs[j-1] = cs[j-1], cs[j]
				active[j], active[j-1] = active[j-1], active[j]
			}
		}
	})
}

// scored ranks each group's channels by score (performance, cost, balanced; see ARCHITECTURE.md §3
// "Metric-driven routing"): the first pick is drawn from the top-k by softmax shares with a floor, or — with
// the exploration share — among channels with too few samples (and demoted ones past recovery_s); the rest
// follow by score, exploring ones next, demoted ones last.
func (e *Engine) scored(p Pool, rq *Request, plan *Plan, strategy string) {
	t := &rq.Tuning
	w := weightsFor(strategy, t)
	plan.Scores = make([]Score, len(plan.Candidates))
	now := time.Now()
	for i, c := range plan.Candidates {
		in := e.inputs(c.Channel, rq, t)
		s := Score{Group: c.Group, ChannelID: c.Channel.ID, Name: c.Channel.Name, Inputs: in, Score: blend(&in, w)}
		samples := in.Samples
		if in.Source == "" { // nothing rolled up yet: what this node has seen live
			samples = float64(in.LiveSamples)
		}
		switch {
		case samples < float64(max(t.MinSamples, 1)):
			s.Exploring, s.Score = true, 0.5
		case 1-in.Success > t.FailureThreshold:
			s.Demoted = true
		}
		plan.Scores[i] = s
	}
	off := 0
	groupSpans(plan.Candidates, func(cs []Candidate) {
		e.rankGroup(cs, plan.Scores[off:off+len(cs)], rq, t, now)
		off += len(cs)
	})
}

func (e *Engine) liveSamples(id int64) int64 {
	if e.Live == nil {
		return 0
	}
	return e.Live(id).Samples
}

// class orders a ranking: scored channels, then exploring ones, then demoted ones.
func class(s *Score) int {
	switch {
	case s.Demoted:
		return 2
	case s.Exploring:
		return 1
	}
	return 0
}

// rankGroup orders one group's candidates and their scores together (see scored).
func (e *Engine) rankGroup(cs []Candidate, ss []Score, rq *Request, t *model.RouteTuning, now time.Time) {
	idx := make([]int, len(cs))
	for i := range idx {
		idx[i] = i
	}
	before := func(x, y *Score) bool {
		if class(x) != class(y) {
			return class(x) < class(y)
		}
		return x.Score > y.Score
	}
	for i := 1; i < len(idx); i++ { // insertion sort, stable: a pool is a few dozen channels at most
		for j := i; j > 0 && before(&ss[idx[j]], &ss[idx[j-1]]); j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
	nScored := 0
	for _, i := range idx {
		if class(&ss[i]) == 0 {
			nScored++
		}
	}
	var explore []int // exploring channels, and demoted ones not explored for recovery_s
	for _, i := range idx {
		switch {
		case ss[i].Exploring:
			explore = append(explore, i)
		case ss[i].Demoted:
			last, _ := e.explored.Load(cs[i].Channel.ID)
			if at, _ := last.(int64); now.UnixNano()-at >= int64(t.RecoveryS)*int64(time.Second) {
				explore = append(explore, i)
			}
		}
	}
	k := min(max(t.TopK, 1), nScored)
	var sbuf, pbuf [32]float64
	top, pr := sbuf[:0], pbuf[:k]
	for _, i := range idx[:k] {
		top = append(top, ss[i].Score)
	}
	shares(top, t, pr)
	exploreShare := 0.0
	if len(explore) > 0 {
		exploreShare = t.Explore
		if k == 0 {
			exploreShare = 1
		}
	}
	for j, i := range idx[:k] {
		ss[i].Share = pr[j] * (1 - exploreShare)
		ss[i].TopK, ss[i].Rank = k, j+1
	}
	for _, i := range explore {
		ss[i].Share = exploreShare / float64(len(explore))
	}
	for j, i := range idx[k:] {
		ss[i].Rank = k + j + 1
	}
	first := -1
	if rq.DryRun { // a simulation shows the ranking by score; the shares say how often each would lead
	} else if len(explore) > 0 && (k == 0 || float64(rq.Intn(1_000_000)) < exploreShare*1_000_000) {
		first = explore[rq.Intn(len(explore))]
		if ss[first].Demoted && !rq.DryRun {
			e.explored.Store(cs[first].Channel.ID, now.UnixNano())
		}
	} else if k > 0 {
		x := float64(rq.Intn(1_000_000)) / 1_000_000
		first = idx[k-1]
		for j, i := range idx[:k] {
			if x -= pr[j]; x < 0 {
				first = i
				break
			}
		}
	}
	order := make([]int, 0, len(idx))
	if first >= 0 {
		order = append(order, first)
	}
	for _, i := range idx {
		if i != first {
			order = append(order, i)
		}
	}
	var cbuf [32]Candidate
	var sb [32]Score
	oc, os := append(cbuf[:0], cs...), append(sb[:0], ss...)
	for j, i := range order {
		cs[j], ss[j] = oc[i], os[i]
	}
}

// applyPrefs drops the candidates rq's preferences exclude (into plan.Excluded, with the reason) and moves
// preferred ones to the front of their group.
func (e *Engine) applyPrefs(rq *Request, plan *Plan) {
	pf := &rq.Prefs
	if pf.Empty() {
		return
	}
	keep := plan.Candidates[:0]
	keptScores := plan.Scores[:0]
	for i, c := range plan.Candidates {
		if x, out := e.excludes(c, rq); out {
			x.Group = c.Group
			plan.Excluded = append(plan.Excluded, x)
			continue
		}
		keep = append(keep, c)
		if plan.Scores != nil {
			keptScores = append(keptScores, plan.Scores[i])
		}
	}
	plan.Candidates = keep
	if plan.Scores != nil {
		plan.Scores = keptScores
	}
	if len(pf.Prefer) == 0 {
		return
	}
	preferred := func(i int) bool {
		for _, t := range pf.Prefer {
			if matches(plan.Candidates[i].Channel, t) {
				return true
			}
		}
		return false
	}
	for start := 0; start < len(plan.Candidates); { // stable partition inside each group
		end := start + 1
		for end < len(plan.Candidates) && plan.Candidates[end].Group == plan.Candidates[start].Group {
			end++
		}
		k := start
		for i := start; i < end; i++ {
			if preferred(i) {
				c := plan.Candidates[i]
				copy(plan.Candidates[k+1:i+1], plan.Candidates[k:i])
				plan.Candidates[k] = c
				if plan.Scores != nil {
					s := plan.Scores[i]
					s.Preferred = true
					copy(plan.Scores[k+1:i+1], plan.Scores[k:i])
					plan.Scores[k] = s
				}
				k++
			}
		}
		start = end
	}
}

// matches says whether ch is the target "channel:<id>" or carries the tag of "tag:<tag>".
func matches(ch *channel.Channel, target string) bool {
	kind, val, ok := parseTarget(target)
	switch {
	case !ok:
		return false
	case kind == "tag":
		return ch.Tag == val
	}
	return strconv.FormatInt(ch.ID, 10) == val
}

// excludes says whether a preference of rq leaves c out, and which one.
func (e *Engine) excludes(c Candidate, rq *Request) (Exclusion, bool) {
	pf := &rq.Prefs
	ch := c.Channel
	x := Exclusion{ChannelID: ch.ID, Name: ch.Name}
	for _, t := range pf.Avoid {
		if matches(ch, t) {
			x.Pref, x.Reason = "avoid", "avoid "+t
			return x, true
		}
	}
	if pf.MaxPrice > 0 || pf.MinSuccess > 0 || pf.MaxP95Ms > 0 {
		in := e.inputs(ch, rq, &rq.Tuning)
		known := in.Source != "" || in.LiveSamples > 0
		switch {
		case pf.MaxPrice > 0 && in.Price > pf.MaxPrice:
			x.Pref, x.Reason = "max_price", fmt.Sprintf("price %g > max_price %g", in.Price, pf.MaxPrice)
			return x, true
		case pf.MinSuccess > 0 && known && in.Success < pf.MinSuccess:
			x.Pref, x.Reason = "min_success", fmt.Sprintf("success %.3f < min_success %g", in.Success, pf.MinSuccess)
			return x, true
		case pf.MaxP95Ms > 0 && known && in.P95Ms > float64(pf.MaxP95Ms):
			x.Pref, x.Reason = "max_p95_ms", fmt.Sprintf("p95 %.0f ms > max_p95_ms %d", in.P95Ms, pf.MaxP95Ms)
			return x, true
		}
	}
	for _, r := range pf.Require {
		if rq.Capable != nil && !rq.Capable(ch, r) {
			x.Pref, x.Reason = "require", "lacks "+r
			return x, true
		}
	}
	return x, false
}

// ExcludedBy names the preferences that excluded candidates, each once, in a fixed order.
func (p Plan) ExcludedBy() []string {
	var out []string
	for _, pref := range [...]string{"avoid", "max_price", "min_success", "max_p95_ms", "require"} {
		if slices.ContainsFunc(p.Excluded, func(x Exclusion) bool { return x.Pref == pref }) {
			out = append(out, pref)
		}
	}
	return out
}

// engineState is what Engine keeps for strategies (round-robin counters, when demoted channels were last
// explored); embedded in Engine.
type engineState struct {
	rr       sync.Map // rrKey → *atomic.Uint64
	explored sync.Map // channel id → unix nanos of the last exploration pick of a demoted channel
}

package routing

import "tollgate/service/channel"

// PriorityWeighted is the default policy: groups in order; inside a group, routes by priority, weighted
// random among routes of equal priority; inside a route, channels by priority, weighted random among equals
// (a recovering channel's weight scaled by its ramp share), channels that speak the caller's protocol before
// the ones that need translating. A channel in several routes appears once, at its first place.
type PriorityWeighted struct{}

// Name implements Selector.
func (PriorityWeighted) Name() string { return "priority" }

// rampScale turns integer weights into fine-grained ones, so that 10 % of a weight of 1 is still a share.
const rampScale = 1000

// Select implements Selector.
func (PriorityWeighted) Select(p Pool, rq *Request, st State) Plan {
	var plan Plan
	var seen map[int64]bool
	if len(p) > 1 || (len(p) == 1 && len(p[0].Routes) > 1) {
		seen = map[int64]bool{}
	}
	for gi, g := range p {
		var routes []*Route
		for _, r := range g.Routes {
			if st != nil && !st.RouteAvailable(r.ID) {
				plan.Skipped = append(plan.Skipped, r)
				continue
			}
			routes = append(routes, r)
		}
		byTiers(routes, func(r *Route) int64 { return r.Priority }, func(r *Route) int { return max(r.Weight, 1) * rampScale }, rq.Intn)
		for _, r := range routes {
			chs := make([]*channel.Channel, 0, len(r.Channels))
			for _, ch := range r.Channels {
				if (rq.Serves == nil || rq.Serves(ch)) && !seen[ch.ID] {
					chs = append(chs, ch)
				}
			}
			weight := func(ch *channel.Channel) int {
				w := max(ch.Weight, 1) * rampScale
				if rq.Ramp != nil {
					w = max(int(float64(w)*rq.Ramp(ch)), 1)
				}
				return w
			}
			byTiers(chs, func(ch *channel.Channel) int64 { return ch.Priority }, weight, rq.Intn)
			if rq.Native != nil {
				nativeFirst(chs, rq.Native, func(ch *channel.Channel) int64 { return ch.Priority })
			}
			for _, ch := range chs {
				if seen != nil {
					seen[ch.ID] = true
				}
				plan.Candidates = append(plan.Candidates, Candidate{Group: gi, Route: r, Channel: ch})
			}
		}
	}
	return plan
}

// byTiers sorts xs by tier (descending, stable) and shuffles each tier by weight: the first element of a
// tier is drawn with probability weight/total, then the next among the rest, and so on.
func byTiers[T any](xs []T, tier func(T) int64, weight func(T) int, intn func(int) int) {
	// insertion sort: pools are small and mostly sorted already
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && tier(xs[j]) > tier(xs[j-1]); j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
	var buf [32]int
	for start := 0; start < len(xs); {
		end := start + 1
		for end < len(xs) && tier(xs[end]) == tier(xs[start]) {
			end++
		}
		if end-start > 1 {
			ws := buf[:0]
			total := 0
			for _, x := range xs[start:end] {
				w := weight(x)
				ws = append(ws, w)
				total += w
			}
			for i := start; i < end-1; i++ {
				n := intn(total)
				j := i
				for ; j < end-1; j++ {
					if n -= ws[j-start]; n < 0 {
						break
					}
				}
				xs[i], xs[j] = xs[j], xs[i]
				ws[i-start], ws[j-start] = ws[j-start], ws[i-start]
				total -= ws[i-start]
			}
		}
		start = end
	}
}

// nativeFirst moves, inside each priority tier, the channels that speak the caller's protocol before the
// others, keeping the weighted order within both (prefer_same_protocol).
func nativeFirst(chs []*channel.Channel, native func(*channel.Channel) bool, tier func(*channel.Channel) int64) {
	for start := 0; start < len(chs); {
		end := start + 1
		for end < len(chs) && tier(chs[end]) == tier(chs[start]) {
			end++
		}
		k := start
		for i := start; i < end; i++ {
			if native(chs[i]) {
				ch := chs[i]
				copy(chs[k+1:i+1], chs[k:i])
				chs[k] = ch
				k++
			}
		}
		start = end
	}
}

package relay

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"tollgate/model"
	"tollgate/relay/adaptor"
	"tollgate/service/channel"
	"tollgate/service/health"
	"tollgate/service/routing"
)

// attemptState is the per-request retry state: a walk over the routing plan (route.go), not a counter tied
// to priority tiers. A key-level failure (429, a refused key) tries the same channel's other keys first; a
// channel-level one moves on to the next candidate; never the same key twice.
type attemptState struct {
	rt        *routed
	triedKeys map[int64]map[int]bool // channel → key indexes already used
	skip      map[int64]bool         // channels out of the running for this request
	budget    int                    // attempts left after the current one
	attempts  []model.Attempt
	last      *failure
	lastCh    *channel.Channel
	legs      map[int64]*leg // each channel's plan, made once per request (leg.go)
	// untranslatable: a channel skipped because the request cannot be sent to its protocol faithfully; the
	// caller's 400 when no other channel answers.
	untranslatable *relayError
}

// channelLevel says whether a failure condemns the whole channel for this request, or only the key.
func channelLevel(c Class) bool {
	switch c {
	case ClassRateLimited, ClassAuth, ClassUpstreamQuota:
		return false
	}
	return true
}

// step is one attempt about to be made: the candidate, the plan for its protocol, the key and its
// in-flight slot (end), and whether the channel and the route admitted it as a half-open probe.
type step struct {
	cand       routing.Candidate
	group      string
	lg         *leg
	key        int
	end        func()
	probe      bool
	routeProbe bool
}

// next walks the plan to the next candidate that can take an attempt now, writing each one it passes over
// into the decision with the reason. Health is consulted without side effects first; only the chosen
// candidate takes an in-flight slot (caps), a route and a channel admission (which may be probe slots).
func (r *Relay) next(st *attemptState, rq *request) (*step, bool) {
	rt := st.rt
	for ; rt.pos < len(rt.plan.Candidates); rt.pos++ {
		c := rt.plan.Candidates[rt.pos]
		ch := c.Channel
		if st.skip[ch.ID] {
			continue
		}
		g := rt.pool[c.Group].Group.Name
		skip := func(reason string) {
			st.skip[ch.ID] = true
			rt.decision.Skip(g, c.Route.Name, ch.ID, reason)
		}
		if !r.Health.ModelAllowed(ch.ID, rq.model) {
			skip(routing.ReasonModel)
			continue
		}
		if !r.Health.Available(ch.ID) {
			skip(routing.ReasonChannelOpen)
			continue
		}
		lg := st.legs[ch.ID]
		if lg == nil {
			var rerr *relayError
			if lg, rerr = r.legFor(rq, ch); rerr != nil {
				st.untranslatable = rerr
				skip(routing.ReasonUntranslatable)
				continue
			}
			st.legs[ch.ID] = lg
		}
		prefer := -1
		if rt.how == routing.StickyFirst && rt.bound.ChannelID == ch.ID {
			prefer = rt.bound.Key
		}
		k, end, reason := r.takeKey(ch, st, prefer)
		if end == nil {
			skip(reason)
			continue
		}
		routeOK, routeProbe := r.Routing.AllowRoute(c.Route.ID)
		if !routeOK {
			end()
			skip(routing.ReasonRouteOpen)
			continue
		}
		allowed, probe := r.Health.Allow(ch.ID)
		if !allowed {
			end()
			if routeProbe { // hand the route's probe slot back: nothing was tried on it
				r.Routing.RecordRoute(c.Route.ID, health.ClassCanceled, 0, 0, true)
			}
			skip(routing.ReasonChannelOpen)
			continue
		}
		return &step{cand: c, group: g, lg: lg, key: k, end: end, probe: probe, routeProbe: routeProbe}, true
	}
	return nil, false
}

// takeKey picks an untried key of ch that is not cooling down, disabled or out of its rate-limit budget,
// and takes an in-flight slot on it within the channel's and the key's concurrency caps: the session's own
// key (prefer ≥ 0) when it can, else one by the channel's key strategy. A key at its cap is passed over for
// another; reason says why nothing was taken.
func (r *Relay) takeKey(ch *channel.Channel, st *attemptState, prefer int) (int, func(), string) {
	tried := st.triedKeys[ch.ID]
	var capped map[int]bool
	skip := func(i int) bool { return tried[i] || capped[i] || !r.Health.KeyAllowed(ch.ID, i) }
	take := func(k int) (func(), bool) {
		return r.Health.TryBegin(ch.ID, k, ch.MaxConcurrency, ch.KeyMaxConcurrency)
	}
	if prefer >= 0 && prefer < len(ch.Keys) && !skip(prefer) {
		if end, ok := take(prefer); ok {
			return prefer, end, ""
		}
		capped = map[int]bool{prefer: true}
	}
	for {
		k, ok := ch.PickKey(r.intn, skip)
		if !ok {
			if len(capped) > 0 {
				return 0, nil, routing.ReasonAtCap
			}
			return 0, nil, routing.ReasonNoKey
		}
		if end, ok := take(k); ok {
			return k, end, ""
		}
		if capped == nil {
			capped = map[int]bool{}
		}
		capped[k] = true
	}
}

// retryBudget is how many attempts a request may add after its first: the group's max_attempts − 1 where
// it sets one, else the retry_budget setting.
func (r *Relay) retryBudget(rq *request) int {
	if n := rq.route.Tuning.MaxAttempts; n > 0 { // the routing configuration of the key's group × model
		return n - 1
	}
	if len(rq.pool) > 0 {
		if n := rq.pool[0].Group.Failover.V.MaxAttempts; n > 0 {
			return n - 1
		}
	}
	return r.Settings.Get().RetryBudget
}

// groupDeadline is the key's group's request deadline in seconds (0: none of its own).
func groupDeadline(rq *request) int {
	if len(rq.pool) > 0 {
		return rq.pool[0].Group.Failover.V.DeadlineS
	}
	return 0
}

// outcome is how a request ended.
type outcome struct {
	ch        *channel.Channel
	keyIdx    int
	status    int  // status the client saw
	ok        bool // an upstream answer (or part of a stream) reached the client
	delivered bool // bytes of an upstream answer reached the client (billable)
	meter     adaptor.Meter
	firstByte time.Duration
	class     Class
	errMsg    string
	attempts  []model.Attempt
	sticky    string
	header    http.Header // the upstream's answer headers (rate-limit budget for health metrics)
	// What the log may show a user: errCode is the gateway's own error code for what the client got (an
	// i18n code such as "upstream_timeout"); errShown says the upstream's error text itself was passed to the
	// client (a client error passed through), so the user may read it in their logs.
	errCode  string
	errShown bool
	// upstreamErr: the upstream itself ended a delivered answer with an error event (Anthropic error,
	// Responses response.failed, an OpenAI chunk carrying "error"); only the usage it reported is billed.
	upstreamErr bool
	// deadlineCut: the request deadline ended the committed answer (like a total timeout): the request's
	// limit, not the channel's fault.
	deadlineCut bool
	leg         *leg // what the answering (or last) attempt sent: its protocols go in the log row
	// group and route that served ("" when nothing answered); decision is how the request was routed.
	group, route string
	decision     *routing.Decision
}

// attempt walks the plan until a candidate answers or the retry budget, the plan or the client run out.
func (r *Relay) attempt(c *gin.Context, rq *request) *outcome {
	st := &attemptState{triedKeys: map[int64]map[int]bool{}, skip: map[int64]bool{}, legs: map[int64]*leg{},
		budget: r.retryBudget(rq)}
	ctx := c.Request.Context()
	st.rt = r.plan(ctx, c.Request.Header, rq)
	rt := st.rt
	if rerr := excludedAll(rt, rq.model); rerr != nil { // the caller's preferences left nothing: say which
		fail(c, rq.proto, rerr)
		return &outcome{status: rerr.status, class: ClassNone, errMsg: rerr.code, errCode: rerr.code, decision: &rt.decision}
	}
	rq.limits = newDeadlines(rq.start, r.Settings.Get(), groupDeadline(rq))
	for {
		if cause := rq.limits.expired(time.Now()); cause != nil {
			st.last = budgetFailure(cause)
			break
		}
		s, ok := r.next(st, rq)
		if !ok {
			break
		}
		ch, k, route := s.cand.Channel, s.key, s.cand.Route
		if s.lg.local {
			s.end()
			if s.routeProbe {
				r.Routing.RecordRoute(route.ID, health.ClassCanceled, 0, 0, true)
			}
			return r.localCount(c, rq, s.lg)
		}
		if st.triedKeys[ch.ID] == nil {
			st.triedKeys[ch.ID] = map[int]bool{}
		}
		st.triedKeys[ch.ID][k] = true
		if rq.debug {
			h := c.Writer.Header()
			h.Set("X-Tollgate-Channel", strconv.FormatInt(ch.ID, 10))
			h.Set("X-Tollgate-Attempt", strconv.Itoa(len(st.attempts)+1))
			h.Set("X-Tollgate-Route", s.group+"/"+route.Name)
			h.Set("X-Tollgate-Strategy", rt.plan.Strategy)
			if note := rt.note(ch); note != "" {
				h.Set("X-Tollgate-Sticky", note)
			}
		}
		began := time.Now()
		out, f := r.exchange(c, rq, s.lg, ch, k)
		s.end()
		a := model.Attempt{ChannelID: ch.ID, KeyIndex: k, LatencyMs: time.Since(began).Milliseconds()}
		o := health.Outcome{ChannelID: ch.ID, Key: k, Model: rq.model, Latency: time.Since(began), Probe: s.probe}
		if f == nil || out.delivered {
			a.Class, a.Status = string(out.class), out.status
			o.Class, o.Status, o.FirstByte = out.class, out.status, out.firstByte
			o.RateLimitRemaining, o.RateLimitReset = rateLimitOf(out.header)
			if out.deadlineCut {
				o.Class = ClassCanceled // neutral for the channel's breaker
			}
			r.Health.Record(o)
			r.Routing.RecordRoute(route.ID, o.Class, o.Status, o.Latency, s.routeProbe)
			rt.decision.Choose(s.group, route.Name, ch.ID, k)
			out.attempts = append(st.attempts, a)
			out.sticky, out.group, out.route, out.decision = rt.note(ch), s.group, route.Name, &rt.decision
			rt.decision.Sticky = out.sticky
			rq.ratio = r.ratioFor(s.group, rq.who.user.Tier) // billed at the group that served
			if out.class == ClassNone || out.class == ClassCanceled {
				// A streamed answer is complete at the client before this: a client that leaves at once
				// cancels ctx, and the binding must still be stored.
				r.bind(context.WithoutCancel(ctx), rq, rt, s.cand, k)
			}
			return out
		}
		a.Class, a.Status = string(f.class), f.status
		o.Class, o.Status, o.RetryAfter, o.Err = f.class, f.status, f.retryAfter, f.message()
		o.RateLimitRemaining, o.RateLimitReset = rateLimitOf(f.header)
		cut := cutByBudget(f.err)
		if cut {
			o.Class = ClassCanceled // the request ran out of time, the channel did not breach its own timeouts
		}
		r.Health.Record(o)
		r.Routing.RecordRoute(route.ID, o.Class, o.Status, o.Latency, s.routeProbe)
		rt.decision.Tried(s.group, route.Name, ch.ID, k, string(f.class))
		st.attempts = append(st.attempts, a)
		st.last, st.lastCh = f, ch
		if cut {
			st.last = budgetFailure(f.err)
			break
		}
		if f.class == ClassAuth || f.class == ClassUpstreamQuota {
			if r.Alerts != nil {
				r.Alerts.KeyDisabled(ch.ID, ch.Name, k, string(f.class))
			}
			r.maybeAutoDisable(ch)
		}
		if channelLevel(f.class) {
			st.skip[ch.ID] = true
		}
		if !retryable(f.class) || st.budget <= 0 {
			break
		}
		st.budget--
	}
	out := r.failed(c, rq, st)
	out.sticky, out.decision = rt.note(nil), &rt.decision
	rt.decision.Sticky = out.sticky
	return out
}

// maybeAutoDisable turns a channel whose every key is disabled into auto_disabled (off the request path).
func (r *Relay) maybeAutoDisable(ch *channel.Channel) {
	if !r.Health.AllKeysDisabled(ch.ID, len(ch.Keys)) {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := r.Channels.SetStatus(ctx, ch.ID, model.StatusAutoDisabled); err != nil {
			slog.Error("auto-disable channel", "channel", ch.ID, "err", err)
			return
		}
		slog.Warn("channel auto-disabled: every key was refused", "channel", ch.ID, "name", ch.Name)
		if r.Alerts != nil {
			r.Alerts.ChannelAutoDisabled(ch.ID, ch.Name)
		}
	}()
}

// failed answers the client after every attempt failed: an upstream client error passes through as the
// upstream said it (the request itself is wrong); anything else becomes one clear error in the protocol.
// out.errCode is the gateway's code for what the client got; out.errShown says the upstream's own error
// body was what the client got.
func (r *Relay) failed(c *gin.Context, rq *request, st *attemptState) *outcome {
	out := &outcome{attempts: st.attempts, ch: st.lastCh}
	if st.lastCh != nil {
		out.leg = st.legs[st.lastCh.ID] // the log row names the protocol the failed attempt spoke
	}
	f := st.last
	if f == nil && st.untranslatable != nil {
		rerr := st.untranslatable
		fail(c, rq.proto, rerr)
		out.status, out.class, out.errMsg, out.errCode = rerr.status, ClassNone, rerr.code, rerr.code
		return out
	}
	if f == nil {
		rerr := newErr(http.StatusServiceUnavailable, "no_channel", rq.model)
		fail(c, rq.proto, rerr)
		out.status, out.class, out.errMsg, out.errCode = rerr.status, ClassNone, "no healthy channel", rerr.code
		return out
	}
	out.class, out.errMsg = f.class, f.message()
	if f.local != nil {
		// The gateway's own answer: a budget's 504 keeps its class (timeout) and cause for the log; a refused
		// overlapped reservation has no class and leaves no log row (finish).
		fail(c, rq.proto, f.local)
		out.status, out.errCode = f.local.status, f.local.code
		if f.err == nil {
			out.class, out.errMsg = ClassNone, f.local.code
		}
		return out
	}
	if f.class == ClassCanceled {
		out.status = 499
		c.Abort()
		return out
	}
	if f.class == ClassClient && len(f.body) > 0 {
		out.status = mappedStatus(st.lastCh, f.status)
		writeJSON(c, rq, out.status, clientErrorBody(rq, f))
		c.Abort()
		out.errCode, out.errShown = "upstream_client_error", true
		return out
	}
	var rerr *relayError
	switch {
	case f.class == ClassClient:
		status := f.status
		if status < 400 || status >= 500 {
			status = http.StatusBadRequest
		}
		rerr = newErr(status, "upstream_client_error")
	case f.class == ClassTimeout:
		rerr = newErr(http.StatusGatewayTimeout, "upstream_timeout")
	case f.class == ClassRateLimited:
		rerr = newErr(http.StatusTooManyRequests, "upstream_error", "rate limited")
	case f.class == ClassBadReply:
		rerr = newErr(http.StatusBadGateway, "upstream_bad_reply")
	case overloaded(f):
		// Anthropic's clients know 529 overloaded_error (and retry it with backoff); OpenAI's know a 503.
		status := http.StatusServiceUnavailable
		if rq.proto == adaptor.Anthropic {
			status = 529
		}
		rerr = newErr(status, "upstream_overloaded")
	default:
		rerr = newErr(http.StatusBadGateway, "upstream_error", string(f.class))
	}
	rerr.status = mappedStatus(st.lastCh, rerr.status)
	fail(c, rq.proto, rerr)
	out.status, out.errCode = rerr.status, rerr.code
	return out
}

// overloaded says whether a failure is the upstream saying it is overloaded: a 529 or 503, or an overloaded
// error (overloaded_error, server_is_overloaded) in its structured fields, as an answer or a stream's first event.
func overloaded(f *failure) bool {
	if f.class != ClassServer {
		return false
	}
	if f.status == 529 || f.status == http.StatusServiceUnavailable {
		return true
	}
	for _, v := range errorFields(f.body) {
		if v == "overloaded_error" || v == "server_is_overloaded" {
			return true
		}
	}
	return false
}

package relay

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"tollgate/model"
	"tollgate/relay/adaptor"
	"tollgate/service/channel"
	"tollgate/service/health"
	"tollgate/service/setting"
	"tollgate/service/sticky"
)

// attemptState is the per-request retry state: a value, not a counter tied to priority tiers. After a
// failure the next pick is re-decided over what is left: the rest of the same tier first, then lower tiers;
// never the same key twice.
type attemptState struct {
	triedKeys map[int64]map[int]bool // channel → key indexes already used
	skip      map[int64]bool         // channels out of the running for this request
	budget    int                    // attempts left after the current one
	attempts  []model.Attempt
	last      *failure
	lastCh    *channel.Channel
	preferred int64          // the sticky channel, tried first while healthy
	legs      map[int64]*leg // each channel's plan, made once per request (leg.go)
	// untranslatable: a channel skipped because the request cannot be sent to its protocol faithfully; the
	// caller's 400 when no other channel answers.
	untranslatable *relayError
}

// deadlines are a request's time budgets across all of its attempts (a zero time: no budget). Each attempt's
// own timeouts (the channel's, or the defaults) are capped by what is left, so retries never stretch a
// caller's wait past them: three attempts with 5-minute first-byte timeouts wait at most first_byte_budget.
type deadlines struct {
	end       time.Time // request_deadline: the whole request, attempts and answer included
	firstByte time.Time // first_byte_budget: until an upstream answers (response headers), across attempts
}

func newDeadlines(start time.Time, s *setting.Settings) deadlines {
	return deadlines{end: start.Add(time.Duration(s.RequestDeadline) * time.Second),
		firstByte: start.Add(time.Duration(s.FirstByteBudget) * time.Second)}
}

// capEnd caps d, an attempt's total timeout from now, by the request deadline; the error names what fires.
func (l deadlines) capEnd(now time.Time, d time.Duration, own error) (time.Duration, error) {
	return capBy(l.end, now, d, own, errRequestDeadline)
}

// capFirstByte caps d, an attempt's first-byte timeout from now, by the first-byte budget and the deadline.
func (l deadlines) capFirstByte(now time.Time, d time.Duration, own error) (time.Duration, error) {
	d, cause := capBy(l.firstByte, now, d, own, errFirstByteBudget)
	return capBy(l.end, now, d, cause, errRequestDeadline)
}

func capBy(limit, now time.Time, d time.Duration, own, budget error) (time.Duration, error) {
	if !limit.IsZero() {
		if left := limit.Sub(now); left < d {
			return max(left, 0), budget
		}
	}
	return d, own
}

// expired is the budget that is used up at now (nil: time is left for another attempt).
func (l deadlines) expired(now time.Time) error {
	switch {
	case !l.end.IsZero() && !now.Before(l.end):
		return errRequestDeadline
	case !l.firstByte.IsZero() && !now.Before(l.firstByte):
		return errFirstByteBudget
	}
	return nil
}

// cutByBudget says an attempt was ended by the request's budget rather than by one of the channel's own
// timeouts: the channel is not blamed for it (neutral for its breaker), and no further attempt has time.
func cutByBudget(err error) bool {
	return errors.Is(err, errRequestDeadline) || errors.Is(err, errFirstByteBudget)
}

// budgetFailure is the 504 the caller gets when a budget ran out before anything reached it.
func budgetFailure(cause error) *failure {
	code := "request_deadline"
	if errors.Is(cause, errFirstByteBudget) {
		code = "first_byte_deadline"
	}
	return &failure{class: ClassTimeout, err: cause, local: newErr(http.StatusGatewayTimeout, code)}
}

// channelLevel says whether a failure condemns the whole channel for this request, or only the key.
func channelLevel(c Class) bool {
	switch c {
	case ClassRateLimited, ClassAuth, ClassUpstreamQuota:
		return false
	}
	return true
}

// usableKey finds an untried key of ch that is not cooling down or disabled.
func (r *Relay) usableKey(ch *channel.Channel, st *attemptState) (int, bool) {
	tried := st.triedKeys[ch.ID]
	return ch.PickKey(r.intn, func(i int) bool { return tried[i] || !r.Health.KeyAllowed(ch.ID, i) })
}

// eligible says whether ch may still be considered (health consulted without taking a probe slot).
func (r *Relay) eligible(ch *channel.Channel, st *attemptState, modelName string) bool {
	return !st.skip[ch.ID] && len(st.triedKeys[ch.ID]) < len(ch.Keys) && r.Health.ModelAllowed(ch.ID, modelName) &&
		r.Health.Available(ch.ID)
}

// pick chooses the next channel and key: the sticky channel while healthy, else the highest priority tier
// that still has an eligible channel, weighted random inside the tier (same-protocol channels first when
// prefer_same_protocol is on). A channel the request cannot be translated for is skipped. Only the chosen
// channel asks the breaker for admission (which may take a half-open probe slot); one that refuses is skipped.
func (r *Relay) pick(cands []*channel.Channel, st *attemptState, rq *request) (ch *channel.Channel, lg *leg, key int, probe bool, ok bool) {
	modelName := rq.model
	for {
		ch = nil
		if st.preferred != 0 {
			for _, c := range cands {
				if c.ID == st.preferred && r.eligible(c, st, modelName) {
					ch = c
				}
			}
			st.preferred = 0
		}
		if ch == nil {
			ch = r.weighted(cands, st, rq)
		}
		if ch == nil {
			return nil, nil, 0, false, false
		}
		if lg = st.legs[ch.ID]; lg == nil {
			var rerr *relayError
			if lg, rerr = r.legFor(rq, ch); rerr != nil {
				st.skip[ch.ID], st.untranslatable = true, rerr
				continue
			}
			st.legs[ch.ID] = lg
		}
		k, hasKey := r.usableKey(ch, st)
		if !hasKey {
			st.skip[ch.ID] = true
			continue
		}
		allowed, isProbe := r.Health.Allow(ch.ID)
		if !allowed {
			st.skip[ch.ID] = true
			continue
		}
		return ch, lg, k, isProbe, true
	}
}

// weighted picks inside the first tier (cands are sorted by priority) with an eligible channel; with
// prefer_same_protocol, among the tier's channels that speak the caller's protocol when it has any.
func (r *Relay) weighted(cands []*channel.Channel, st *attemptState, rq *request) *channel.Channel {
	var tier []*channel.Channel
	prefer := r.Settings.Get().PreferSameProtocol
	sameOnly := false
	for _, ch := range cands {
		if !r.eligible(ch, st, rq.model) {
			continue
		}
		if len(tier) > 0 && ch.Priority != tier[0].Priority {
			break
		}
		if prefer {
			same := native(r.Adaptors[ch.Type], rq)
			if sameOnly && !same {
				continue
			}
			if same && !sameOnly {
				sameOnly, tier = true, tier[:0]
			}
		}
		tier = append(tier, ch)
	}
	switch len(tier) {
	case 0:
		return nil
	case 1:
		return tier[0]
	}
	// A channel back from OPEN earns its weight back over recovery_ramp (health.Tracker.RampShare), so a
	// channel that just recovered is not handed its full share of traffic at once.
	ramp := time.Duration(r.Settings.Get().RecoveryRamp) * time.Second
	weight := func(ch *channel.Channel) int {
		w := max(ch.Weight, 1) * rampScale
		if ramp > 0 {
			w = max(int(float64(w)*r.Health.RampShare(ch.ID, ramp)), 1)
		}
		return w
	}
	var buf [16]int
	ws := buf[:0]
	total := 0
	for _, ch := range tier {
		w := weight(ch)
		ws = append(ws, w)
		total += w
	}
	n := r.intn(total)
	for i, t := range tier {
		if n -= ws[i]; n < 0 {
			return t
		}
	}
	return tier[len(tier)-1]
}

// rampScale turns integer weights into fine-grained ones, so that 10 % of a weight of 1 is still a share.
const rampScale = 1000

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
}

// attempt tries channels until one answers or the retry budget, the candidates or the client run out.
func (r *Relay) attempt(c *gin.Context, rq *request, cands []*channel.Channel) *outcome {
	st := &attemptState{triedKeys: map[int64]map[int]bool{}, skip: map[int64]bool{}, legs: map[int64]*leg{},
		budget: r.Settings.Get().RetryBudget}
	ctx := c.Request.Context()
	// Stickiness only matters when there is a choice; a single candidate costs no cache round trip.
	useSticky := len(cands) > 1
	var sk sticky.Key
	var bound sticky.Binding
	var hasBinding bool
	if useSticky {
		sk = sticky.Derive(rq.body, c.Request.Header, rq.who.tok.ID, rq.model)
		bound, hasBinding = r.Sticky.Get(ctx, rq.who.group, rq.model, sk)
		if hasBinding {
			st.preferred = bound.ChannelID
		}
	}
	stickyNote := func(ch *channel.Channel) string {
		if !useSticky {
			return ""
		}
		if hasBinding && ch != nil && ch.ID == bound.ChannelID {
			return "hit:" + string(sk.Kind)
		}
		return "miss:" + string(sk.Kind)
	}
	rq.limits = newDeadlines(rq.start, r.Settings.Get())
	for {
		if cause := rq.limits.expired(time.Now()); cause != nil {
			st.last = budgetFailure(cause)
			break
		}
		ch, lg, k, probe, ok := r.pick(cands, st, rq)
		if !ok {
			break
		}
		if lg.local {
			return r.localCount(c, rq, lg)
		}
		if st.triedKeys[ch.ID] == nil {
			st.triedKeys[ch.ID] = map[int]bool{}
		}
		st.triedKeys[ch.ID][k] = true
		if rq.debug {
			h := c.Writer.Header()
			h.Set("X-Tollgate-Channel", strconv.FormatInt(ch.ID, 10))
			h.Set("X-Tollgate-Attempt", strconv.Itoa(len(st.attempts)+1))
			if note := stickyNote(ch); note != "" {
				h.Set("X-Tollgate-Sticky", note)
			}
		}
		began := time.Now()
		end := r.Health.Begin(ch.ID, k)
		out, f := r.exchange(c, rq, lg, ch, k)
		end()
		a := model.Attempt{ChannelID: ch.ID, KeyIndex: k, LatencyMs: time.Since(began).Milliseconds()}
		o := health.Outcome{ChannelID: ch.ID, Key: k, Model: rq.model, Latency: time.Since(began), Probe: probe}
		if f == nil || out.delivered {
			a.Class, a.Status = string(out.class), out.status
			o.Class, o.Status, o.FirstByte = out.class, out.status, out.firstByte
			o.RateLimitRemaining, o.RateLimitReset = rateLimitOf(out.header)
			if out.deadlineCut {
				o.Class = ClassCanceled // neutral for the channel's breaker
			}
			r.Health.Record(o)
			out.attempts = append(st.attempts, a)
			out.sticky = stickyNote(ch)
			if useSticky && (out.class == ClassNone || out.class == ClassCanceled) {
				r.Sticky.Bind(ctx, rq.who.group, rq.model, sk, bound, hasBinding, ch.ID)
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
		if cut {
			st.attempts = append(st.attempts, a)
			st.last, st.lastCh = budgetFailure(f.err), ch
			break
		}
		if f.class == ClassAuth || f.class == ClassUpstreamQuota {
			r.maybeAutoDisable(ch)
		}
		st.attempts = append(st.attempts, a)
		st.last, st.lastCh = f, ch
		if channelLevel(f.class) {
			st.skip[ch.ID] = true
		}
		if !retryable(f.class) || st.budget <= 0 {
			break
		}
		st.budget--
	}
	out := r.failed(c, rq, st)
	out.sticky = stickyNote(nil)
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
		writeJSON(c, out.status, clientErrorBody(rq, f))
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

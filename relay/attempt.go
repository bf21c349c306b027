package relay

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"tollgate/model"
	"tollgate/relay/meter"
	"tollgate/service/channel"
)

// attemptState is the per-request retry state: a value, not a counter tied to priority tiers. After a
// failure the next pick is re-decided over what is left: the rest of the same tier first, then lower tiers.
type attemptState struct {
	triedKeys map[int64]map[int]bool // channel → key indexes already used
	deadCh    map[int64]bool         // channels excluded for this request (channel-level failure)
	budget    int                    // attempts left after the current one
	attempts  []model.Attempt
	last      *failure
	lastCh    *channel.Channel
}

// channelLevel says whether a failure condemns the whole channel for this request, or only the key.
func channelLevel(c Class) bool {
	switch c {
	case ClassRateLimited, ClassAuth, ClassUpstreamQuota:
		return false
	}
	return true
}

// pick chooses the next channel and key: the highest priority tier with an untried key, weighted random
// inside the tier.
func (r *Relay) pick(cands []*channel.Channel, st *attemptState) (*channel.Channel, int, bool) {
	var tier []*channel.Channel
	for _, ch := range cands {
		if st.deadCh[ch.ID] || len(st.triedKeys[ch.ID]) >= len(ch.Keys) {
			continue
		}
		if len(tier) > 0 && ch.Priority != tier[0].Priority {
			break // cands are sorted by priority: the first tier with a usable channel wins
		}
		tier = append(tier, ch)
	}
	if len(tier) == 0 {
		return nil, 0, false
	}
	total := 0
	for _, ch := range tier {
		total += max(ch.Weight, 1)
	}
	n := r.intn(total)
	ch := tier[len(tier)-1]
	for _, t := range tier {
		if n -= max(t.Weight, 1); n < 0 {
			ch = t
			break
		}
	}
	tried := st.triedKeys[ch.ID]
	k, ok := ch.PickKey(r.intn, func(i int) bool { return tried[i] })
	return ch, k, ok
}

// outcome is how a request ended.
type outcome struct {
	ch        *channel.Channel
	keyIdx    int
	status    int  // status the client saw
	ok        bool // an upstream answer (or part of a stream) reached the client
	delivered bool // bytes of an upstream answer reached the client (billable)
	meter     *meter.Meter
	firstByte time.Duration
	class     Class
	errMsg    string
	attempts  []model.Attempt
}

// attempt tries channels until one answers or the retry budget, the candidates or the client run out.
func (r *Relay) attempt(c *gin.Context, rq *request, cands []*channel.Channel) *outcome {
	st := &attemptState{triedKeys: map[int64]map[int]bool{}, deadCh: map[int64]bool{}, budget: r.Settings.Get().RetryBudget}
	for {
		ch, k, ok := r.pick(cands, st)
		if !ok {
			break
		}
		if st.triedKeys[ch.ID] == nil {
			st.triedKeys[ch.ID] = map[int]bool{}
		}
		st.triedKeys[ch.ID][k] = true
		began := time.Now()
		out, f := r.exchange(c, rq, ch, k)
		a := model.Attempt{ChannelID: ch.ID, KeyIndex: k, LatencyMs: time.Since(began).Milliseconds()}
		if f == nil || out.delivered {
			a.Class = string(out.class)
			a.Status = out.status
			out.attempts = append(st.attempts, a)
			return out
		}
		a.Class, a.Status = string(f.class), f.status
		st.attempts = append(st.attempts, a)
		st.last, st.lastCh = f, ch
		if channelLevel(f.class) {
			st.deadCh[ch.ID] = true
		}
		if !f.class.Retryable() || st.budget <= 0 {
			break
		}
		st.budget--
	}
	return r.failed(c, rq, st)
}

// failed answers the client after every attempt failed: an upstream client error passes through as the
// upstream said it (the request itself is wrong); anything else becomes one clear error in the protocol.
func (r *Relay) failed(c *gin.Context, rq *request, st *attemptState) *outcome {
	out := &outcome{attempts: st.attempts, ch: st.lastCh}
	f := st.last
	if f == nil {
		rerr := newErr(http.StatusServiceUnavailable, "no_channel", rq.model)
		fail(c, rq.proto, rerr)
		out.status, out.class, out.errMsg = rerr.status, ClassNone, "no channel"
		return out
	}
	out.class, out.errMsg = f.class, f.message()
	if f.class == ClassCanceled {
		out.status = 499
		c.Abort()
		return out
	}
	if f.class == ClassClient && len(f.body) > 0 {
		out.status = mappedStatus(st.lastCh, f.status)
		writeJSON(c, out.status, f.body)
		c.Abort()
		return out
	}
	var rerr *relayError
	switch f.class {
	case ClassTimeout:
		rerr = newErr(http.StatusGatewayTimeout, "upstream_timeout")
	case ClassRateLimited:
		rerr = newErr(http.StatusTooManyRequests, "upstream_error", "rate limited")
	case ClassBadReply:
		rerr = newErr(http.StatusBadGateway, "upstream_bad_reply")
	default:
		rerr = newErr(http.StatusBadGateway, "upstream_error", string(f.class))
	}
	rerr.status = mappedStatus(st.lastCh, rerr.status)
	fail(c, rq.proto, rerr)
	out.status = rerr.status
	return out
}

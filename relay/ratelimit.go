package relay

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"tollgate/service/netkey"
	"tollgate/service/pricing"
)

// Per-minute limits, all counted in the cache (shared by every node on Redis) and each costing nothing when
// its setting is 0:
//
//   - ip_rpm (setting): requests per client network per minute on /v1, before authentication, so requests
//     with bad keys count too. A sliding window: the current calendar minute's count plus the previous
//     minute's, weighted by how much of it still lies inside the last 60 s. The client is gin's ClientIP
//     (X-Forwarded-For only from TRUSTED_PROXIES), an IPv6 client counted by its /64 (netkey).
//   - rpm of a key and of a user: requests per calendar minute, counted at admission.
//   - tpm of a key and of a user: tokens (prompt + completion of the usage billed) per calendar minute,
//     counted when a request finishes and checked when the next one is admitted. A request is refused only
//     when the minute already reached the limit, so the requests in flight when it is reached can take a
//     minute over it by what they use; the next request waits for the next minute.

// minuteLeft is the time until the calendar minute of at ends.
func minuteLeft(at time.Time) time.Duration {
	return at.Truncate(time.Minute).Add(time.Minute).Sub(at)
}

func minuteKey(prefix string, id int64, at time.Time) string {
	return prefix + strconv.FormatInt(id, 10) + ":" + strconv.FormatInt(at.Unix()/60, 10)
}

// limitIP applies the ip_rpm setting to one /v1 request.
func (r *Relay) limitIP(c *gin.Context) *relayError {
	limit := int64(r.Settings.Get().IPRPM)
	if limit <= 0 {
		return nil
	}
	ctx, now := c.Request.Context(), time.Now()
	net, minute := netkey.Of(c.ClientIP()), now.Unix()/60
	cur, err := r.Cache.Incr(ctx, "iprpm:"+net+":"+strconv.FormatInt(minute, 10), 1, 2*time.Minute+5*time.Second)
	if err != nil {
		return newErr(http.StatusServiceUnavailable, "cache_unavailable")
	}
	var prev int64
	if cur <= limit { // over the limit this minute alone: the previous one cannot change the answer
		b, ok, err := r.Cache.Get(ctx, "iprpm:"+net+":"+strconv.FormatInt(minute-1, 10))
		if err != nil {
			return newErr(http.StatusServiceUnavailable, "cache_unavailable")
		}
		if ok {
			prev, _ = strconv.ParseInt(string(b), 10, 64)
		}
	}
	elapsed := now.Sub(now.Truncate(time.Minute))
	if slidingCount(prev, cur, elapsed) <= float64(limit) {
		return nil
	}
	return rateRefusal("ip_rate_limited", slidingWait(prev, cur, limit, elapsed), limit)
}

// slidingCount estimates the requests of the last 60 s from two calendar-minute buckets.
func slidingCount(prev, cur int64, elapsed time.Duration) float64 {
	return float64(prev)*(1-elapsed.Seconds()/60) + float64(cur)
}

// slidingWait is how long, with no new request, until slidingCount is within limit again.
func slidingWait(prev, cur, limit int64, elapsed time.Duration) time.Duration {
	left := time.Minute - elapsed
	if cur <= limit && prev > 0 { // within this minute, as the previous one slides out
		t := left.Seconds() - float64(limit-cur)*60/float64(prev)
		return time.Duration(max(t, 1) * float64(time.Second))
	}
	// Only after this minute ends, as it slides out in turn.
	return left + time.Duration((1-float64(limit)/float64(cur))*60*float64(time.Second))
}

// limitRate applies the key's and the owner's rpm and tpm at admission time at.
func (r *Relay) limitRate(ctx context.Context, k *caller, at time.Time) *relayError {
	left := minuteLeft(at)
	for _, l := range []struct {
		limit        int64
		prefix, code string
		id           int64
	}{{int64(k.tok.RPM), "rpm:", "rate_limited", k.tok.ID}, {int64(k.user.RPM), "urpm:", "user_rate_limited", k.user.ID}} {
		if l.limit <= 0 {
			continue
		}
		n, err := r.Cache.Incr(ctx, minuteKey(l.prefix, l.id, at), 1, 70*time.Second)
		if err != nil {
			return newErr(http.StatusServiceUnavailable, "cache_unavailable")
		}
		if n > l.limit {
			return rateRefusal(l.code, left)
		}
	}
	for _, l := range tpmCounters(k) {
		if l.limit <= 0 {
			continue
		}
		n, err := r.Cache.Incr(ctx, minuteKey(l.prefix, l.id, at), 0, 70*time.Second)
		if err != nil {
			return newErr(http.StatusServiceUnavailable, "cache_unavailable")
		}
		if n >= l.limit {
			return rateRefusal("tpm_exceeded", left, l.limit)
		}
	}
	return nil
}

type tpmCounter struct {
	limit  int64
	prefix string
	id     int64
}

// tpmCounters are the key's and the owner's tokens-per-minute counters.
func tpmCounters(k *caller) [2]tpmCounter {
	return [2]tpmCounter{{k.tok.TPM, "tpm:", k.tok.ID}, {k.user.TPM, "utpm:", k.user.ID}}
}

// countTokens adds a finished request's tokens to the tpm counters of the minute it finished in.
func (r *Relay) countTokens(ctx context.Context, rq *request, u pricing.Usage) {
	n := u.PromptTotal() + u.Output
	if n <= 0 {
		return
	}
	at := r.now()
	for _, l := range tpmCounters(rq.who) {
		if l.limit > 0 {
			_, _ = r.Cache.Incr(ctx, minuteKey(l.prefix, l.id, at), n, 70*time.Second)
		}
	}
}

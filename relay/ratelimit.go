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
	ctx, now := c.Request.Context(), r.now()
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

// minuteCounter is one per-minute limit of a key or its owner: its setting, its cache key prefix, whose it is
// and the code a refusal carries.
type minuteCounter struct {
	limit        int64
	prefix, code string
	id           int64
}

// rpmCounters are the key's and the owner's requests-per-minute counters.
func rpmCounters(k *caller) [2]minuteCounter {
	return [2]minuteCounter{{int64(k.tok.RPM), "rpm:", "rate_limited", k.tok.ID},
		{int64(k.user.RPM), "urpm:", "user_rate_limited", k.user.ID}}
}

// tpmCounters are the key's and the owner's tokens-per-minute counters.
func tpmCounters(k *caller) [2]minuteCounter {
	return [2]minuteCounter{{k.tok.TPM, "tpm:", "tpm_exceeded", k.tok.ID}, {k.user.TPM, "utpm:", "tpm_exceeded", k.user.ID}}
}

// limitRate applies the key's and the owner's rpm (each admission counts one) and tpm (checked against the
// tokens already counted this minute: an increment by 0 reads the counter) at admission time at.
func (r *Relay) limitRate(ctx context.Context, k *caller, at time.Time) *relayError {
	for _, l := range rpmCounters(k) {
		if l.limit <= 0 {
			continue // checked before the call, which would box its arguments for nothing
		}
		if rerr := r.countMinute(ctx, l, at, 1, l.limit); rerr != nil {
			return rerr
		}
	}
	for _, l := range tpmCounters(k) {
		if l.limit <= 0 {
			continue
		}
		if rerr := r.countMinute(ctx, l, at, 0, l.limit-1, l.limit); rerr != nil {
			return rerr
		}
	}
	return nil
}

// countMinute adds delta to the counter's current minute and refuses (with args for the message) when the
// result is above most. The caller skips a counter whose limit is not set.
func (r *Relay) countMinute(ctx context.Context, l minuteCounter, at time.Time, delta, most int64, args ...any) *relayError {
	n, err := r.Cache.Incr(ctx, minuteKey(l.prefix, l.id, at), delta, 70*time.Second)
	if err != nil {
		return newErr(http.StatusServiceUnavailable, "cache_unavailable")
	}
	if n > most {
		return rateRefusal(l.code, minuteLeft(at), args...)
	}
	return nil
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

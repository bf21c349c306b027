package redemption

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"tollgate/service/apperr"
	"tollgate/service/cache"
	"tollgate/service/netkey"
)

// Guess limits. A redeem attempt that names no redeemable code (unknown, malformed or disabled: 404
// code_invalid) is a guess; each user and each client network (an IPv6 client counts as its /64) may make
// maxGuessesPerUser and maxGuessesPerIP of them per attemptWindow. Beyond that every attempt, even with a
// valid code, answers 429 too_many_attempts with Retry-After until the window ends, so the limit cannot be used
// as an oracle. A success, a used code (409) or an expired code (410) is not a guess: the caller held a real
// code. The windows are fixed (aligned to multiples of attemptWindow) and the counters live in the cache, so on
// Redis they hold across nodes.
const (
	attemptWindow     = 10 * time.Minute
	maxGuessesPerUser = 10
	maxGuessesPerIP   = 30
)

// guesses counts redeem attempts per user and per client network.
type guesses struct {
	cache cache.Cache
	now   func() time.Time
}

// reserve takes one attempt of the user's and of the network's allowance before the code is looked up, so that
// concurrent attempts cannot overshoot the limit; the returned release gives it back when the attempt turns out
// not to be a guess. An allowance already used up answers 429.
func (g guesses) reserve(ctx context.Context, userID int64, ip string) (release func(), err error) {
	now := g.now()
	start := now.Truncate(attemptWindow)
	bucket := strconv.FormatInt(start.Unix(), 10)
	keys := []string{"redeem:u:" + strconv.FormatInt(userID, 10) + ":" + bucket, "redeem:ip:" + netkey.Of(ip) + ":" + bucket}
	limits := []int64{maxGuessesPerUser, maxGuessesPerIP}
	ttl := attemptWindow + time.Minute
	taken := 0
	release = func() {
		for _, k := range keys[:taken] {
			_, _ = g.cache.Incr(context.WithoutCancel(ctx), k, -1, ttl)
		}
	}
	over := false
	for i, k := range keys {
		n, err := g.cache.Incr(ctx, k, 1, ttl)
		if err != nil {
			release()
			return nil, fmt.Errorf("redeem limit: %w", err)
		}
		taken = i + 1
		if n > limits[i] {
			over = true
			break
		}
	}
	if over {
		release()
		secs := int(start.Add(attemptWindow).Sub(now).Seconds()) + 1
		e := apperr.New(http.StatusTooManyRequests, "too_many_attempts", secs)
		e.RetryAfter = secs
		return nil, e
	}
	return release, nil
}

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

// guesses counts redeem guesses per user and per client network.
type guesses struct {
	cache cache.Cache
	now   func() time.Time
}

// window names the current window's counters and says when it ends.
func (g guesses) window(userID int64, ip string) (keys [2]string, limits [2]int64, ends time.Time, now time.Time) {
	now = g.now()
	start := now.Truncate(attemptWindow)
	bucket := strconv.FormatInt(start.Unix(), 10)
	keys = [2]string{"redeem:u:" + strconv.FormatInt(userID, 10) + ":" + bucket, "redeem:ip:" + netkey.Of(ip) + ":" + bucket}
	return keys, [2]int64{maxGuessesPerUser, maxGuessesPerIP}, start.Add(attemptWindow), now
}

func tooMany(ends, now time.Time) error {
	secs := int(ends.Sub(now).Seconds()) + 1
	e := apperr.New(http.StatusTooManyRequests, "too_many_attempts", secs)
	e.RetryAfter = secs
	return e
}

// blocked answers 429 when the user or the network has used up its guesses in this window: then every attempt,
// even with a valid code, is refused, so the limit is no oracle. It only reads the counters: an attempt with a
// real code (a success, 409, 410) never counts, so any number of them at once are answered on their merits.
func (g guesses) blocked(ctx context.Context, userID int64, ip string) error {
	keys, limits, ends, now := g.window(userID, ip)
	for i, k := range keys {
		v, ok, err := g.cache.Get(ctx, k)
		if err != nil {
			return fmt.Errorf("redeem limit: %w", err)
		}
		if n, _ := strconv.ParseInt(string(v), 10, 64); ok && n >= limits[i] {
			return tooMany(ends, now)
		}
	}
	return nil
}

// guessed counts one guess on both counters; the guess that goes past a limit (and every one after it, however
// many run at once: each increment is atomic) is answered 429 instead of 404, so no more than the limit of
// guesses per window ever learn that their code does not exist.
func (g guesses) guessed(ctx context.Context, userID int64, ip string) error {
	keys, limits, ends, now := g.window(userID, ip)
	over := false
	for i, k := range keys {
		n, err := g.cache.Incr(ctx, k, 1, attemptWindow+time.Minute)
		if err != nil {
			return fmt.Errorf("redeem limit: %w", err)
		}
		over = over || n > limits[i]
	}
	if over {
		return tooMany(ends, now)
	}
	return apperr.New(http.StatusNotFound, "code_invalid")
}

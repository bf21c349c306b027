package relay

import (
	"testing"
	"time"
)

// TestSlidingWindow_CountAndWaitAgree checks the two-bucket estimate and that the wait it announces is when
// the estimate (with no new request) is back within the limit.
func TestSlidingWindow_CountAndWaitAgree(t *testing.T) {
	for _, c := range []struct {
		prev, cur, limit int64
		elapsed, wait    time.Duration
	}{
		{prev: 10, cur: 1, limit: 10, elapsed: 0, wait: 6 * time.Second},
		{prev: 0, cur: 20, limit: 10, elapsed: 30 * time.Second, wait: 60 * time.Second},
		{prev: 30, cur: 6, limit: 10, elapsed: 50 * time.Second, wait: 2 * time.Second},
	} {
		if n := slidingCount(c.prev, c.cur, c.elapsed); n <= float64(c.limit) {
			t.Fatalf("%+v: count %.2f is within the limit; the case must be over it", c, n)
		}
		got := slidingWait(c.prev, c.cur, c.limit, c.elapsed)
		if d := got - c.wait; d < -time.Millisecond || d > time.Millisecond {
			t.Fatalf("%+v: wait %s, want %s", c, got, c.wait)
		}
		// At that moment, with no new request, the estimate is within the limit.
		at := c.elapsed + got
		prev, cur := c.prev, c.cur
		if at >= time.Minute {
			prev, cur, at = cur, 0, at-time.Minute
		}
		if n := slidingCount(prev, cur, at); n > float64(c.limit)+1e-6 {
			t.Fatalf("%+v: after %s the count is still %.3f", c, got, n)
		}
	}
}

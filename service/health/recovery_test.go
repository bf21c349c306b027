package health

import (
	"math"
	"testing"
	"time"
)

// A passing test of an OPEN channel does not hand it full traffic: it turns HALF_OPEN at once (before its
// cooldown ends), admits probe slots, and closes only after CloseAfter successes.
func TestTestPassed_OpenChannelGoesHalfOpenThenClosesAfterCloseAfter(t *testing.T) {
	tr, _ := newSolo(t, testConfig())
	fail(tr, 1, 0, ClassServer, 5)
	if h := tr.Snapshot(1, 1); h.State != StateOpen || h.CooldownUntil == nil {
		t.Fatalf("after 5 failures: %+v", h)
	}
	tr.TestPassed(1, 0)
	if h := tr.Snapshot(1, 1); h.State != StateHalfOpen || h.CooldownUntil != nil {
		t.Fatalf("a passing test of an OPEN channel: state %s cooldown %v, want half_open at once", h.State, h.CooldownUntil)
	}
	// HALF_OPEN admits HalfOpenProbes probes, not everything.
	if ok, probe := tr.Allow(1); !ok || !probe {
		t.Fatalf("first probe: ok %v probe %v", ok, probe)
	}
	if ok, _ := tr.Allow(1); ok {
		t.Fatal("HALF_OPEN admitted a second concurrent request with HalfOpenProbes = 1")
	}
	tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 0, Probe: true})
	if got := tr.Snapshot(1, 1).State; got != StateHalfOpen {
		t.Fatalf("after 1 of CloseAfter = 2 probe successes: %s", got)
	}
	tr.Allow(1)
	tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 0, Probe: true})
	h := tr.Snapshot(1, 1)
	if h.State != StateClosed || h.RecoveredAt == nil {
		t.Fatalf("after CloseAfter probe successes: %+v", h)
	}
}

// Tests alone can close a HALF_OPEN channel (a quiet channel gets no live probes): each pass counts as one
// probe success, and a pass takes no probe slot from live traffic.
func TestTestPassed_TestsCountAsProbeSuccessesInHalfOpen(t *testing.T) {
	tr, _ := newSolo(t, testConfig())
	fail(tr, 1, -1, ClassServer, 5)
	tr.TestPassed(1, -1) // OPEN → HALF_OPEN
	tr.TestPassed(1, -1) // 1 of 2
	if got := tr.Snapshot(1, 0).State; got != StateHalfOpen {
		t.Fatalf("after one pass in HALF_OPEN: %s", got)
	}
	if ok, probe := tr.Allow(1); !ok || !probe {
		t.Fatal("a test pass took the live probe slot")
	}
	tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: -1, Probe: true})
	if got := tr.Snapshot(1, 0).State; got != StateClosed {
		t.Fatalf("after a pass and a probe success: %s", got)
	}
	// A pass of a CLOSED channel changes nothing.
	tr.TestPassed(1, -1)
	if h := tr.Snapshot(1, 0); h.State != StateClosed {
		t.Fatalf("pass of a closed channel: %+v", h)
	}
}

// A pass clears only the key that was tested: a refused sibling stays refused.
func TestTestPassed_ClearsOnlyTheTestedKey(t *testing.T) {
	run(t, func(t *testing.T, c *cluster) {
		a, b := c.node(t, testConfig()), c.node(t, testConfig())
		a.Record(Outcome{RateLimitRemaining: -1, ChannelID: 7, Key: 0, Class: ClassAuth, Err: "revoked"})
		a.Record(Outcome{RateLimitRemaining: -1, ChannelID: 7, Key: 1, Class: ClassAuth, Err: "revoked"})
		a.Record(Outcome{RateLimitRemaining: -1, ChannelID: 7, Key: 2, Class: ClassRateLimited, RetryAfter: time.Hour})
		eventually(t, propagation, "B sees the refusals", func() bool {
			return !b.KeyAllowed(7, 0) && !b.KeyAllowed(7, 1) && !b.KeyAllowed(7, 2)
		})
		a.TestPassed(7, 1)
		if a.KeyAllowed(7, 0) || !a.KeyAllowed(7, 1) || a.KeyAllowed(7, 2) {
			t.Fatalf("A after a pass of key 1: keys %v", a.Snapshot(7, 3).Keys)
		}
		eventually(t, propagation, "B sees key 1 cleared", func() bool { return b.KeyAllowed(7, 1) })
		if b.KeyAllowed(7, 0) || b.KeyAllowed(7, 2) {
			t.Fatalf("B after a pass of key 1: keys %v", b.Snapshot(7, 3).Keys)
		}
		// A node that reads only the cache (it missed the bus) sees the same.
		late := New(testConfig(), c.cache, c.deafBus(t), c.clk.Now)
		if late.KeyAllowed(7, 0) || !late.KeyAllowed(7, 1) || late.KeyAllowed(7, 2) {
			t.Fatalf("late node: keys %v", late.Snapshot(7, 3).Keys)
		}
		if a.AllKeysDisabled(7, 2) {
			t.Fatal("AllKeysDisabled after key 1 came back")
		}
	})
}

// A channel that closes after being OPEN gets 10 % of its weight at once, rising linearly to 100 % over the
// ramp; every node sees the same ramp, including one that only reads the cache. A channel that never
// opened, and a ramp of 0, get full weight.
func TestRampShare_RisesFromTenPercentOverTheRampOnEveryNode(t *testing.T) {
	run(t, func(t *testing.T, c *cluster) {
		a, b := c.node(t, testConfig()), c.node(t, testConfig())
		const ramp = time.Minute
		if got := a.RampShare(3, ramp); got != 1 {
			t.Fatalf("never opened: share %v", got)
		}
		b.Allow(3) // B has read the (empty) cache: what it learns next comes over the bus
		fail(a, 3, -1, ClassServer, 5)
		if got := a.RampShare(3, ramp); got != 1 {
			t.Fatalf("OPEN (the breaker decides, not the ramp): share %v", got)
		}
		a.TestPassed(3, -1)
		a.TestPassed(3, -1)
		a.TestPassed(3, -1) // HALF_OPEN, then CloseAfter passes: CLOSED now
		if got := a.Snapshot(3, 0).State; got != StateClosed {
			t.Fatalf("state %s", got)
		}
		// B starts CLOSED too (it may not have heard of the trip yet): wait for the recovery itself to reach it.
		eventually(t, propagation, "B sees the recovery", func() bool {
			return b.Snapshot(3, 0).State == StateClosed && b.RampShare(3, ramp) < 1
		})
		late := New(testConfig(), c.cache, c.deafBus(t), c.clk.Now)
		late.Available(3) // reads the cache
		near := func(got, want float64) bool { return math.Abs(got-want) < 0.01 }
		var at time.Duration
		for _, step := range []struct {
			after time.Duration
			want  float64
		}{{0, 0.1}, {15 * time.Second, 0.325}, {30 * time.Second, 0.55}, {59 * time.Second, 0.985}, {60 * time.Second, 1}, {time.Hour, 1}} {
			c.clk.Advance(step.after - at)
			at = step.after
			for name, n := range map[string]*Tracker{"A": a, "B": b, "late": late} {
				if got := n.RampShare(3, ramp); !near(got, step.want) {
					t.Fatalf("%s at +%v: share %v, want %v", name, step.after, got, step.want)
				}
			}
		}
		if got := a.RampShare(3, 0); got != 1 {
			t.Fatalf("ramp 0: share %v", got)
		}
	})
}

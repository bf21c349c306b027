package health

import (
	"context"
	"testing"
	"time"
)

func TestForce_OpenHoldsTheChannelUntilTheNextForce(t *testing.T) {
	tr, clk := newSolo(t, testConfig())
	if err := tr.Force(1, -1, ForceOpen); err != nil {
		t.Fatal(err)
	}
	for _, wait := range []time.Duration{0, 31 * time.Second, 3 * time.Minute, 48 * time.Hour} {
		clk.Advance(wait)
		if tr.Available(1) {
			t.Fatalf("forced open channel available after %v", wait)
		}
		if ok, _ := tr.Allow(1); ok {
			t.Fatalf("forced open channel admitted a request after %v", wait)
		}
	}
	h := tr.Snapshot(1, 0)
	if h.State != StateOpen || !h.Forced || h.CooldownUntil != nil {
		t.Fatalf("snapshot %+v", h)
	}
	if tr.States()[1] != StateOpen {
		t.Fatalf("States() = %v", tr.States())
	}
	// Neither a passing test nor successes lift an admin's hold.
	tr.TestPassed(1, 0)
	tr.TestPassed(1, 0)
	tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 0, Probe: true})
	if tr.Available(1) {
		t.Fatal("a passing test lifted a forced open")
	}

	if err := tr.Force(1, -1, ForceClose); err != nil {
		t.Fatal(err)
	}
	if !tr.Available(1) {
		t.Fatal("force close left the channel unavailable")
	}
	if h := tr.Snapshot(1, 0); h.State != StateClosed || h.Forced {
		t.Fatalf("after close %+v", h)
	}
	// A normal breaker again: five consecutive failures trip it with the base cooldown, which ends.
	fail(tr, 1, -1, ClassServer, 5)
	if tr.Available(1) {
		t.Fatal("breaker did not trip after force close")
	}
	if h := tr.Snapshot(1, 0); h.Forced || h.CooldownUntil == nil || h.CooldownUntil.Sub(clk.Now()) != 30*time.Second {
		t.Fatalf("tripped after close %+v", h)
	}
	clk.Advance(30 * time.Second)
	if !tr.Available(1) {
		t.Fatal("a normal trip did not reach half open")
	}
}

func TestForce_CloseClearsTheCounts(t *testing.T) {
	tr, _ := newSolo(t, testConfig())
	fail(tr, 1, -1, ClassServer, 4) // one short of ConsecutiveFails
	if err := tr.Force(1, -1, ForceClose); err != nil {
		t.Fatal(err)
	}
	fail(tr, 1, -1, ClassServer, 1)
	if !tr.Available(1) {
		t.Fatal("failures from before the force close still counted")
	}
	fail(tr, 1, -1, ClassServer, 4)
	if tr.Available(1) {
		t.Fatal("five failures after the close did not trip")
	}
}

func TestForce_HalfOpenLetsProbesDecide(t *testing.T) {
	t.Run("successes close", func(t *testing.T) {
		tr, _ := newSolo(t, testConfig())
		fail(tr, 1, -1, ClassServer, 5)
		if err := tr.Force(1, -1, ForceHalfOpen); err != nil {
			t.Fatal(err)
		}
		if h := tr.Snapshot(1, 0); h.State != StateHalfOpen || h.Forced {
			t.Fatalf("snapshot %+v", h)
		}
		for i := range 2 {
			ok, probe := tr.Allow(1)
			if !ok || !probe {
				t.Fatalf("probe %d not admitted", i)
			}
			if ok, _ := tr.Allow(1); ok {
				t.Fatal("half open admitted more than HalfOpenProbes")
			}
			tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: -1, Probe: true})
		}
		if tr.Snapshot(1, 0).State != StateClosed {
			t.Fatal("two probe successes did not close")
		}
	})
	t.Run("a failure opens", func(t *testing.T) {
		tr, clk := newSolo(t, testConfig())
		if err := tr.Force(1, -1, ForceHalfOpen); err != nil { // from CLOSED
			t.Fatal(err)
		}
		if _, probe := tr.Allow(1); !probe {
			t.Fatal("no probe")
		}
		tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: -1, Class: ClassTimeout, Probe: true})
		h := tr.Snapshot(1, 0)
		if h.State != StateOpen || h.Forced || h.CooldownUntil == nil {
			t.Fatalf("after failed probe %+v", h)
		}
		clk.Advance(h.CooldownUntil.Sub(clk.Now()))
		if !tr.Available(1) {
			t.Fatal("a probe-opened breaker must cool down by itself")
		}
	})
}

func TestForce_ResetClearsTheChannelLikeReset(t *testing.T) {
	tr, _ := newSolo(t, testConfig())
	if err := tr.Force(1, -1, ForceOpen); err != nil {
		t.Fatal(err)
	}
	if err := tr.Force(1, 2, ForceOpen); err != nil {
		t.Fatal(err)
	}
	tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 0, Class: ClassRateLimited, RetryAfter: time.Hour})
	tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 1, Class: ClassAuth})
	tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 0, Model: "m", Class: ClassModelUnsupported})
	if err := tr.Force(1, -1, ForceReset); err != nil {
		t.Fatal(err)
	}
	if !tr.Available(1) || !tr.KeyAllowed(1, 0) || !tr.KeyAllowed(1, 1) || !tr.KeyAllowed(1, 2) || !tr.ModelAllowed(1, "m") {
		t.Fatalf("reset left state behind: %+v", tr.Snapshot(1, 3))
	}
	h := tr.Snapshot(1, 3)
	if h.Forced || h.Keys[2].Forced || h.Metrics.Counts["1h"].Total != 3 {
		t.Fatalf("after reset %+v (metrics must stay)", h)
	}
}

func TestForce_KeyActions(t *testing.T) {
	tr, clk := newSolo(t, testConfig())
	if err := tr.Force(1, 0, ForceOpen); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Hour)
	if tr.KeyAllowed(1, 0) {
		t.Fatal("forced open key allowed")
	}
	if !tr.KeyAllowed(1, 1) || !tr.Available(1) {
		t.Fatal("forcing a key touched its sibling or the channel")
	}
	h := tr.Snapshot(1, 2)
	if k := h.Keys[0]; k.State != "open" || !k.Forced || k.CooldownUntil != nil {
		t.Fatalf("key 0 %+v", k)
	}
	if h.Forced || h.Keys[1].Forced {
		t.Fatalf("forced flag leaked: %+v", h)
	}
	tr.TestPassed(1, 0) // clears the key's cooldown and disable; the hold is an admin's and stays
	if tr.KeyAllowed(1, 0) {
		t.Fatal("a passing test lifted a forced key")
	}

	if err := tr.Force(1, 0, ForceClose); err != nil {
		t.Fatal(err)
	}
	if !tr.KeyAllowed(1, 0) || tr.Snapshot(1, 1).Keys[0].Forced {
		t.Fatal("force close left the key refused")
	}

	// close moves only the breaker: a cooling or disabled key stays refused until reset.
	tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 1, Class: ClassAuth})
	if err := tr.Force(1, 1, ForceClose); err != nil {
		t.Fatal(err)
	}
	if tr.KeyAllowed(1, 1) {
		t.Fatal("force close lifted an auth disable")
	}
	if err := tr.Force(1, 1, ForceReset); err != nil {
		t.Fatal(err)
	}
	if !tr.KeyAllowed(1, 1) || tr.Snapshot(1, 2).Keys[1].State != "ok" {
		t.Fatal("key reset left the key disabled")
	}

	// half_open on a key: the next outcomes decide.
	if err := tr.Force(1, 0, ForceHalfOpen); err != nil {
		t.Fatal(err)
	}
	if st := tr.Snapshot(1, 1).Keys[0].State; st != "half_open" {
		t.Fatalf("key state %s", st)
	}
	tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 0, Class: ClassServer})
	if tr.KeyAllowed(1, 0) {
		t.Fatal("a failure in half open did not reopen the key")
	}
}

func TestForce_RefusesUnknownActionsAndKeys(t *testing.T) {
	tr, _ := newSolo(t, testConfig())
	for _, tc := range []struct {
		key    int
		action string
	}{{-1, "opne"}, {-1, ""}, {0, "OPEN"}, {-2, ForceOpen}} {
		if err := tr.Force(1, tc.key, tc.action); err == nil {
			t.Errorf("Force(1, %d, %q) accepted", tc.key, tc.action)
		}
	}
	if !tr.Available(1) || !tr.KeyAllowed(1, 0) {
		t.Fatal("a refused Force changed state")
	}
}

func TestForce_ReachesEveryNode(t *testing.T) {
	run(t, func(t *testing.T, c *cluster) {
		a, b := c.node(t, testConfig()), c.node(t, testConfig())
		if !b.Available(1) || !b.KeyAllowed(1, 0) {
			t.Fatal("fresh node refuses")
		}
		start := time.Now()
		if err := a.Force(1, -1, ForceOpen); err != nil {
			t.Fatal(err)
		}
		eventually(t, propagation, "B honours A's force open", func() bool { return !b.Available(1) })
		t.Logf("%s: force open reached B in %v", c.name, time.Since(start))
		if h := b.Snapshot(1, 0); h.State != StateOpen || !h.Forced {
			t.Fatalf("B's view %+v", h)
		}
		// B adopted the hold, not a cooldown: no half open of its own, however long it waits.
		c.clk.Advance(24 * time.Hour)
		if ok, _ := b.Allow(1); ok {
			t.Fatal("B let traffic through a forced open channel")
		}
		// A node that starts later, and never heard the bus, reads the hold from the cache.
		late := New(testConfig(), c.cache, c.deafBus(t), c.clk.Now)
		if late.Available(1) || !late.Snapshot(1, 0).Forced {
			t.Fatal("a late node did not read the hold from the cache")
		}

		if err := a.Force(1, 0, ForceOpen); err != nil {
			t.Fatal(err)
		}
		eventually(t, propagation, "B honours A's forced key", func() bool { return !b.KeyAllowed(1, 0) })
		if !b.KeyAllowed(1, 1) {
			t.Fatal("B refused the sibling key")
		}

		start = time.Now()
		if err := a.Force(1, -1, ForceClose); err != nil {
			t.Fatal(err)
		}
		eventually(t, propagation, "B follows A's force close", func() bool { return b.Available(1) })
		t.Logf("%s: force close reached B in %v", c.name, time.Since(start))
		if err := a.Force(1, 0, ForceReset); err != nil {
			t.Fatal(err)
		}
		eventually(t, propagation, "B follows A's key reset", func() bool { return b.KeyAllowed(1, 0) })
		if h := b.Snapshot(1, 1); h.Forced || h.Keys[0].Forced {
			t.Fatalf("B still shows a hold: %+v", h)
		}
	})
}

func TestNamespace_TrackersShareNothing(t *testing.T) {
	run(t, func(t *testing.T, c *cluster) {
		routeCfg := testConfig()
		routeCfg.Namespace = "route"
		chA, chB := c.node(t, testConfig()), c.node(t, testConfig())
		rtA, rtB := c.node(t, routeCfg), c.node(t, routeCfg)

		fail(rtA, 1, -1, ClassServer, 5)
		if err := rtA.Force(2, -1, ForceOpen); err != nil {
			t.Fatal(err)
		}
		eventually(t, propagation, "the route peer sees the route trip and hold", func() bool {
			return !rtB.Available(1) && !rtB.Available(2)
		})
		c.clk.Advance(2 * memoTTL) // every memo is stale: the channel trackers read the cache again
		if !chA.Available(1) || !chB.Available(1) || !chA.Available(2) || !chB.Available(2) {
			t.Fatal("a route breaker leaked into the channel trackers")
		}

		fail(chA, 3, -1, ClassServer, 5)
		eventually(t, propagation, "the channel peer sees the channel trip", func() bool { return !chB.Available(3) })
		c.clk.Advance(2 * memoTTL)
		if !rtA.Available(3) || !rtB.Available(3) {
			t.Fatal("a channel breaker leaked into the route trackers")
		}

		ctx := context.Background()
		if _, ok, _ := c.cache.Get(ctx, "route:ch:1"); !ok {
			t.Fatal("route tracker did not write route:ch:1")
		}
		if _, ok, _ := c.cache.Get(ctx, "health:ch:1"); ok {
			t.Fatal("route tracker wrote under the health namespace")
		}
		if _, ok, _ := c.cache.Get(ctx, "health:ch:3"); !ok {
			t.Fatal("the default namespace must stay health")
		}
	})
}

package health

import (
	"context"
	"testing"
	"time"

	"tollgate/service/bus"
	"tollgate/service/cache"
)

// propagation is how fast a peer must learn a transition over the bus.
const propagation = time.Second

func TestMultiNode_TripOnASeenByBViaBus(t *testing.T) {
	run(t, func(t *testing.T, c *cluster) {
		a, b := c.node(t, testConfig()), c.node(t, testConfig())
		// B has read the (empty) cache once; with the clock standing still it will not read it again, so
		// everything it learns below comes over the bus.
		if ok, _ := b.Allow(1); !ok || !b.KeyAllowed(1, 0) || !b.KeyAllowed(1, 1) || !b.ModelAllowed(1, "m") {
			t.Fatal("fresh node refuses")
		}
		var seen = make(chan State, 8)
		b.OnTransition(func(ch int64, key int, from, to State) {
			if ch == 1 && key == -1 {
				seen <- to
			}
		})

		start := time.Now()
		fail(a, 1, -1, ClassServer, 5)
		eventually(t, propagation, "B sees A's trip", func() bool { ok, _ := b.Allow(1); return !ok })
		t.Logf("%s: trip reached B in %v", c.name, time.Since(start))
		if h := b.Snapshot(1, 0); h.State != StateOpen || h.Trips != 1 || h.CooldownUntil == nil {
			t.Fatalf("B's view %+v", h)
		}
		if got := <-seen; got != StateOpen {
			t.Fatalf("B's hook saw %s", got)
		}

		a.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 0, Class: ClassRateLimited, RetryAfter: time.Minute})
		a.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 1, Class: ClassAuth, Err: "revoked"})
		a.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 0, Model: "m", Class: ClassModelUnsupported})
		eventually(t, propagation, "B sees key cooldown, key disable and model exclusion", func() bool {
			return !b.KeyAllowed(1, 0) && !b.KeyAllowed(1, 1) && !b.ModelAllowed(1, "m")
		})
		if kh := b.Snapshot(1, 2).Keys; kh[0].State != "cooling" || kh[1].State != "disabled" || kh[1].LastError != "revoked" {
			t.Fatalf("B's keys %+v", kh)
		}

		// A probes, recovers and closes; B follows.
		c.clk.Advance(30 * time.Second)
		if ok, probe := a.Allow(1); !ok || !probe {
			t.Fatal("A: no probe after cooldown")
		}
		a.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 2, Probe: true})
		a.Allow(1)
		a.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 2, Probe: true})
		eventually(t, propagation, "B sees A close", func() bool {
			return b.Snapshot(1, 0).State == StateClosed
		})

		// Reset on A clears everything on B.
		a.Reset(1)
		eventually(t, propagation, "B sees A's Reset", func() bool {
			return b.KeyAllowed(1, 0) && b.KeyAllowed(1, 1) && b.ModelAllowed(1, "m")
		})
	})
}

func TestMultiNode_LateNodeReadsTheCache(t *testing.T) {
	run(t, func(t *testing.T, c *cluster) {
		a := c.node(t, testConfig())
		fail(a, 7, -1, ClassTimeout, 5)
		a.Record(Outcome{RateLimitRemaining: -1, ChannelID: 7, Key: 3, Class: ClassRateLimited})
		a.Record(Outcome{RateLimitRemaining: -1, ChannelID: 7, Key: 4, Class: ClassUpstreamQuota})
		a.Record(Outcome{RateLimitRemaining: -1, ChannelID: 7, Key: 3, Model: "claude-x", Class: ClassModelUnsupported})

		late := c.node(t, testConfig())
		if ok, _ := late.Allow(7); ok {
			t.Fatal("late node admits a tripped channel")
		}
		if late.KeyAllowed(7, 3) || late.KeyAllowed(7, 4) || !late.KeyAllowed(7, 5) {
			t.Fatal("late node misses key state")
		}
		if late.ModelAllowed(7, "claude-x") || !late.ModelAllowed(7, "other") {
			t.Fatal("late node misses the model exclusion")
		}
		// Cooldowns carry over: the late node half-opens when A would.
		c.clk.Advance(30 * time.Second)
		if ok, probe := late.Allow(7); !ok || !probe {
			t.Fatal("late node did not half-open after the shared cooldown")
		}

		// A Reset is kept in the cache too: a third node that starts after it sees nothing stale.
		a.Reset(7)
		later := c.node(t, testConfig())
		if ok, _ := later.Allow(7); !ok || !later.KeyAllowed(7, 3) || !later.KeyAllowed(7, 4) || !later.ModelAllowed(7, "claude-x") {
			t.Fatal("node started after Reset sees stale state")
		}
	})
}

func TestMultiNode_MissedMessagesSignalRereadsTheCache(t *testing.T) {
	run(t, func(t *testing.T, c *cluster) {
		a := c.node(t, testConfig())
		// deaf shares the cache but listens on a bus of its own, so A's announcements never reach it.
		deafBus := c.deafBus(t)
		deaf := New(testConfig(), c.cache, deafBus, c.clk.Now)
		if err := deafBus.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		if ok, _ := deaf.Allow(3); !ok {
			t.Fatal("fresh node refuses")
		}
		fail(a, 3, -1, ClassServer, 5)
		time.Sleep(50 * time.Millisecond)
		if ok, _ := deaf.Allow(3); !ok {
			t.Fatal("memoized read should still say closed (the hot path must not re-read within a second)")
		}
		// The bus's "you missed messages" signal voids the memo.
		if err := deafBus.Publish(context.Background(), Topic, ""); err != nil {
			t.Fatal(err)
		}
		eventually(t, propagation, "deaf node re-reads after the missed-messages signal", func() bool {
			ok, _ := deaf.Allow(3)
			return !ok
		})
		// Without any signal, a second of clock time is enough too.
		fail(a, 4, -1, ClassServer, 5)
		if ok, _ := deaf.Allow(4); ok {
			t.Fatal("first look at channel 4 should read the cache")
		}
		a.Reset(4)
		if ok, _ := deaf.Allow(4); ok {
			t.Fatal("re-read within a second")
		}
		c.clk.Advance(time.Second)
		if ok, _ := deaf.Allow(4); !ok {
			t.Fatal("no re-read after a second")
		}
	})
}

func TestMultiNode_HotPathReadsTheCacheAtMostOncePerSecond(t *testing.T) {
	clk := newClock()
	cc := &countingCache{Cache: cache.NewMemory()}
	tr := New(testConfig(), cc, bus.NewMemory(), clk.Now)
	for range 1000 {
		tr.Allow(1)
		tr.KeyAllowed(1, 0)
		tr.ModelAllowed(1, "m")
	}
	// One read each of the channel, the key and the model.
	if got := cc.gets.Load(); got != 3 {
		t.Fatalf("%d cache reads in one second, want 3", got)
	}
	clk.Advance(time.Second)
	for range 1000 {
		tr.Allow(1)
	}
	if got := cc.gets.Load(); got != 4 {
		t.Fatalf("%d cache reads after a second, want 4", got)
	}
}

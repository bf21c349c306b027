package health

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type step struct {
	class   Class
	n       int
	advance time.Duration // before the outcomes
}

func TestBreaker_OpensAfterThreshold(t *testing.T) {
	s, f := ClassSuccess, ClassServer
	alt := func(a, b Class, pairs int) []step {
		var out []step
		for range pairs {
			out = append(out, step{class: a, n: 1}, step{class: b, n: 1})
		}
		return out
	}
	cases := []struct {
		name  string
		steps []step
		want  State
	}{
		{"four consecutive failures stay closed", []step{{class: f, n: 4}}, StateClosed},
		{"five consecutive failures open", []step{{class: f, n: 5}}, StateOpen},
		{"timeouts count", []step{{class: ClassTimeout, n: 5}}, StateOpen},
		{"resets count", []step{{class: ClassReset, n: 5}}, StateOpen},
		{"bad replies count", []step{{class: ClassBadReply, n: 5}}, StateOpen},
		{"mixed failure classes count together", []step{{class: ClassTimeout, n: 2}, {class: ClassReset, n: 1}, {class: f, n: 2}}, StateOpen},
		{"ratio of one half over six outcomes opens", alt(s, f, 3), StateOpen},
		{"ratio under MinRequests stays closed", alt(s, f, 2), StateClosed},
		{"ratio of one third stays closed", append(append(alt(s, s, 6), alt(s, f, 3)...), alt(s, s, 3)...), StateClosed},
		{"old outcomes leave the window", append(alt(s, f, 2), step{class: f, n: 2, advance: 61 * time.Second}), StateClosed},
		{"success breaks the consecutive run", []step{{class: f, n: 4}, {class: s, n: 10}, {class: f, n: 4}}, StateClosed},
		{"client errors have no effect", []step{{class: ClassClient, n: 50}}, StateClosed},
		{"canceled has no effect", []step{{class: ClassCanceled, n: 50}}, StateClosed},
		{"429s do not open the channel", []step{{class: ClassRateLimited, n: 50}}, StateClosed},
		{"auth does not open the channel", []step{{class: ClassAuth, n: 50}}, StateClosed},
		{"upstream quota does not open the channel", []step{{class: ClassUpstreamQuota, n: 50}}, StateClosed},
		{"model unsupported does not open the channel", []step{{class: ClassModelUnsupported, n: 50}}, StateClosed},
		{"unknown classes have no effect", []step{{class: "weird", n: 50}}, StateClosed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr, clk := newSolo(t, testConfig())
			for _, st := range tc.steps {
				clk.Advance(st.advance)
				for range st.n {
					tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: -1, Class: st.class, Model: "m"})
				}
			}
			if got := tr.Snapshot(1, 0).State; got != tc.want {
				t.Fatalf("state = %s, want %s", got, tc.want)
			}
			if ok, _ := tr.Allow(1); ok != (tc.want == StateClosed) {
				t.Fatalf("Allow = %v in state %s", ok, tc.want)
			}
		})
	}
}

func TestBreaker_HalfOpenAdmitsExactlyHalfOpenProbes(t *testing.T) {
	for _, probes := range []int{1, 3} {
		t.Run("probes="+string(rune('0'+probes)), func(t *testing.T) {
			cfg := testConfig()
			cfg.HalfOpenProbes = probes
			tr, clk := newSolo(t, cfg)
			fail(tr, 1, -1, ClassServer, 5)
			clk.Advance(29 * time.Second)
			if ok, _ := tr.Allow(1); ok {
				t.Fatal("OPEN admitted a request before the cooldown ended")
			}
			if tr.Available(1) {
				t.Fatal("Available during the cooldown")
			}
			clk.Advance(time.Second)
			for range 5 { // looking does not take a slot
				if !tr.Available(1) {
					t.Fatal("not Available after the cooldown")
				}
			}
			var admitted, asProbe atomic.Int32
			var wg sync.WaitGroup
			for range 64 {
				wg.Go(func() {
					if ok, probe := tr.Allow(1); ok {
						admitted.Add(1)
						if probe {
							asProbe.Add(1)
						}
					}
				})
			}
			wg.Wait()
			if admitted.Load() != int32(probes) || asProbe.Load() != int32(probes) {
				t.Fatalf("admitted %d (probes %d), want exactly %d probes", admitted.Load(), asProbe.Load(), probes)
			}
			if got := tr.Snapshot(1, 0).State; got != StateHalfOpen || tr.Available(1) {
				t.Fatalf("state = %s (available %v), want half_open with no free slot", got, tr.Available(1))
			}
			// A probe that ends without a verdict (client went away) gives its slot back.
			tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: -1, Class: ClassCanceled, Probe: true})
			if ok, probe := tr.Allow(1); !ok || !probe {
				t.Fatalf("freed slot not reusable: ok=%v probe=%v", ok, probe)
			}
			if ok, _ := tr.Allow(1); ok {
				t.Fatal("admitted more than HalfOpenProbes")
			}
			// A probe whose Record never comes frees its slot after one window.
			clk.Advance(time.Minute)
			if ok, probe := tr.Allow(1); !ok || !probe {
				t.Fatal("leaked probe slots were not reclaimed")
			}
		})
	}
}

func TestBreaker_ClosesAfterCloseAfterProbeSuccesses(t *testing.T) {
	tr, clk := newSolo(t, testConfig())
	var seen []string
	tr.OnTransition(func(ch int64, key int, from, to State) {
		if key == -1 {
			seen = append(seen, string(from)+">"+string(to))
		}
	})
	fail(tr, 1, -1, ClassServer, 5)
	clk.Advance(30 * time.Second)
	for i := range 2 {
		ok, probe := tr.Allow(1)
		if !ok || !probe {
			t.Fatalf("probe %d not admitted", i)
		}
		// A success of a request admitted before the trip does not count toward closing.
		tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: -1})
		if got := tr.Snapshot(1, 0).State; got != StateHalfOpen {
			t.Fatalf("after %d probe successes state = %s", i, got)
		}
		tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: -1, Probe: true})
	}
	h := tr.Snapshot(1, 0)
	if h.State != StateClosed || h.Trips != 0 || h.CooldownUntil != nil {
		t.Fatalf("after CloseAfter successes: %+v", h)
	}
	if ok, probe := tr.Allow(1); !ok || probe {
		t.Fatalf("CLOSED Allow = %v, %v", ok, probe)
	}
	// The window was cleared: four more failures are not enough.
	fail(tr, 1, -1, ClassServer, 4)
	if got := tr.Snapshot(1, 0).State; got != StateClosed {
		t.Fatalf("state = %s after 4 failures on a fresh window", got)
	}
	want := []string{"closed>open", "open>half_open", "half_open>closed"}
	if len(seen) != len(want) {
		t.Fatalf("transitions %v, want %v", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("transitions %v, want %v", seen, want)
		}
	}
}

func TestBreaker_ProbeFailureReopensWithDoubledCappedCooldown(t *testing.T) {
	tr, clk := newSolo(t, testConfig())
	fail(tr, 1, -1, ClassServer, 5)
	for i, want := range []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 2 * time.Minute} {
		h := tr.Snapshot(1, 0)
		if h.State != StateOpen || h.Trips != i+1 {
			t.Fatalf("trip %d: %+v", i+1, h)
		}
		if got := h.CooldownUntil.Sub(clk.Now()); got != want {
			t.Fatalf("trip %d: cooldown %v, want %v", i+1, got, want)
		}
		clk.Advance(want)
		if ok, probe := tr.Allow(1); !ok || !probe {
			t.Fatalf("trip %d: no probe after cooldown", i+1)
		}
		tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: -1, Class: ClassTimeout, Probe: true})
	}
	// Recovery resets the doubling.
	clk.Advance(2 * time.Minute)
	for range 2 {
		tr.Allow(1)
		tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: -1, Probe: true})
	}
	fail(tr, 1, -1, ClassServer, 5)
	if got := tr.Snapshot(1, 0).CooldownUntil.Sub(clk.Now()); got != 30*time.Second {
		t.Fatalf("cooldown after recovery and re-trip = %v, want 30s", got)
	}
}

func TestBreaker_StragglersDoNotMoveAnOpenBreaker(t *testing.T) {
	tr, clk := newSolo(t, testConfig())
	fail(tr, 1, -1, ClassServer, 5)
	until := *tr.Snapshot(1, 0).CooldownUntil
	// Requests admitted before the trip finish while OPEN, and in HALF_OPEN without the probe flag.
	fail(tr, 1, -1, ClassServer, 3)
	tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: -1})
	if h := tr.Snapshot(1, 0); h.State != StateOpen || !h.CooldownUntil.Equal(until) || h.Trips != 1 {
		t.Fatalf("stragglers moved the breaker: %+v", h)
	}
	clk.Advance(30 * time.Second)
	tr.Allow(1)
	fail(tr, 1, -1, ClassServer, 3)
	if got := tr.Snapshot(1, 0).State; got != StateHalfOpen {
		t.Fatalf("non-probe failures in HALF_OPEN reopened: %s", got)
	}
}

func TestReset_ForgetsBreakerKeysAndModels(t *testing.T) {
	tr, _ := newSolo(t, testConfig())
	fail(tr, 1, 0, ClassServer, 5)
	tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 1, Class: ClassRateLimited})
	tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 2, Class: ClassAuth})
	tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 2, Model: "gpt-x", Class: ClassModelUnsupported})
	if ok, _ := tr.Allow(1); ok {
		t.Fatal("channel should be open")
	}
	tr.Reset(1)
	if ok, probe := tr.Allow(1); !ok || probe {
		t.Fatal("Reset did not close the channel")
	}
	for k := range 3 {
		if !tr.KeyAllowed(1, k) {
			t.Fatalf("Reset left key %d blocked", k)
		}
	}
	if !tr.ModelAllowed(1, "gpt-x") {
		t.Fatal("Reset left the model excluded")
	}
	h := tr.Snapshot(1, 3)
	if h.Trips != 0 || len(h.UnsupportedModels) != 0 || h.Metrics.Counts["1m"].Total != 8 {
		t.Fatalf("after Reset: %+v (metrics are kept)", h)
	}
	if states := tr.States(); states[1] != StateClosed {
		t.Fatalf("States = %v", states)
	}
}

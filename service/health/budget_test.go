package health

import (
	"testing"
	"time"
)

func TestBudget_ZeroRemainingSkipsTheKeyUntilReset(t *testing.T) {
	cases := []struct {
		name      string
		remaining int64
		reset     time.Duration // from now; 0 = no reset header
		want      time.Duration // how long the key is skipped; 0 = not at all
	}{
		{"zero with a reset waits for the reset", 0, 20 * time.Second, 20 * time.Second},
		{"zero without a reset uses the default cooldown", 0, 0, 30 * time.Second},
		{"zero with a reset already past is no skip", 0, -time.Second, 0},
		{"unknown budget is no skip", -1, 20 * time.Second, 0},
		{"a budget left is no skip", 3, 20 * time.Second, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr, clk := newSolo(t, testConfig())
			o := Outcome{ChannelID: 1, Key: 0, Status: 200, RateLimitRemaining: tc.remaining}
			if tc.reset != 0 {
				o.RateLimitReset = clk.Now().Add(tc.reset)
			}
			tr.Record(o) // a success that spent the last request of the window
			if !tr.Available(1) || !tr.KeyAllowed(1, 1) {
				t.Fatal("an empty budget touched the channel or a sibling key")
			}
			if tc.want == 0 {
				if !tr.KeyAllowed(1, 0) {
					t.Fatal("key skipped")
				}
				return
			}
			if tr.KeyAllowed(1, 0) {
				t.Fatal("key with an empty budget allowed")
			}
			k := tr.Snapshot(1, 1).Keys[0]
			if k.State != "cooling" || k.CooldownUntil == nil || k.CooldownUntil.Sub(clk.Now()) != tc.want {
				t.Fatalf("key %+v, want cooling for %v", k, tc.want)
			}
			clk.Advance(tc.want - time.Millisecond)
			if tr.KeyAllowed(1, 0) {
				t.Fatal("key allowed before the reset")
			}
			clk.Advance(time.Millisecond)
			if !tr.KeyAllowed(1, 0) {
				t.Fatal("key still skipped after the reset")
			}
		})
	}
}

func TestBudget_MetricsKeepTheLastKnownBudget(t *testing.T) {
	tr, clk := newSolo(t, testConfig())
	if m := tr.Snapshot(1, 1).Keys[0].Metrics; m.RateLimitRemaining != -1 || m.RateLimitReset != nil {
		t.Fatalf("no report yet: %d %v", m.RateLimitRemaining, m.RateLimitReset)
	}
	reset := clk.Now().Add(time.Minute)
	tr.Record(Outcome{ChannelID: 1, Key: 0, RateLimitRemaining: 0, RateLimitReset: reset})
	tr.Record(Outcome{ChannelID: 1, Key: 0, RateLimitRemaining: -1}) // a reply without the headers
	m := tr.Snapshot(1, 1).Keys[0].Metrics
	if m.RateLimitRemaining != 0 || m.RateLimitReset == nil || !m.RateLimitReset.Equal(reset) {
		t.Fatalf("last known budget lost: %d %v", m.RateLimitRemaining, m.RateLimitReset)
	}
}

func TestBudget_EmptyBudgetReachesOtherNodes(t *testing.T) {
	run(t, func(t *testing.T, c *cluster) {
		a, b := c.node(t, testConfig()), c.node(t, testConfig())
		if !b.KeyAllowed(1, 0) {
			t.Fatal("fresh node refuses")
		}
		a.Record(Outcome{ChannelID: 1, Key: 0, RateLimitRemaining: 0, RateLimitReset: c.clk.Now().Add(time.Minute)})
		eventually(t, propagation, "B skips the key whose budget A saw run out", func() bool { return !b.KeyAllowed(1, 0) })
		c.clk.Advance(time.Minute)
		if !b.KeyAllowed(1, 0) {
			t.Fatal("B still skips the key after its reset")
		}
	})
}

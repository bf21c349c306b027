package gcpace

import (
	"runtime/debug"
	"testing"
	"time"
)

func TestPercentFor(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name       string
		live, rate uint64
		want       int
	}{
		{"quiet: the runtime's own pacing", 12 * mib, 1 * mib, 100},
		{"busy, small heap: headroom over the live heap, capped", 6 * mib, 200 * mib, 400},
		{"busy, 24 MiB live: 48 MiB of headroom is 200 %", 24 * mib, 200 * mib, 200},
		{"busy, live heap past the headroom: never below 100", 70 * mib, 200 * mib, 100},
		{"no live heap measured yet", 0, 200 * mib, 100},
	} {
		if got := PercentFor(c.live, c.rate, 48*mib, 32*mib, 400); got != c.want {
			t.Errorf("%s: PercentFor = %d, want %d", c.name, got, c.want)
		}
	}
}

var sink []byte

// The pacer raises the percent while the process allocates, and Stop puts back the percent it found.
func TestPacer_RaisesWhileBusyAndRestoresOnStop(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	p := Start(Options{BusyRate: 1, Every: 5 * time.Millisecond})
	deadline := time.Now().Add(20 * time.Second) // a bound for a slow machine, not a figure
	seen := p.Percent()
	for seen <= 100 && time.Now().Before(deadline) {
		for range 1000 {
			sink = make([]byte, 1024)
		}
		time.Sleep(time.Millisecond)
		seen = p.Percent() // kept: a tick after the loop stops allocating may set 100 again
	}
	if seen <= 100 {
		t.Fatalf("percent %d while allocating with a small live heap, want more than 100", seen)
	}
	p.Stop()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("after Stop the percent is %d, want the original 100", got)
	}
}

// A percent the process started with above what the pacer would set is kept (never lowered).
func TestPacer_NeverBelowTheOriginal(t *testing.T) {
	before := debug.SetGCPercent(800)
	defer debug.SetGCPercent(before)
	p := Start(Options{BusyRate: 1, Every: 5 * time.Millisecond}) // busy: it would set at most 400
	deadline := time.Now().Add(20 * time.Second)                  // a bound for a slow machine, not a figure
	for p.looks.Load() < 3 && time.Now().Before(deadline) {
		sink = make([]byte, 1024)
		time.Sleep(time.Millisecond)
	}
	if p.looks.Load() < 3 {
		t.Fatal("the pacer never looked")
	}
	if got := p.Percent(); got != 800 {
		t.Errorf("percent %d, want the original 800", got)
	}
	p.Stop()
	if got := debug.SetGCPercent(800); got != 800 {
		t.Errorf("after Stop the percent is %d, want 800", got)
	}
}

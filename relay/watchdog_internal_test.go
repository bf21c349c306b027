package relay

import (
	"context"
	"errors"
	"testing"
	"time"
)

// watched starts a watchdog on a fresh context and returns the context.
func watched(total, connect, firstByte, idle time.Duration) (context.Context, *watchdog) {
	ctx, cancel := context.WithCancelCause(context.Background())
	return ctx, newWatchdog(cancel, time.Now(), total, errTotalTimeout, connect, firstByte, errFirstByteTimeout, idle)
}

// causeOf waits (at most 10 s) for ctx to end and returns why.
func causeOf(t *testing.T, ctx context.Context) error {
	t.Helper()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-time.After(10 * time.Second):
		t.Fatal("the watchdog never fired")
		return nil
	}
}

func TestWatchdog_EachDeadlineCancelsWithItsOwnCause(t *testing.T) {
	ctx, _ := watched(time.Hour, 20*time.Millisecond, time.Hour, time.Hour)
	if c := causeOf(t, ctx); !errors.Is(c, errConnectTimeout) {
		t.Fatalf("no connection: cause %v, want connect timeout", c)
	}
	ctx, w := watched(time.Hour, 20*time.Millisecond, 60*time.Millisecond, time.Hour)
	w.connected()
	if c := causeOf(t, ctx); !errors.Is(c, errFirstByteTimeout) {
		t.Fatalf("connected, no headers: cause %v, want first-byte timeout", c)
	}
	ctx, w = watched(time.Hour, time.Hour, time.Hour, 30*time.Millisecond)
	w.connected()
	w.headers()
	if c := causeOf(t, ctx); !errors.Is(c, errIdleTimeout) {
		t.Fatalf("headers, then nothing: cause %v, want idle timeout", c)
	}
	ctx, _ = watched(20*time.Millisecond, time.Hour, time.Hour, time.Hour)
	if c := causeOf(t, ctx); !errors.Is(c, errTotalTimeout) {
		t.Fatalf("cause %v, want total timeout", c)
	}
	ctx, _ = watched(-time.Second, time.Hour, time.Hour, time.Hour) // a budget already spent
	if c := causeOf(t, ctx); !errors.Is(c, errTotalTimeout) {
		t.Fatalf("spent budget: cause %v, want total timeout", c)
	}
}

// Reads keep pushing the idle deadline forward without touching the timer; the total deadline still ends
// a call that keeps reading.
func TestWatchdog_ReadsHoldOffIdleButNotTotal(t *testing.T) {
	ctx, w := watched(600*time.Millisecond, time.Hour, time.Hour, 100*time.Millisecond)
	w.connected()
	w.headers()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			if c := context.Cause(ctx); !errors.Is(c, errTotalTimeout) {
				t.Fatalf("a call reading every 10 ms ended with %v, want the total timeout", c)
			}
			return
		case <-tick.C:
			w.read()
		}
	}
}

// After stop nothing fires, and a connection lifts only the connect deadline.
func TestWatchdog_StopAndConnectedSilenceTheirDeadlines(t *testing.T) {
	ctx, w := watched(30*time.Millisecond, 10*time.Millisecond, 30*time.Millisecond, 10*time.Millisecond)
	w.stop()
	time.Sleep(80 * time.Millisecond)
	if ctx.Err() != nil {
		t.Fatalf("stopped watchdog fired: %v", context.Cause(ctx))
	}
	ctx, w = watched(time.Hour, 20*time.Millisecond, 150*time.Millisecond, time.Hour)
	w.connected()
	start := time.Now()
	if c := causeOf(t, ctx); !errors.Is(c, errFirstByteTimeout) || time.Since(start) < 100*time.Millisecond {
		t.Fatalf("cause %v after %v, want the first-byte timeout, not before it", c, time.Since(start))
	}
}

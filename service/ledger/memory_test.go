package ledger

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestMemory_ConcurrentFirstTouchLoadsOnce(t *testing.T) {
	loader := newLoader()
	loader.set(1_000_000, 1_000_000)
	loader.delay = 20 * time.Millisecond // keep the load in flight while the others arrive
	l := NewMemory(loader)
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			if err := l.Reserve(ctx, fmt.Sprintf("r%d", i), limited, 1); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if u, tk := loader.count("u1"), loader.count("t1"); u != 1 || tk != 1 {
		t.Fatalf("loader calls: user %d token %d, want 1 each", u, tk)
	}
	wantBalances(t, l, 999_950, 999_950)
}

func TestMemory_SettledIsBounded(t *testing.T) {
	loader := newLoader()
	loader.set(1_000_000, 0)
	l := NewMemory(loader, WithSettledMax(shardCount)) // one remembered settlement per shard
	ctx := context.Background()
	for i := range 10 * shardCount {
		id := fmt.Sprintf("r%d", i)
		must(t, l.Reserve(ctx, id, unlimited, 1))
		_, err := l.Settle(ctx, id, 1)
		must(t, err)
	}
	n := 0
	for i := range l.holds {
		n += len(l.holds[i].settled)
	}
	if n > shardCount {
		t.Fatalf("%d settlements remembered, want at most %d", n, shardCount)
	}
}

func TestMemory_SettledExpires(t *testing.T) {
	loader := newLoader()
	loader.set(1000, 0)
	clock := newClock()
	l := NewMemory(loader, WithClock(clock.Now), WithSettledTTL(time.Minute))
	ctx := context.Background()
	must(t, l.Reserve(ctx, "r", unlimited, 10))
	_, err := l.Settle(ctx, "r", 10)
	must(t, err)
	clock.Advance(2 * time.Minute)
	must(t, l.Reserve(ctx, "r", unlimited, 10)) // sweeps the shard: the old settlement is gone
	if _, err := l.Settle(ctx, "r", 5); err != nil || errors.Is(err, ErrNoHold) {
		t.Fatalf("settle of the new hold: %v", err)
	}
}

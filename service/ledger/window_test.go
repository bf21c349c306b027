package ledger

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

var day1 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func budgeted(at time.Time, daily, monthly int64) Account {
	return Account{UserID: 1, TokenID: 1, Windows: Budgets(at, daily, monthly)}
}

func spentOf(t *testing.T, l Ledger, w Window) int64 {
	t.Helper()
	v, ok, err := l.WindowSpent(context.Background(), 1, w)
	must(t, err)
	if !ok {
		t.Fatalf("window %v not live", w)
	}
	return v
}

func TestWindows_BudgetNeverExceededUnderConcurrency(t *testing.T) {
	eachBackend(t, func(t *testing.T, newLedger factory) {
		loader := newLoader()
		loader.set(1_000_000, 0)
		l := newLedger(t, loader)
		ctx := context.Background()
		acct := budgeted(day1, 1000, 5000)
		var wg sync.WaitGroup
		var mu sync.Mutex
		ok, refused := 0, 0
		for i := range 40 {
			wg.Go(func() {
				id := fmt.Sprintf("w%d", i)
				err := l.Reserve(ctx, id, acct, 100)
				mu.Lock()
				defer mu.Unlock()
				var be *BudgetError
				switch {
				case err == nil:
					ok++
					if _, err := l.Settle(ctx, id, 100); err != nil {
						t.Error(err)
					}
				case errors.As(err, &be) && errors.Is(err, ErrBudgetExhausted) && errors.Is(err, ErrInsufficient):
					refused++
					if !be.Window.End.Equal(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)) {
						t.Errorf("refused by window ending %s, want the day's", be.Window.End)
					}
				default:
					t.Errorf("reserve %s: %v", id, err)
				}
			})
		}
		wg.Wait()
		if ok != 10 || refused != 30 {
			t.Fatalf("%d reserved, %d refused; want 10 and 30", ok, refused)
		}
		if d, m := spentOf(t, l, acct.Windows[0]), spentOf(t, l, acct.Windows[1]); d != 1000 || m != 1000 {
			t.Fatalf("spent day %d month %d, want 1000 each", d, m)
		}
		wantUser(t, l, 1_000_000-1000)
	})
}

func wantUser(t *testing.T, l Ledger, want int64) {
	t.Helper()
	u, err := l.UserBalance(context.Background(), 1)
	must(t, err)
	if u != want {
		t.Fatalf("user balance %d, want %d", u, want)
	}
}

func TestWindows_SettleAboveHoldTakesOnlyTheRoom(t *testing.T) {
	eachBackend(t, func(t *testing.T, newLedger factory) {
		loader := newLoader()
		loader.set(1_000_000, 0)
		l := newLedger(t, loader)
		ctx := context.Background()
		acct := budgeted(day1, 300, 0)
		must(t, l.Reserve(ctx, "a", acct, 100))
		s, err := l.Settle(ctx, "a", 500)
		must(t, err)
		if s.Charged != 300 || s.Shortfall != 200 {
			t.Fatalf("settlement %+v, want charged 300 short 200", s)
		}
		if sp := spentOf(t, l, acct.Windows[0]); sp != 300 {
			t.Fatalf("spent %d, want 300", sp)
		}
		if err := l.Reserve(ctx, "b", acct, 0); err != nil {
			t.Fatalf("a zero hold on a full window: %v", err)
		}
		if err := l.Reserve(ctx, "c", acct, 1); !errors.Is(err, ErrBudgetExhausted) {
			t.Fatalf("reserve on a full window: %v", err)
		}
		// A lower limit (the key's budget lowered below what it spent) refuses even a zero hold.
		if err := l.Reserve(ctx, "d", budgeted(day1, 200, 0), 0); !errors.Is(err, ErrBudgetExhausted) {
			t.Fatalf("reserve under a lowered limit: %v", err)
		}
		wantUser(t, l, 1_000_000-300)
	})
}

func TestWindows_LoadedOnceFromSQLAndPerPeriod(t *testing.T) {
	eachBackend(t, func(t *testing.T, newLedger factory) {
		loader := newLoader()
		loader.set(1_000_000, 0)
		loader.spent[1] = 900 // already logged today (and this month) before the window went live
		l := newLedger(t, loader)
		ctx := context.Background()
		acct := budgeted(day1, 1000, 0)
		if err := l.Reserve(ctx, "a", acct, 200); !errors.Is(err, ErrBudgetExhausted) {
			t.Fatalf("reserve 200 over 900 spent of 1000: %v", err)
		}
		must(t, l.Reserve(ctx, "b", acct, 100))
		must(t, l.Release(ctx, "b"))
		must(t, l.Reserve(ctx, "c", acct, 100))
		if _, err := l.Settle(ctx, "c", 100); err != nil {
			t.Fatal(err)
		}
		if n := loader.count("w1"); n != 1 {
			t.Fatalf("window loaded %d times, want once", n)
		}
		// The next day is a new window: loaded on its first touch (the loader answers 0 for it now).
		loader.mu.Lock()
		loader.spent[1] = 0
		loader.mu.Unlock()
		next := budgeted(day1.Add(24*time.Hour), 1000, 0)
		must(t, l.Reserve(ctx, "d", next, 1000))
		if n := loader.count("w1"); n != 2 {
			t.Fatalf("windows loaded %d times, want 2 (one per day)", n)
		}
		if sp := spentOf(t, l, acct.Windows[0]); sp != 1000 {
			t.Fatalf("day one spent %d, want 1000", sp)
		}
		// ResetWindows makes the next touch read SQL again; the hold on the new day still counts.
		must(t, l.ResetWindows(ctx, 1, next.Windows...))
		if _, ok, err := l.WindowSpent(ctx, 1, next.Windows[0]); err != nil || ok {
			t.Fatalf("reset window still live (%v)", err)
		}
		if err := l.Reserve(ctx, "e", next, 1); !errors.Is(err, ErrBudgetExhausted) {
			t.Fatalf("after reset, the outstanding hold of 1000 must still count: %v", err)
		}
	})
}

func TestWindows_ExpiredHoldGivesTheRoomBack(t *testing.T) {
	eachBackend(t, func(t *testing.T, newLedger factory) {
		loader := newLoader()
		loader.set(1_000_000, 0)
		clock := newClock()
		l := newLedger(t, loader, WithClock(clock.Now), WithHoldTTL(time.Minute))
		ctx := context.Background()
		acct := budgeted(clock.Now(), 100, 0)
		must(t, l.Reserve(ctx, "crashed", acct, 100))
		if err := l.Reserve(ctx, "x", acct, 1); !errors.Is(err, ErrBudgetExhausted) {
			t.Fatalf("window full: %v", err)
		}
		clock.Advance(2 * time.Minute)
		// Reserving under the same id sweeps its shard (memory) / the window's expiry index (Redis).
		if err := l.Reserve(ctx, "crashed", acct, 100); err != nil {
			t.Fatalf("after the crashed hold expired: %v", err)
		}
	})
}

func TestWindows_NoBudgetNoWindowTouched(t *testing.T) {
	eachBackend(t, func(t *testing.T, newLedger factory) {
		loader := newLoader()
		loader.set(1_000, 0)
		l := newLedger(t, loader)
		ctx := context.Background()
		must(t, l.Reserve(ctx, "a", budgeted(day1, 0, 0), 10))
		if _, err := l.Settle(ctx, "a", 10); err != nil {
			t.Fatal(err)
		}
		if n := loader.count("w1"); n != 0 {
			t.Fatalf("a key without a budget read its spend %d times", n)
		}
	})
}

func TestMemory_EndedWindowsAreDropped(t *testing.T) {
	loader := newLoader()
	loader.set(1_000_000, 0)
	clock := newClock()
	clock.t = day1
	l := NewMemory(loader, WithClock(clock.Now), WithHoldTTL(time.Hour))
	ctx := context.Background()
	old := budgeted(day1, 1000, 0)
	must(t, l.Reserve(ctx, "a", old, 10))
	if _, err := l.Settle(ctx, "a", 10); err != nil {
		t.Fatal(err)
	}
	must(t, l.Reserve(ctx, "held", old, 10)) // a hold keeps its window alive past the period
	clock.Advance(3 * 24 * time.Hour)
	must(t, l.Reserve(ctx, "b", budgeted(clock.Now(), 1000, 0), 10))
	if _, live, _ := l.WindowSpent(ctx, 1, old.Windows[0]); !live {
		t.Fatal("a window with money on hold was dropped")
	}
	must(t, l.Release(ctx, "held"))
	clock.Advance(sweepEvery)
	must(t, l.Reserve(ctx, "c", budgeted(clock.Now(), 1000, 0), 10))
	if _, live, _ := l.WindowSpent(ctx, 1, old.Windows[0]); live {
		t.Fatal("an ended window that holds nothing is still kept")
	}
}

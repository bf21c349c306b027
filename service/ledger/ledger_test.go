package ledger

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeLoader stands in for SQL: balances per id, and how often each was read.
type fakeLoader struct {
	mu     sync.Mutex
	users  map[int64]int64
	tokens map[int64]int64
	spent  map[int64]int64 // per key, whatever the window
	calls  map[string]int
	err    error
	delay  time.Duration
	during func() // runs once, after the value is read and before it is returned
}

func newLoader() *fakeLoader {
	return &fakeLoader{users: map[int64]int64{}, tokens: map[int64]int64{}, spent: map[int64]int64{}, calls: map[string]int{}}
}

func (f *fakeLoader) LoadUser(ctx context.Context, id int64) (int64, error) {
	return f.load(ctx, "u", id, f.users)
}

func (f *fakeLoader) LoadToken(ctx context.Context, id int64) (int64, error) {
	return f.load(ctx, "t", id, f.tokens)
}

func (f *fakeLoader) LoadSpent(ctx context.Context, id int64, _, _ time.Time) (int64, error) {
	return f.load(ctx, "w", id, f.spent)
}

// load reads the value first and then waits, like a SQL read whose answer is already stale when it arrives.
func (f *fakeLoader) load(_ context.Context, kind string, id int64, m map[int64]int64) (int64, error) {
	f.mu.Lock()
	f.calls[fmt.Sprintf("%s%d", kind, id)]++
	v, err, during := m[id], f.err, f.during
	f.during = nil
	f.mu.Unlock()
	if during != nil {
		during()
	}
	time.Sleep(f.delay)
	return v, err
}

func (f *fakeLoader) set(user, token int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.users[1], f.tokens[1] = user, token
}

func (f *fakeLoader) count(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[key]
}

// fakeClock moves only when told to, so holds can expire without sleeping.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock { return &fakeClock{t: time.Now()} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// factory builds a fresh, empty ledger over loader; each backend supplies one.
type factory func(t *testing.T, loader Loader, opts ...Option) Ledger

// eachBackend runs fn against the in-process ledger and against real Redis (skipped loudly if unreachable).
func eachBackend(t *testing.T, fn func(t *testing.T, newLedger factory)) {
	t.Run("memory", func(t *testing.T) {
		t.Parallel()
		fn(t, func(_ *testing.T, l Loader, opts ...Option) Ledger { return NewMemory(l, opts...) })
	})
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		fn(t, newRedisLedger)
	})
	t.Run("redis-batched", func(t *testing.T) {
		t.Parallel()
		fn(t, func(t *testing.T, l Loader, opts ...Option) Ledger {
			r := newRedisLedger(t, l, opts...).(*Redis)
			b := r.StartBatcher()
			t.Cleanup(func() { _ = b.Close(context.Background()) })
			return r
		})
	})
	t.Run("redis-leased", func(t *testing.T) {
		t.Parallel()
		fn(t, newLeasedLedger)
	})
}

var (
	limited   = Account{UserID: 1, TokenID: 1, TokenLimited: true}
	unlimited = Account{UserID: 1, TokenID: 1}
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func balances(t *testing.T, l Ledger) (user, token int64) {
	t.Helper()
	ctx := context.Background()
	user, err := l.UserBalance(ctx, 1)
	must(t, err)
	token, err = l.TokenRemain(ctx, 1)
	must(t, err)
	return user, token
}

func wantBalances(t *testing.T, l Ledger, user, token int64) {
	t.Helper()
	u, tk := balances(t, l)
	if u != user || tk != token {
		t.Fatalf("balances: user %d token %d, want user %d token %d", u, tk, user, token)
	}
}

func TestReserve_RefusesOverdraftUnderConcurrency(t *testing.T) {
	cases := []struct {
		name        string
		user, token int64
		acct        Account
		amount      int64
		wantOK      int
		wantErr     error
	}{
		{"nearly empty limited key", 1_000_000, 555, limited, 10, 55, ErrInsufficientToken},
		{"nearly empty user, unlimited key", 555, 0, unlimited, 10, 55, ErrInsufficientUser},
		{"user tighter than limited key", 305, 555, limited, 10, 30, ErrInsufficientUser},
	}
	eachBackend(t, func(t *testing.T, newLedger factory) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				loader := newLoader()
				loader.set(tc.user, tc.token)
				l := newLedger(t, loader)
				ctx := context.Background()

				// A watcher samples both balances while the reserves race, so a transient overdraft is caught too.
				stop := make(chan struct{})
				watched := make(chan error, 1)
				go func() {
					defer close(watched)
					for {
						select {
						case <-stop:
							return
						default:
						}
						u, err := l.UserBalance(ctx, 1)
						if err == nil && u < 0 {
							watched <- fmt.Errorf("user balance went to %d", u)
							return
						}
						if tc.acct.TokenLimited {
							if tk, err := l.TokenRemain(ctx, 1); err == nil && tk < 0 {
								watched <- fmt.Errorf("token remain went to %d", tk)
								return
							}
						}
					}
				}()

				var ok, refused atomic.Int64
				var wg sync.WaitGroup
				start := make(chan struct{})
				errs := make(chan error, 200)
				for i := range 200 {
					wg.Go(func() {
						<-start
						err := l.Reserve(ctx, fmt.Sprintf("req-%d", i), tc.acct, tc.amount)
						switch {
						case err == nil:
							ok.Add(1)
						case errors.Is(err, tc.wantErr) && errors.Is(err, ErrInsufficient):
							refused.Add(1)
						default:
							errs <- err
						}
					})
				}
				close(start)
				wg.Wait()
				close(stop)
				close(errs)
				for err := range errs {
					t.Errorf("unexpected error: %v", err)
				}
				if err := <-watched; err != nil {
					t.Fatal(err)
				}
				if int(ok.Load()) != tc.wantOK || ok.Load()+refused.Load() != 200 {
					t.Fatalf("holds: %d ok, %d refused; want %d ok", ok.Load(), refused.Load(), tc.wantOK)
				}
				u, err := l.UserBalance(ctx, 1)
				must(t, err)
				if want := tc.user - ok.Load()*tc.amount; u != want || u < 0 {
					t.Fatalf("user balance %d, want %d", u, want)
				}
				if tc.acct.TokenLimited {
					tk, err := l.TokenRemain(ctx, 1)
					must(t, err)
					if want := tc.token - ok.Load()*tc.amount; tk != want || tk < 0 {
						t.Fatalf("token remain %d, want %d", tk, want)
					}
				}
			})
		}
	})
}

func TestSettle_ChargesActualWithinAvailable(t *testing.T) {
	cases := []struct {
		name                   string
		user, token            int64
		acct                   Account
		hold, actual           int64
		wantCharged, wantShort int64
		wantUser, wantToken    int64
	}{
		{"below hold refunds the rest", 1000, 1000, limited, 100, 50, 50, 0, 950, 950},
		{"exactly the hold", 1000, 1000, limited, 100, 100, 100, 0, 900, 900},
		{"nothing used", 1000, 1000, limited, 100, 0, 0, 0, 1000, 1000},
		{"above hold with room", 1000, 1000, limited, 100, 150, 150, 0, 850, 850},
		{"above hold, key runs dry", 1000, 120, limited, 100, 200, 120, 80, 880, 0},
		{"above hold, user runs dry", 130, 0, unlimited, 100, 500, 130, 370, 0, 0},
		{"zero hold", 1000, 1000, limited, 0, 30, 30, 0, 970, 970},
		{"large amounts stay exact", 500_000_000_000_000, 400_000_000_000_007, limited,
			100_000_000_000_007, 123_456_789_012_345, 123_456_789_012_345, 0,
			376_543_210_987_655, 276_543_210_987_662},
	}
	eachBackend(t, func(t *testing.T, newLedger factory) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				loader := newLoader()
				loader.set(tc.user, tc.token)
				l := newLedger(t, loader)
				ctx := context.Background()
				must(t, l.Reserve(ctx, "r1", tc.acct, tc.hold))
				s, err := l.Settle(ctx, "r1", tc.actual)
				must(t, err)
				want := Settlement{Held: tc.hold, Charged: tc.wantCharged, Shortfall: tc.wantShort}
				if s != want {
					t.Fatalf("settlement %+v, want %+v", s, want)
				}
				wantBalances(t, l, tc.wantUser, tc.wantToken)
			})
		}
	})
}

func TestSettle_DuplicateIsIdempotentUnderConcurrency(t *testing.T) {
	eachBackend(t, func(t *testing.T, newLedger factory) {
		loader := newLoader()
		loader.set(1000, 1000)
		l := newLedger(t, loader)
		ctx := context.Background()
		must(t, l.Reserve(ctx, "dup", limited, 100))

		results := make([]Settlement, 10)
		var wg sync.WaitGroup
		for i := range results {
			wg.Go(func() {
				s, err := l.Settle(ctx, "dup", 70)
				if err != nil {
					t.Error(err)
				}
				results[i] = s
			})
		}
		wg.Wait()
		firsts := 0
		for _, s := range results {
			if !s.Duplicate {
				firsts++
			}
			s.Duplicate = false
			if s != (Settlement{Held: 100, Charged: 70}) {
				t.Errorf("settlement %+v, want held 100 charged 70", s)
			}
		}
		if firsts != 1 {
			t.Fatalf("%d settlements were not marked duplicate, want exactly 1", firsts)
		}
		// A late retry with another amount still gets the first answer and charges nothing more.
		s, err := l.Settle(ctx, "dup", 999)
		must(t, err)
		if !s.Duplicate || s.Charged != 70 {
			t.Fatalf("late duplicate %+v, want the first result", s)
		}
		wantBalances(t, l, 930, 930)
		if err := l.Reserve(ctx, "dup", limited, 1); !errors.Is(err, ErrDuplicateHold) {
			t.Fatalf("reserve of a settled id: %v, want ErrDuplicateHold", err)
		}
	})
}

func TestRelease_ReturnsMoneyAndIsIdempotent(t *testing.T) {
	eachBackend(t, func(t *testing.T, newLedger factory) {
		loader := newLoader()
		loader.set(1000, 500)
		l := newLedger(t, loader)
		ctx := context.Background()

		must(t, l.Reserve(ctx, "a", limited, 300))
		wantBalances(t, l, 700, 200)
		must(t, l.Release(ctx, "a"))
		must(t, l.Release(ctx, "a"))
		wantBalances(t, l, 1000, 500)
		if _, err := l.Settle(ctx, "a", 10); !errors.Is(err, ErrNoHold) {
			t.Fatalf("settle after release: %v, want ErrNoHold", err)
		}

		must(t, l.Reserve(ctx, "b", limited, 300))
		_, err := l.Settle(ctx, "b", 120)
		must(t, err)
		must(t, l.Release(ctx, "b")) // the relay's deferred Release after a successful Settle
		wantBalances(t, l, 880, 380)
	})
}

func TestUnknownRequest(t *testing.T) {
	eachBackend(t, func(t *testing.T, newLedger factory) {
		l := newLedger(t, newLoader())
		ctx := context.Background()
		if _, err := l.Settle(ctx, "never", 10); !errors.Is(err, ErrNoHold) {
			t.Fatalf("settle unknown: %v, want ErrNoHold", err)
		}
		if err := l.Release(ctx, "never"); err != nil {
			t.Fatalf("release unknown: %v, want nil", err)
		}
	})
}

func TestReserve_RejectsDuplicateAndInvalid(t *testing.T) {
	eachBackend(t, func(t *testing.T, newLedger factory) {
		loader := newLoader()
		loader.set(1000, 1000)
		l := newLedger(t, loader)
		ctx := context.Background()
		must(t, l.Reserve(ctx, "x", limited, 10))
		if err := l.Reserve(ctx, "x", limited, 10); !errors.Is(err, ErrDuplicateHold) {
			t.Fatalf("second reserve: %v, want ErrDuplicateHold", err)
		}
		wantBalances(t, l, 990, 990)
		for _, tc := range []struct {
			name   string
			reqID  string
			acct   Account
			amount int64
		}{
			{"negative amount", "n", limited, -1},
			{"empty request id", "", limited, 1},
			{"no user", "u", Account{TokenID: 1, TokenLimited: true}, 1},
			{"limited without token", "t", Account{UserID: 1, TokenLimited: true}, 1},
		} {
			if err := l.Reserve(ctx, tc.reqID, tc.acct, tc.amount); !errors.Is(err, ErrInvalid) {
				t.Errorf("%s: %v, want ErrInvalid", tc.name, err)
			}
		}
		if _, err := l.Settle(ctx, "x", -5); !errors.Is(err, ErrInvalid) {
			t.Fatalf("negative settle: %v, want ErrInvalid", err)
		}
	})
}

func TestLoader_CalledOncePerAccount(t *testing.T) {
	eachBackend(t, func(t *testing.T, newLedger factory) {
		loader := newLoader()
		loader.set(10_000, 10_000)
		l := newLedger(t, loader)
		ctx := context.Background()
		for i := range 20 {
			id := fmt.Sprintf("r%d", i)
			must(t, l.Reserve(ctx, id, limited, 10))
			_, err := l.Settle(ctx, id, 5)
			must(t, err)
			balances(t, l)
		}
		if u, tk := loader.count("u1"), loader.count("t1"); u != 1 || tk != 1 {
			t.Fatalf("loader calls: user %d token %d, want 1 each", u, tk)
		}
		wantBalances(t, l, 9900, 9900)
	})
}

func TestLoader_ErrorIsReturnedAndRetried(t *testing.T) {
	eachBackend(t, func(t *testing.T, newLedger factory) {
		loader := newLoader()
		loader.set(100, 100)
		loader.err = errors.New("sql down")
		l := newLedger(t, loader)
		ctx := context.Background()
		err := l.Reserve(ctx, "r", limited, 10)
		if err == nil || errors.Is(err, ErrInsufficient) || !errors.Is(err, loader.err) {
			t.Fatalf("reserve with failing loader: %v, want the loader's error", err)
		}
		loader.mu.Lock()
		loader.err = nil
		loader.mu.Unlock()
		must(t, l.Reserve(ctx, "r", limited, 10))
		wantBalances(t, l, 90, 90)
	})
}

func TestAdjustUser_WithOutstandingHolds(t *testing.T) {
	eachBackend(t, func(t *testing.T, newLedger factory) {
		loader := newLoader()
		loader.set(1000, 1000)
		l := newLedger(t, loader)
		ctx := context.Background()

		// Not loaded yet: a no-op, the first touch reads SQL (which already includes the top-up).
		must(t, l.AdjustUser(ctx, 1, 5000))
		wantBalances(t, l, 1000, 1000)

		must(t, l.Reserve(ctx, "a", unlimited, 300))
		must(t, l.AdjustUser(ctx, 1, 500))
		wantBalances(t, l, 1200, 1000)
		must(t, l.AdjustUser(ctx, 1, -1100))
		wantBalances(t, l, 100, 1000)
		if err := l.Reserve(ctx, "b", unlimited, 101); !errors.Is(err, ErrInsufficientUser) {
			t.Fatalf("reserve beyond adjusted balance: %v", err)
		}
		s, err := l.Settle(ctx, "a", 100)
		must(t, err)
		if s.Charged != 100 {
			t.Fatalf("settlement %+v", s)
		}
		wantBalances(t, l, 300, 1000)
		if n := loader.count("u1"); n != 1 {
			t.Fatalf("user loaded %d times, want 1", n)
		}
	})
}

func TestAdjustUser_DuringLoadIsNotLost(t *testing.T) {
	// The load read SQL before the admin's top-up and the top-up lands while the load is in flight. The stale
	// value must be discarded and SQL read again, or the top-up would vanish from the live balance.
	eachBackend(t, func(t *testing.T, newLedger factory) {
		loader := newLoader()
		loader.set(100, 0)
		l := newLedger(t, loader)
		ctx := context.Background()
		loader.during = func() {
			loader.set(600, 0)
			must(t, l.AdjustUser(ctx, 1, 500))
		}
		if v, err := l.UserBalance(ctx, 1); err != nil || v != 600 {
			t.Fatalf("balance %d, %v; want 600", v, err)
		}
		if n := loader.count("u1"); n != 2 {
			t.Fatalf("user loaded %d times, want 2 (the stale load discarded)", n)
		}
	})
}

func TestSetToken_WithOutstandingHolds(t *testing.T) {
	eachBackend(t, func(t *testing.T, newLedger factory) {
		loader := newLoader()
		loader.set(10_000, 1000)
		l := newLedger(t, loader)
		ctx := context.Background()

		must(t, l.SetToken(ctx, 2, 777)) // never loaded: the new value is authoritative, no SQL read
		if v, err := l.TokenRemain(ctx, 2); err != nil || v != 777 || loader.count("t2") != 0 {
			t.Fatalf("token 2 remain %d, %v, loads %d; want 777 without a load", v, err, loader.count("t2"))
		}

		must(t, l.Reserve(ctx, "a", limited, 300))
		must(t, l.SetToken(ctx, 1, 500))
		wantBalances(t, l, 9700, 200)
		if err := l.Reserve(ctx, "b", limited, 250); !errors.Is(err, ErrInsufficientToken) {
			t.Fatalf("reserve beyond new quota: %v, want ErrInsufficientToken", err)
		}
		_, err := l.Settle(ctx, "a", 300)
		must(t, err)
		wantBalances(t, l, 9700, 200)
	})
}

func TestForget_ReloadsKeepingHolds(t *testing.T) {
	eachBackend(t, func(t *testing.T, newLedger factory) {
		loader := newLoader()
		loader.set(1000, 1000)
		l := newLedger(t, loader)
		ctx := context.Background()

		must(t, l.Reserve(ctx, "a", limited, 200))
		must(t, l.Forget(ctx, 0, 0)) // zero ids are skipped
		wantBalances(t, l, 800, 800)

		loader.set(5000, 3000) // an admin rewrote both in SQL
		must(t, l.Forget(ctx, 1, 1))
		wantBalances(t, l, 4800, 2800) // the outstanding hold still counts
		if u, tk := loader.count("u1"), loader.count("t1"); u != 2 || tk != 2 {
			t.Fatalf("loader calls: user %d token %d, want 2 each", u, tk)
		}
		s, err := l.Settle(ctx, "a", 250)
		must(t, err)
		if s.Charged != 250 {
			t.Fatalf("settlement %+v", s)
		}
		wantBalances(t, l, 4750, 2750)

		// Forgotten and then settled: the settle loads what it needs first.
		must(t, l.Reserve(ctx, "b", limited, 100))
		must(t, l.Forget(ctx, 1, 1))
		_, err = l.Settle(ctx, "b", 100)
		must(t, err)
		wantBalances(t, l, 4900, 2900) // SQL (5000/3000) minus what this node charged since the reload
	})
}

func TestHold_ExpiresAndReturnsMoney(t *testing.T) {
	eachBackend(t, func(t *testing.T, newLedger factory) {
		loader := newLoader()
		loader.set(1000, 1000)
		clock := newClock()
		l := newLedger(t, loader, WithClock(clock.Now), WithHoldTTL(time.Hour))
		ctx := context.Background()

		must(t, l.Reserve(ctx, "crashed", limited, 400))
		must(t, l.Reserve(ctx, "late", limited, 100))
		clock.Advance(time.Hour + 2*time.Minute)
		if _, err := l.Settle(ctx, "late", 100); !errors.Is(err, ErrNoHold) {
			t.Fatalf("settle of an expired hold: %v, want ErrNoHold", err)
		}
		// Reserving under the same id sweeps its shard/accounts and finds the id free again.
		must(t, l.Reserve(ctx, "crashed", limited, 0))
		wantBalances(t, l, 1000, 1000)
	})
}

func TestSettleMath(t *testing.T) {
	cases := []struct {
		held, actual, availU, availT int64
		limited                      bool
		charged, short               int64
	}{
		{100, 50, 0, 0, true, 50, 0},
		{100, 300, 1000, 50, true, 150, 150},
		{100, 300, 1000, 50, false, 300, 0},
		{100, 300, -20, 500, true, 100, 200},
		{0, 0, 0, 0, false, 0, 0},
	}
	for _, tc := range cases {
		c, s := settleMath(tc.held, tc.actual, tc.availU, tc.availT, tc.limited)
		if c != tc.charged || s != tc.short {
			t.Errorf("settleMath(%+v) = %d, %d; want %d, %d", tc, c, s, tc.charged, tc.short)
		}
	}
}

package ledger

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// BenchmarkMemoryReserveSettle measures one hold and its settlement, for a key without a budget (which must cost
// what it did before budgets existed) and for one with a daily and a monthly budget.
func BenchmarkMemoryReserveSettle(b *testing.B) {
	benchReserveSettle(b, func(lo Loader) Ledger { return NewMemory(lo) })
}

// BenchmarkLeasedReserveSettle is the same through the Redis ledger behind node-local leases (the relay's
// MariaDB + Redis shape): once a lease is granted, a hold and its settlement should not wait on Redis.
func BenchmarkLeasedReserveSettle(b *testing.B) {
	benchReserveSettle(b, func(lo Loader) Ledger {
		l := NewLeased(NewRedis(testRedisClient(b), testPrefix(b), lo), LeaseOptions{}).Start()
		b.Cleanup(func() { _ = l.Close(context.Background()) })
		return l
	})
}

func benchReserveSettle(b *testing.B, open func(Loader) Ledger) {
	for _, c := range []struct {
		name string
		acct Account
	}{
		{"unlimited-key", Account{UserID: 1, TokenID: 1}},
		{"no-budget", Account{UserID: 1, TokenID: 1, TokenLimited: true}},
		{"budgets", Account{UserID: 1, TokenID: 1, TokenLimited: true, Windows: Budgets(time.Now(), 1<<50, 1<<50)}},
	} {
		b.Run(c.name, func(b *testing.B) {
			loader := newLoader()
			loader.set(1<<50, 1<<50)
			l := open(loader)
			ctx := context.Background()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				id := strconv.Itoa(i)
				if err := l.Reserve(ctx, id, c.acct, 10); err != nil {
					b.Fatal(err)
				}
				if _, err := l.Settle(ctx, id, 10); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

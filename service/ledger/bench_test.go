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
	for _, c := range []struct {
		name string
		acct Account
	}{
		{"no-budget", Account{UserID: 1, TokenID: 1, TokenLimited: true}},
		{"budgets", Account{UserID: 1, TokenID: 1, TokenLimited: true, Windows: Budgets(time.Now(), 1<<50, 1<<50)}},
	} {
		b.Run(c.name, func(b *testing.B) {
			loader := newLoader()
			loader.set(1<<50, 1<<50)
			l := NewMemory(loader)
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

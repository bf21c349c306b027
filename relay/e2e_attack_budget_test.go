package relay_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// TestAttack_BudgetSwitchedOnRightAfterSpending: a key spends without a budget, and its owner switches a daily
// budget on at once, before the usage log writer (which batches) has written those calls. The window is then
// reloaded from SQL: it must still count what the key spent today, so a budget below that refuses the next call.
func TestAttack_BudgetSwitchedOnRightAfterSpending(t *testing.T) {
	t.Parallel()
	const start = 1_000_000
	s := newStandard(t, start)
	s.fiftyPerCall()
	k := s.world.key(s.alice, nil)
	for i := range 3 {
		if a := s.call("POST", "/v1/chat/completions", k.Key, chatBody("gpt-4o-mini", false)); a.status != http.StatusOK {
			t.Fatalf("call %d: %d %s", i, a.status, a.body)
		}
	}
	if r := s.alice.c.Do("PATCH", fmt.Sprintf("/api/tokens/%d", k.ID), map[string]any{"daily_budget": 100}); r.Status != http.StatusOK {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	// 150 spent today, budget 100: refused.
	budgetRefused(t, s.call("POST", "/v1/chat/completions", k.Key, chatBody("gpt-4o-mini", false)), false, 24*time.Hour)
	s.waitLogs(3, "token_id = ?", k.ID)
	if sum := s.sumCost(k.ID); sum != 150 {
		t.Fatalf("Σ logged cost %d, want 150 (the budget switched on let a call through)", sum)
	}
	s.books(s.logs(), s.alice.id, start, nil)
}

package relay_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
)

// Money in through redemption codes, money out through relayed calls: Σ credits − Σ logged cost = balance,
// in SQL and in the live ledger, with codes redeemed while the user's calls are in flight.
func TestBooks_RedeemedCodesAndSpendingAddUp(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 0)
	w := s.world
	const quota = 3_000_000
	r := w.root.Do("POST", "/api/admin/redemptions", map[string]any{"name": "books", "count": 4, "quota": quota})
	if r.Status != http.StatusCreated {
		t.Fatalf("create batch: %d %s", r.Status, r.Body)
	}
	var batch struct{ Codes []string }
	r.JSON(t, &batch)

	redeem := func(code string) {
		t.Helper()
		r := s.alice.c.Do("POST", "/api/user/redeem", map[string]any{"code": code})
		if r.Status != http.StatusOK {
			t.Errorf("redeem: %d %s", r.Status, r.Body)
		}
	}
	redeem(batch.Codes[0])
	var wg sync.WaitGroup
	for i := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path, body := "/v1/chat/completions", chatBody("gpt-4o-mini", i%2 == 0)
			if i%3 == 2 {
				path, body = "/v1/messages", messagesBody("claude-sonnet-4-5", i%4 == 0)
			}
			a, err := w.tryCall(context.Background(), "POST", path, s.key.Key, body)
			if err != nil || a.status != http.StatusOK {
				t.Errorf("call %d: %v %+v", i, err, a)
			}
		}()
		if i%8 == 4 { // codes redeemed while calls hold and settle
			redeem(batch.Codes[1+i/8])
		}
	}
	wg.Wait()
	rows := w.waitLogs(24, "user_id = ?", s.alice.id)
	var spent int64
	for _, l := range rows {
		spent += l.Cost
	}
	credits, err := w.node.App.Store.SumCredits(context.Background(), s.alice.id)
	if err != nil {
		t.Fatal(err)
	}
	if credits != 4*quota || spent <= 0 {
		t.Fatalf("Σ credits %d (want %d), Σ cost %d", credits, 4*quota, spent)
	}
	u := w.sqlUser(s.alice.id)
	if live := w.liveBalance(s.alice.id); credits-spent != u.Quota || credits-spent != live || u.UsedQuota != spent {
		t.Fatalf("Σ credits %d − Σ cost %d ≠ SQL balance %d / live %d (used_quota %d)", credits, spent, u.Quota, live, u.UsedQuota)
	}
}

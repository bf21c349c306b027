package relay_test

import (
	"fmt"
	"net/http"
	"testing"

	"tollgate/app/apptest"
)

// listKeys reads one page of keys from path with c.
func listKeys(t testing.TB, c *apptest.Client, path string) map[int64]apiKey {
	t.Helper()
	r := c.Do("GET", path, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	var p struct{ Items []apiKey }
	r.JSON(t, &p)
	out := make(map[int64]apiKey, len(p.Items))
	for _, k := range p.Items {
		out[k.ID] = k
	}
	return out
}

// The key lists fill spent_today / spent_month for the whole page at once; each key's values must still be
// its own Σ logged cost, with and without budgets (a budget's live window, else SQL).
func TestKeyList_SpentOfEveryKeyOnAPageIsItsOwnLoggedCost(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000)
	s.fiftyPerCall()
	bob := s.user("bob", 1_000_000)
	keys := []struct {
		k     apiKey
		calls int
	}{
		{s.key, 0}, // no budget, nothing spent
		{s.world.key(s.alice, map[string]any{"daily_budget": 10_000}), 2},
		{s.world.key(s.alice, map[string]any{"monthly_budget": 10_000}), 1},
		{s.world.key(s.alice, nil), 3},
		{s.world.key(s.alice, map[string]any{"daily_budget": 10_000, "monthly_budget": 20_000}), 4},
		{s.world.key(bob, nil), 5},
		{s.world.key(bob, map[string]any{"daily_budget": 10_000}), 1},
	}
	total := 0
	for _, k := range keys {
		for i := 0; i < k.calls; i++ {
			if a := s.call("POST", "/v1/chat/completions", k.k.Key, chatBody("gpt-4o-mini", false)); a.status != http.StatusOK {
				t.Fatalf("key %d call %d: %d %s", k.k.ID, i, a.status, a.body)
			}
		}
		total += k.calls
	}
	s.waitLogs(total)
	want := map[int64]int64{}
	for _, k := range keys {
		want[k.k.ID] = s.sumCost(k.k.ID)
		if want[k.k.ID] != int64(50*k.calls) {
			t.Fatalf("key %d: Σ logged cost %d, want %d", k.k.ID, want[k.k.ID], 50*k.calls)
		}
	}
	check := func(name string, got map[int64]apiKey, ids ...int64) {
		t.Helper()
		for _, id := range ids {
			k, ok := got[id]
			if !ok {
				t.Fatalf("%s: key %d missing", name, id)
			}
			if k.SpentToday != want[id] || k.SpentMonth != want[id] {
				t.Fatalf("%s: key %d spent_today %d spent_month %d, want %d", name, id, k.SpentToday, k.SpentMonth, want[id])
			}
		}
	}
	aliceIDs := []int64{keys[0].k.ID, keys[1].k.ID, keys[2].k.ID, keys[3].k.ID, keys[4].k.ID}
	bobIDs := []int64{keys[5].k.ID, keys[6].k.ID}
	check("GET /api/tokens (alice)", listKeys(t, s.alice.c, "/api/tokens?size=100"), aliceIDs...)
	check("GET /api/tokens (bob)", listKeys(t, bob.c, "/api/tokens?size=100"), bobIDs...)
	check("GET /api/admin/tokens?user_id=alice", listKeys(t, s.root, fmt.Sprintf("/api/admin/tokens?user_id=%d&size=100", s.alice.id)), aliceIDs...)
	check("GET /api/admin/tokens", listKeys(t, s.root, "/api/admin/tokens?size=100"), append(aliceIDs, bobIDs...)...)
	// A small page: the sums of one page never borrow from keys on another.
	page := listKeys(t, s.alice.c, "/api/tokens?size=2&page=2")
	if len(page) != 2 {
		t.Fatalf("page 2 of 2 holds %d keys", len(page))
	}
	for id := range page {
		check("GET /api/tokens page 2", page, id)
	}
	// The single-key view agrees with the list.
	for _, id := range aliceIDs {
		if v := keyView(t, s.alice, id); v.SpentToday != want[id] || v.SpentMonth != want[id] {
			t.Fatalf("GET /api/tokens/%d: %+v, want %d", id, v, want[id])
		}
	}
}

package relay_test

// Spend limits of a key: daily and monthly budgets are windows of the same atomic reservation as the balance,
// so a budget is never exceeded, on either shape, under concurrency, across a day or month boundary and a
// restart. Every call here costs exactly 50 units (a per-call price), so the hold is the cost.

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"tollgate/app/apptest"
	"tollgate/service/ledger"
)

// testClock is the relay's clock in tests that cross a day or month boundary without sleeping.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func withClock(c *testClock) func(*apptest.Env) {
	return func(e *apptest.Env) { e.Options.Clock = c.Now }
}

// fiftyPerCall prices both test models at 50 units a call, whatever the tokens.
func (w *world) fiftyPerCall() {
	w.t.Helper()
	w.prices(price{Model: "gpt-4o-mini", Input: "0", Output: "0", PerCall: "0.00005"},
		price{Model: "claude-sonnet-4-5", Input: "0", Output: "0", PerCall: "0.00005"})
}

// adminKeyView finds a key in the admin's list of userID's keys.
func (w *world) adminKeyView(userID, keyID int64) apiKey {
	w.t.Helper()
	r := w.root.Do("GET", fmt.Sprintf("/api/admin/tokens?user_id=%d", userID), nil)
	var p struct{ Items []apiKey }
	r.JSON(w.t, &p)
	for _, k := range p.Items {
		if k.ID == keyID {
			return k
		}
	}
	w.t.Fatalf("key %d not in the admin list: %d %s", keyID, r.Status, r.Body)
	return apiKey{}
}

// budgetRefused checks a key_budget_exhausted answer in the protocol of path: 429, no retry, and a
// Retry-After that ends within the window (at most maxWait).
func budgetRefused(t testing.TB, a *answer, anthropic bool, maxWait time.Duration) {
	t.Helper()
	if anthropic {
		anthropicErr(t, a, http.StatusTooManyRequests, "rate_limit_error")
	} else {
		openAIErr(t, a, http.StatusTooManyRequests, "key_budget_exhausted")
		if typ := a.M(t)["error"].(map[string]any)["type"]; typ != "insufficient_quota" {
			t.Fatalf("OpenAI error type %v, want insufficient_quota", typ)
		}
	}
	if a.header.Get("x-should-retry") != "false" {
		t.Fatalf("budget refusal without x-should-retry: false: %v", a.header)
	}
	ra, err := strconv.Atoi(a.header.Get("Retry-After"))
	if err != nil || ra < 1 || time.Duration(ra)*time.Second > maxWait+time.Second {
		t.Fatalf("Retry-After %q, want 1 … %s", a.header.Get("Retry-After"), maxWait)
	}
}

func (w *world) sumCost(tokenID int64) int64 {
	w.t.Helper()
	var sum int64
	for _, l := range w.logs("token_id = ?", tokenID) {
		sum += l.Cost
	}
	return sum
}

func TestBudget_DailyBudgetRefusesTheThirdCallInBothShapes(t *testing.T) {
	t.Parallel()
	const start = 1_000_000
	s := newStandard(t, start)
	s.fiftyPerCall()
	// An unlimited key: the budget applies whatever the key's quota.
	k := s.world.key(s.alice, map[string]any{"daily_budget": 100})
	for i := range 2 {
		if a := s.call("POST", "/v1/chat/completions", k.Key, chatBody("gpt-4o-mini", false)); a.status != http.StatusOK {
			t.Fatalf("call %d: %d %s", i, a.status, a.body)
		}
	}
	budgetRefused(t, s.call("POST", "/v1/chat/completions", k.Key, chatBody("gpt-4o-mini", false)), false, 24*time.Hour)
	budgetRefused(t, s.call("POST", "/v1/messages", k.Key, messagesBody("claude-sonnet-4-5", false)), true, 24*time.Hour)
	budgetRefused(t, s.call("POST", "/v1/chat/completions", k.Key, chatBody("gpt-4o-mini", true)), false, 24*time.Hour)
	s.waitLogs(2, "token_id = ?", k.ID)
	if sum := s.sumCost(k.ID); sum != 100 {
		t.Fatalf("Σ logged cost %d, want 100", sum)
	}
	if v := keyView(t, s.alice, k.ID); v.SpentToday != 100 || v.SpentMonth != 100 || v.DailyBudget != 100 {
		t.Fatalf("key view %+v, want spent 100 today and this month", v)
	}
	// Another key of the same user is not limited by this key's budget.
	if a := s.call("POST", "/v1/chat/completions", s.key.Key, chatBody("gpt-4o-mini", false)); a.status != http.StatusOK {
		t.Fatalf("another key: %d %s", a.status, a.body)
	}
	s.books(s.logs(), s.alice.id, start, nil)
}

func TestBudget_TwentyConcurrentCallsNeverSpendMoreThanTheBudget(t *testing.T) {
	t.Parallel()
	const start, keyQuota = 1_000_000, 10_000
	s := newStandard(t, start)
	s.fiftyPerCall()
	for _, limited := range []bool{false, true} {
		body := map[string]any{"daily_budget": 100, "monthly_budget": 1000}
		if limited {
			body["remain_quota"] = keyQuota
		}
		k := s.world.key(s.alice, body)
		var wg sync.WaitGroup
		answers := make([]*answer, 20)
		for i := range answers {
			wg.Go(func() {
				path, b := "/v1/chat/completions", chatBody("gpt-4o-mini", i%3 == 0)
				if i%2 == 1 {
					path, b = "/v1/messages", messagesBody("claude-sonnet-4-5", i%3 == 1)
				}
				a, err := s.tryCall(context.Background(), "POST", path, k.Key, b)
				if err != nil {
					a = &answer{body: []byte(err.Error())}
				}
				answers[i] = a
			})
		}
		wg.Wait()
		ok := 0
		for i, a := range answers {
			switch a.status {
			case http.StatusOK:
				ok++
			case http.StatusTooManyRequests:
				budgetRefused(t, a, i%2 == 1, 24*time.Hour)
			default:
				t.Fatalf("call %d: %d %s", i, a.status, a.body)
			}
		}
		if ok != 2 {
			t.Fatalf("limited=%v: %d of 20 concurrent calls answered, want exactly 2", limited, ok)
		}
		s.waitLogs(2, "token_id = ?", k.ID)
		if sum := s.sumCost(k.ID); sum != 100 {
			t.Fatalf("limited=%v: Σ logged cost %d, want 100", limited, sum)
		}
		spent, live, err := s.node.App.Ledger.WindowSpent(context.Background(), k.ID, ledger.DayWindow(time.Now(), 100))
		if err != nil || !live || spent != 100 {
			t.Fatalf("limited=%v: live day window %d (live %v, %v), want 100", limited, spent, live, err)
		}
	}
	s.books(s.logs(), s.alice.id, start, nil)
}

func TestBudget_DayAndMonthRollOverAndARestartRemembers(t *testing.T) {
	t.Parallel()
	clock := &testClock{t: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
	env := apptest.NewEnv(t)
	withClock(clock)(env)
	node := env.Start(t)
	w := worldOn(t, node)
	oa, an := fake(t), fake(t)
	w.channel(openaiChannel(oa))
	w.channel(anthropicChannel(an))
	w.fiftyPerCall()
	u := w.user("roller", 1_000_000)
	k := w.key(u, map[string]any{"daily_budget": 100, "monthly_budget": 150})
	chat := func(w *world) *answer {
		return w.call("POST", "/v1/chat/completions", k.Key, chatBody("gpt-4o-mini", false))
	}
	msgs := func(w *world) *answer {
		return w.call("POST", "/v1/messages", k.Key, messagesBody("claude-sonnet-4-5", false))
	}
	mustOK := func(a *answer, what string) {
		t.Helper()
		if a.status != http.StatusOK {
			t.Fatalf("%s: %d %s", what, a.status, a.body)
		}
	}

	// Nov 29: the day's budget (100) runs out after two calls; Retry-After points at midnight, 12 h away.
	mustOK(chat(w), "day 1 call 1")
	mustOK(msgs(w), "day 1 call 2")
	budgetRefused(t, chat(w), false, 12*time.Hour)
	budgetRefused(t, msgs(w), true, 12*time.Hour)

	// Nov 30: a new day, but the month (150) has room for one call only; the refusal waits for Dec 1.
	clock.Set(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	mustOK(msgs(w), "day 2 call 1")
	a := chat(w)
	budgetRefused(t, a, false, 12*time.Hour)
	if ra, _ := strconv.Atoi(a.header.Get("Retry-After")); ra < 11*3600 {
		t.Fatalf("monthly refusal Retry-After %d s, want about 12 h (to Dec 1)", ra)
	}
	w.waitLogs(3, "token_id = ?", k.ID)
	if v := keyView(t, u, k.ID); v.SpentToday != 50 || v.SpentMonth != 150 {
		t.Fatalf("Nov 30 key view %+v, want 50 today, 150 this month", v)
	}

	// A restart (a new node on the same database, and Redis on that shape) still knows what was spent.
	w.flush()
	node.Server.Close()
	if err := node.App.Close(context.Background()); err != nil {
		t.Fatalf("close: %v", err)
	}
	w2 := worldOn(t, env.Start(t))
	budgetRefused(t, chat(w2), false, 12*time.Hour)
	if v := w2.adminKeyView(u.id, k.ID); v.SpentToday != 50 || v.SpentMonth != 150 {
		t.Fatalf("after restart, key view %+v, want 50 today, 150 this month", v)
	}

	// Dec 1, 00:00:01: both windows are new.
	clock.Set(time.Date(2026, 12, 1, 0, 0, 1, 0, time.UTC))
	mustOK(chat(w2), "Dec 1 call 1")
	mustOK(msgs(w2), "Dec 1 call 2")
	budgetRefused(t, chat(w2), false, 24*time.Hour)
	w2.waitLogs(5, "token_id = ?", k.ID)
	if v := w2.adminKeyView(u.id, k.ID); v.SpentToday != 100 || v.SpentMonth != 100 {
		t.Fatalf("Dec 1 key view %+v, want 100 today and this month", v)
	}
	w2.books(w2.logs(), u.id, 1_000_000, nil)
}

func TestBudget_BadValuesAndALoweredBudget(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000)
	s.fiftyPerCall()
	for _, body := range []map[string]any{
		{"daily_budget": -1}, {"monthly_budget": -100}, {"daily_budget": int64(1) << 60},
		{"monthly_budget": int64(1)<<53 + 1}, {"tpm": -1}, {"tpm": 2_000_000_000}, {"daily_budget": "100"},
	} {
		in := map[string]any{"name": "bad"}
		for k, v := range body {
			in[k] = v
		}
		if r := s.alice.c.Do("POST", "/api/tokens", in); r.Status != http.StatusBadRequest {
			t.Fatalf("create with %v: %d %s", body, r.Status, r.Body)
		}
		if r := s.alice.c.Do("PATCH", fmt.Sprintf("/api/tokens/%d", s.key.ID), body); r.Status != http.StatusBadRequest {
			t.Fatalf("update with %v: %d %s", body, r.Status, r.Body)
		}
	}
	k := s.world.key(s.alice, map[string]any{"daily_budget": 1000})
	patch := func(body map[string]any) {
		t.Helper()
		if r := s.alice.c.Do("PATCH", fmt.Sprintf("/api/tokens/%d", k.ID), body); r.Status != http.StatusOK {
			t.Fatalf("patch %v: %d %s", body, r.Status, r.Body)
		}
	}
	call := func() *answer { return s.call("POST", "/v1/chat/completions", k.Key, chatBody("gpt-4o-mini", false)) }
	for range 2 {
		if a := call(); a.status != http.StatusOK {
			t.Fatalf("%d %s", a.status, a.body)
		}
	}
	// Lowered below today's spend (100): the next call is refused at once.
	patch(map[string]any{"daily_budget": 60})
	budgetRefused(t, call(), false, 24*time.Hour)
	// Off: calls go through and nothing keeps the window live.
	patch(map[string]any{"daily_budget": 0})
	if a := call(); a.status != http.StatusOK {
		t.Fatalf("budget off: %d %s", a.status, a.body)
	}
	s.waitLogs(3, "token_id = ?", k.ID)
	if v := keyView(t, s.alice, k.ID); v.SpentToday != 150 || v.DailyBudget != 0 {
		t.Fatalf("budget off: key view %+v, want 150 spent today (from SQL, not the stale window)", v)
	}
	// On again at 150: the window is reloaded from SQL (150 spent), so the next call is refused.
	patch(map[string]any{"daily_budget": 150})
	budgetRefused(t, call(), false, 24*time.Hour)
	if v := keyView(t, s.alice, k.ID); v.SpentToday != 150 || v.DailyBudget != 150 {
		t.Fatalf("key view %+v, want 150 spent of 150", v)
	}
	patch(map[string]any{"daily_budget": 200})
	if a := call(); a.status != http.StatusOK {
		t.Fatalf("raised to 200: %d %s", a.status, a.body)
	}
	s.books(s.logs(), s.alice.id, 1_000_000, nil)
}

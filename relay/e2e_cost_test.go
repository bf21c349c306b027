package relay_test

// Upstream cost and profit: every log row prices the same metered usage at what the serving channel's
// upstream charges (a cost price, a ratio of the sell price, or a per-model override), and the admin stats
// report revenue, upstream cost and profit per channel, model, day and user equal to the sums of the rows.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"tollgate/app/apptest"
	"tollgate/model"
	"tollgate/model/modeltest"
	"tollgate/relay/relaytest"
)

// costWorld is a node with one fake upstream reporting 1,000 prompt + 1,000 completion tokens per call, the
// given sell prices and a user with a key.
type costWorld struct {
	*world
	up    *relaytest.Upstream
	alice *person
	key   apiKey
	from  time.Time
}

func newCostWorld(t *testing.T, prices ...price) *costWorld {
	t.Helper()
	return newCostWorldWith(t, nil, prices...)
}

// newCostWorldWith is newCostWorld on a node whose env the env funcs adjust.
func newCostWorldWith(t *testing.T, env []func(*apptest.Env), prices ...price) *costWorld {
	t.Helper()
	w := newWorld(t, env...)
	cw := &costWorld{world: w, up: fake(t, relaytest.WithTokens(1000, 1000)), from: time.Now().UTC().Add(-time.Minute)}
	w.prices(prices...)
	cw.alice = w.user("alice", 100_000_000)
	cw.key = w.key(cw.alice, nil)
	return cw
}

// costChannel creates an openai channel on the fake with extra admin fields (cost_price, cost_ratio, …).
func (cw *costWorld) costChannel(name string, models []string, extra map[string]any) int64 {
	cw.t.Helper()
	body := map[string]any{"type": "openai", "name": name, "base_url": cw.up.URL, "keys": []string{"sk-up-" + name},
		"models": models}
	for k, v := range extra {
		body[k] = v
	}
	return cw.postChannel(body)
}

// calls sends n chat calls of modelName (8 at a time), each of which must succeed.
func (cw *costWorld) calls(n int, modelName string) {
	cw.t.Helper()
	var wg sync.WaitGroup
	errs := make(chan string, n)
	sem := make(chan struct{}, 8)
	for range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			req, _ := cw.newRequest(cw.t.Context(), "POST", "/v1/chat/completions", cw.key.Key, chatBody(modelName, false))
			resp, err := httpClient.Do(req)
			if err != nil {
				errs <- err.Error()
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				errs <- fmt.Sprintf("status %d", resp.StatusCode)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		cw.t.Fatalf("call %s: %s", modelName, e)
	}
}

// statsItem is one item of any /api/admin/stats report.
type statsItem struct {
	ChannelID        int64   `json:"channel_id"`
	Name             string  `json:"name"`
	Model            string  `json:"model"`
	Date             string  `json:"date"`
	UserID           int64   `json:"user_id"`
	Username         string  `json:"username"`
	Requests         int64   `json:"requests"`
	SuccessRate      float64 `json:"success_rate"`
	P50Ms            int64   `json:"p50_ms"`
	P95Ms            int64   `json:"p95_ms"`
	FirstByteP50Ms   int64   `json:"first_byte_p50_ms"`
	PromptTokens     int64   `json:"prompt_tokens"`
	CompletionTokens int64   `json:"completion_tokens"`
	Revenue          int64   `json:"revenue"`
	UpstreamCost     int64   `json:"upstream_cost"`
	Profit           int64   `json:"profit"`
}

// stats reads GET /api/admin/stats/<what> over [cw.from, now + 1 min).
func (cw *costWorld) stats(what string, extra ...string) []statsItem {
	cw.t.Helper()
	q := url.Values{"from": {cw.from.Format(time.RFC3339)}, "to": {time.Now().UTC().Add(time.Minute).Format(time.RFC3339)}}
	for i := 0; i+1 < len(extra); i += 2 {
		q.Set(extra[i], extra[i+1])
	}
	r := cw.root.Do("GET", "/api/admin/stats/"+what+"?"+q.Encode(), nil)
	if r.Status != http.StatusOK {
		cw.t.Fatalf("stats %s: %d %s", what, r.Status, r.Body)
	}
	var rep struct {
		Items []statsItem `json:"items"`
	}
	r.JSON(cw.t, &rep)
	return rep.Items
}

// sums are Σ cost and Σ upstream_cost of the log rows matching where.
func sums(ls []model.UsageLog) (cost, upstream int64) {
	for _, l := range ls {
		cost += l.Cost
		upstream += l.UpstreamCost
	}
	return cost, upstream
}

func findItem(t *testing.T, items []statsItem, match func(statsItem) bool) statsItem {
	t.Helper()
	for _, it := range items {
		if match(it) {
			return it
		}
	}
	t.Fatalf("no matching item in %+v", items)
	return statsItem{}
}

// The done-when line: cost 0.10/0.40 vs sell 0.15/0.60 USD per 1M, 100 calls of 1,000 + 1,000
// tokens → revenue 75,000, upstream cost 50,000, profit 25,000 units, equal to Σ log rows.
func TestCost_ChannelCostPriceRevenueUpstreamCostProfit(t *testing.T) {
	t.Parallel()
	cw := newCostWorld(t, price{Model: "gpt-4o-mini", Input: "0.15", Output: "0.60"})
	id := cw.costChannel("cheap", []string{"gpt-4o-mini"}, map[string]any{"cost_price": map[string]string{"input": "0.10", "output": "0.40"}})
	cw.calls(100, "gpt-4o-mini")
	ls := cw.waitLogs(100)
	for _, l := range ls {
		if l.Cost != 750 || l.UpstreamCost != 500 || l.ChannelID != id {
			t.Fatalf("log row = cost %d upstream %d channel %d", l.Cost, l.UpstreamCost, l.ChannelID)
		}
	}
	cost, upstream := sums(ls)
	if cost != 75_000 || upstream != 50_000 {
		t.Fatalf("Σ log rows = cost %d upstream %d", cost, upstream)
	}
	ch := cw.stats("channels")
	if len(ch) != 1 {
		t.Fatalf("channels = %+v", ch)
	}
	c := ch[0]
	if c.ChannelID != id || c.Name != "cheap" || c.Requests != 100 || c.SuccessRate != 1 || c.PromptTokens != 100_000 ||
		c.CompletionTokens != 100_000 || c.Revenue != 75_000 || c.UpstreamCost != 50_000 || c.Profit != 25_000 {
		t.Fatalf("channel stats = %+v", c)
	}
	if c.P95Ms < c.P50Ms || c.P50Ms < 0 {
		t.Fatalf("percentiles p50 %d p95 %d", c.P50Ms, c.P95Ms)
	}
	// The same money by model, by day (Σ over the days) and by user.
	m := findItem(t, cw.stats("models"), func(it statsItem) bool { return it.Model == "gpt-4o-mini" })
	if m.Requests != 100 || m.Revenue != 75_000 || m.UpstreamCost != 50_000 || m.Profit != 25_000 {
		t.Fatalf("model stats = %+v", m)
	}
	var dayRev, dayUp, dayReq int64
	for _, d := range cw.stats("days") {
		dayRev, dayUp, dayReq = dayRev+d.Revenue, dayUp+d.UpstreamCost, dayReq+d.Requests
	}
	if dayRev != 75_000 || dayUp != 50_000 || dayReq != 100 {
		t.Fatalf("Σ days = revenue %d upstream %d requests %d", dayRev, dayUp, dayReq)
	}
	u := cw.stats("users", "limit", "5")
	if len(u) != 1 || u[0].UserID != cw.alice.id || u[0].Username != "alice" || u[0].Profit != 25_000 {
		t.Fatalf("user stats = %+v", u)
	}

	// The admin's log view shows upstream_cost; the owner's allowlisted view does not.
	r := cw.root.Do("GET", "/api/admin/logs?limit=1", nil)
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"upstream_cost":500`) {
		t.Fatalf("admin logs: %d %s", r.Status, r.Body)
	}
	r = cw.alice.c.Do("GET", "/api/logs?limit=5", nil)
	if r.Status != http.StatusOK || strings.Contains(string(r.Body), "upstream_cost") || !strings.Contains(string(r.Body), `"cost":750`) {
		t.Fatalf("user logs: %d %s", r.Status, r.Body)
	}
}

// cost_ratio prices the upstream at a multiple of the sell price (the price table's, before group or tier
// ratios); cost_prices override either per model.
func TestCost_RatioAndPerModelOverride(t *testing.T) {
	t.Parallel()
	cw := newCostWorld(t, price{Model: "gpt-4o-mini", Input: "0.15", Output: "0.60"}, price{Model: "gpt-4o", Input: "2.5", Output: "10"})
	ratio := cw.costChannel("ratio", []string{"gpt-4o-mini"}, map[string]any{"cost_ratio": "0.6", "priority": 10})
	cw.calls(10, "gpt-4o-mini") // 750 sold, 450 upstream each
	over := cw.costChannel("override", []string{"gpt-4o", "gpt-4o-mini"}, map[string]any{
		"cost_price":  map[string]string{"input": "0.10", "output": "0.40"},
		"cost_prices": map[string]any{"gpt-4o": map[string]string{"input": "1", "output": "4"}}})
	cw.calls(4, "gpt-4o") // only "override" serves it: 12,500 sold, 5,000 upstream each
	ls := cw.waitLogs(14)
	if cost, up := sums(cw.logs("channel_id = ?", ratio)); cost != 7_500 || up != 4_500 {
		t.Fatalf("ratio channel Σ = cost %d upstream %d", cost, up)
	}
	if cost, up := sums(cw.logs("channel_id = ?", over)); cost != 50_000 || up != 20_000 {
		t.Fatalf("override channel Σ = cost %d upstream %d", cost, up)
	}
	allCost, allUp := sums(ls)
	ch := cw.stats("channels")
	r := findItem(t, ch, func(it statsItem) bool { return it.ChannelID == ratio })
	o := findItem(t, ch, func(it statsItem) bool { return it.ChannelID == over })
	if r.Requests != 10 || r.Revenue != 7_500 || r.UpstreamCost != 4_500 || r.Profit != 3_000 {
		t.Fatalf("ratio channel stats = %+v", r)
	}
	if o.Requests != 4 || o.Revenue != 50_000 || o.UpstreamCost != 20_000 || o.Profit != 30_000 {
		t.Fatalf("override channel stats = %+v", o)
	}
	if r.Revenue+o.Revenue != allCost || r.UpstreamCost+o.UpstreamCost != allUp {
		t.Fatalf("stats ≠ Σ log rows (%d, %d)", allCost, allUp)
	}
	// Without the override the model falls back to the channel's cost price: 100 + 400.
	r2 := cw.root.Do("PATCH", fmt.Sprintf("/api/admin/channels/%d", ratio), map[string]any{"status": "disabled"})
	if r2.Status != http.StatusOK {
		t.Fatalf("disable: %d %s", r2.Status, r2.Body)
	}
	cw.calls(2, "gpt-4o-mini")
	cw.waitLogs(16)
	if cost, up := sums(cw.logs("channel_id = ? AND model = ?", over, "gpt-4o-mini")); cost != 1_500 || up != 1_000 {
		t.Fatalf("override channel, other model Σ = cost %d upstream %d", cost, up)
	}
	m := findItem(t, cw.stats("models"), func(it statsItem) bool { return it.Model == "gpt-4o-mini" })
	if m.Requests != 12 || m.Revenue != 9_000 || m.UpstreamCost != 5_500 || m.Profit != 3_500 {
		t.Fatalf("model stats = %+v", m)
	}
}

// The admin API validates the cost fields by name, shows them, and clears them with empty values.
func TestCost_ChannelFieldsValidatedShownAndCleared(t *testing.T) {
	t.Parallel()
	cw := newCostWorld(t)
	id := cw.costChannel("c", []string{"gpt-4o-mini"}, nil)
	path := fmt.Sprintf("/api/admin/channels/%d", id)
	for _, tc := range []struct {
		body  string
		field string
	}{
		{`{"cost_price":{"input":"-1"}}`, "cost_price.input"},
		{`{"cost_price":{"output":"abc"}}`, "cost_price.output"},
		{`{"cost_price":{"input":0.1}}`, "cost_price.input"},
		{`{"cost_price":{"per_call":"1000001"}}`, "cost_price.per_call"},
		{`{"cost_ratio":"-0.5"}`, "cost_ratio"},
		{`{"cost_ratio":"1e9"}`, "cost_ratio"},
		{`{"cost_ratio":"0.5","cost_price":{"input":"0.1"}}`, "cost_ratio"},
		{`{"cost_prices":{"":{"input":"1"}}}`, "cost_prices"},
		{`{"cost_prices":{"` + strings.Repeat("m", 129) + `":{"input":"1"}}}`, "cost_prices"},
		{`{"cost_prices":{"gpt-4o":{"cache_read":"x"}}}`, "cost_prices.gpt-4o.cache_read"},
		{`{"cost_prices":["gpt-4o"]}`, "cost_prices"},
	} {
		r := cw.root.Do("PATCH", path, json.RawMessage(tc.body))
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), tc.field) {
			t.Errorf("%s → %d %s, want 400 naming %s", tc.body, r.Status, r.Body, tc.field)
		}
	}
	var v struct {
		CostPrice  map[string]string            `json:"cost_price"`
		CostRatio  *string                      `json:"cost_ratio"`
		CostPrices map[string]map[string]string `json:"cost_prices"`
	}
	r := cw.root.Do("PATCH", path, map[string]any{"cost_price": map[string]string{"input": "0.10", "output": "0.4", "cache_read": "0.025"},
		"cost_prices": map[string]any{"gpt-4o": map[string]string{"per_call": "0.01"}}})
	if r.Status != http.StatusOK {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	r.JSON(t, &v)
	if v.CostPrice["input"] != "0.1" || v.CostPrice["output"] != "0.4" || v.CostPrice["cache_read"] != "0.025" || v.CostRatio != nil ||
		v.CostPrices["gpt-4o"]["per_call"] != "0.01" {
		t.Fatalf("view = %+v", v)
	}
	// Switching to a ratio needs the price cleared in the same request; the override stays.
	r = cw.root.Do("PATCH", path, map[string]any{"cost_price": map[string]string{}, "cost_ratio": "0.55"})
	if r.Status != http.StatusOK {
		t.Fatalf("switch to ratio: %d %s", r.Status, r.Body)
	}
	v.CostPrice, v.CostPrices = nil, nil
	r.JSON(t, &v)
	if v.CostPrice != nil || v.CostRatio == nil || *v.CostRatio != "0.55" || len(v.CostPrices) != 1 {
		t.Fatalf("view after switch = %s", r.Body)
	}
	r = cw.root.Do("PATCH", path, map[string]any{"cost_ratio": "", "cost_prices": map[string]any{}})
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"cost_ratio":null`) || !strings.Contains(string(r.Body), `"cost_prices":{}`) {
		t.Fatalf("clear: %d %s", r.Status, r.Body)
	}
	// The GET view (from the snapshot) agrees.
	if r = cw.root.Do("GET", path, nil); !strings.Contains(string(r.Body), `"cost_price":null`) {
		t.Fatalf("get: %s", r.Body)
	}
}

// The stats window: RFC 3339 times, to after from, at most 366 days; admins only.
func TestCost_StatsWindowValidated(t *testing.T) {
	t.Parallel()
	cw := newCostWorld(t)
	now := time.Now().UTC()
	f := func(t time.Time) string { return url.QueryEscape(t.Format(time.RFC3339)) }
	for _, tc := range []struct {
		query, field string
	}{
		{"from=yesterday", "from"},
		{"to=2026-13-01T00:00:00Z", "to"},
		{"from=" + f(now) + "&to=" + f(now), "to"},
		{"from=" + f(now) + "&to=" + f(now.Add(-time.Hour)), "to"},
		{"from=" + f(now.AddDate(0, 0, -367)) + "&to=" + f(now), "from"},
		{"from=" + f(now.AddDate(-2, 0, 0)), "from"},
	} {
		for _, what := range []string{"channels", "models", "days", "users", "overview"} {
			r := cw.root.Do("GET", "/api/admin/stats/"+what+"?"+tc.query, nil)
			var e struct {
				Error struct {
					Code  string `json:"code"`
					Field string `json:"field"`
				} `json:"error"`
			}
			if r.Status == http.StatusBadRequest {
				r.JSON(t, &e)
			}
			if r.Status != http.StatusBadRequest || e.Error.Code != "validation_failed" || !strings.Contains(string(r.Body), tc.field) {
				t.Errorf("%s?%s → %d %s, want 400 naming %s", what, tc.query, r.Status, r.Body, tc.field)
			}
		}
	}
	for _, q := range []string{"limit=0", "limit=101", "limit=x", "limit=-1"} {
		if r := cw.root.Do("GET", "/api/admin/stats/users?"+q, nil); r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "limit") {
			t.Errorf("users?%s → %d %s", q, r.Status, r.Body)
		}
	}
	// 366 days exactly is fine; the days report then lists every day the window touches.
	r := cw.root.Do("GET", "/api/admin/stats/days?from="+f(now.AddDate(0, 0, -366))+"&to="+f(now), nil)
	var rep struct {
		Items []statsItem `json:"items"`
	}
	if r.Status != http.StatusOK {
		t.Fatalf("366 days: %d %s", r.Status, r.Body)
	}
	r.JSON(t, &rep)
	if len(rep.Items) != 367 || rep.Items[0].Date != now.AddDate(0, 0, -366).Format(time.DateOnly) || rep.Items[366].Date != now.Format(time.DateOnly) {
		t.Fatalf("days = %d items, first %v", len(rep.Items), rep.Items[0])
	}
	for _, what := range []string{"channels", "models", "days", "users", "overview"} {
		if r := cw.alice.c.Do("GET", "/api/admin/stats/"+what, nil); r.Status != http.StatusForbidden {
			t.Errorf("alice %s → %d", what, r.Status)
		}
	}
}

// With LOG_SQL_DSN the reports read the log database, where the rows are (the main one has none). MySQL only.
func TestCost_StatsReadTheLogDatabase(t *testing.T) {
	t.Parallel()
	if os.Getenv(modeltest.EnvDSN) == "" {
		t.Skip("LOG_SQL_DSN is MySQL only: MariaDB pass")
	}
	logDSN := modeltest.FreshMySQL(t, "tg_costlog")
	cw := newCostWorldWith(t, []func(*apptest.Env){func(e *apptest.Env) { e.Cfg.LogSQLDSN = logDSN }},
		price{Model: "gpt-4o-mini", Input: "0.15", Output: "0.60"})
	if !cw.node.App.Store.SeparateLogs() {
		t.Fatal("LOG_SQL_DSN did not attach a log database")
	}
	id := cw.costChannel("logdb", []string{"gpt-4o-mini"}, map[string]any{"cost_price": map[string]string{"input": "0.10", "output": "0.40"}})
	cw.calls(10, "gpt-4o-mini")
	deadline := time.Now().Add(15 * time.Second)
	for {
		cw.flush()
		ch := cw.stats("channels")
		if len(ch) == 1 && ch[0].Requests == 10 {
			if c := ch[0]; c.ChannelID != id || c.Revenue != 7_500 || c.UpstreamCost != 5_000 || c.Profit != 2_500 {
				t.Fatalf("channel stats = %+v", c)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("channel stats = %+v, want 10 requests", ch)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var mainRows int64
	if err := cw.node.App.Store.DB.Model(&model.UsageLog{}).Count(&mainRows).Error; err != nil || mainRows != 0 {
		t.Fatalf("main database usage_logs = %d, %v", mainRows, err)
	}
}

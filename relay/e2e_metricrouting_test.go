package relay_test

// The Done-when list of the metric-driven routing issue, through real HTTP into fake upstreams with the
// issue's profiles (A 450 ms / 98 % / 5 USD per 1M, B 800 ms / 95 % / 12, C 200 ms / 70 % / 2; latencies ÷10).

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"tollgate/model"
	"tollgate/relay/relaytest"
)

// Simulate with performance ranks A > B > C; cost with min_success 0.9 ranks A before B and excludes C,
// naming the preference; nothing is sent upstream.
func TestMetricRouting_SimulateRanksPerformanceAndCost(t *testing.T) {
	tr := newTrio(t, 300*time.Millisecond)
	tr.warm(tr.key)
	perf := simulate(t, tr.root, map[string]any{"model": rsModel, "preferences": map[string]any{"strategy": "performance"}})
	if kept, _ := order(perf); perf.Strategy != "performance" || strings.Join(kept, ">") != "A>B>C" {
		t.Fatalf("performance ranking %v (%+v), want A>B>C", kept, perf.Candidates)
	}
	for _, c := range perf.Candidates {
		if c.Inputs == nil || c.Reason == "" || c.Share <= 0 {
			t.Fatalf("candidate without inputs, share or reason: %+v", c)
		}
	}
	cost := simulate(t, tr.root, map[string]any{"model": rsModel, "preferences": map[string]any{"strategy": "cost", "min_success": 0.9}})
	kept, excluded := order(cost)
	if strings.Join(kept, ">") != "A>B" || len(excluded) != 1 || excluded[0].Name != "C" || excluded[0].Pref != "min_success" ||
		!strings.Contains(excluded[0].Reason, "min_success") {
		t.Fatalf("cost + min_success 0.9: kept %v excluded %+v", kept, excluded)
	}
	if n := tr.since(); n["A"]+n["B"]+n["C"] != 0 {
		t.Fatalf("the simulator sent %v upstream", n)
	}
}

// 1,000 live calls under performance: A ≥ 60 %, C ≤ 10 %, every channel ≥ 3 % (no starvation).
func TestMetricRouting_PerformanceSharesOverAThousandCalls(t *testing.T) {
	tr := newTrio(t, 300*time.Millisecond)
	tr.warm(tr.key)
	tr.tune("*", rsModel, map[string]any{"strategy": "performance"})
	tr.burst(1000, 16, tr.key)
	n := tr.since()
	total := n["A"] + n["B"] + n["C"]
	t.Logf("1000 calls under performance: %v upstream calls (retries included)", n)
	if n["A"]*100 < 60*total || n["C"]*100 > 10*total {
		t.Fatalf("shares %v of %d: want A ≥ 60 %%, C ≤ 10 %%", n, total)
	}
	for name, c := range n {
		if c*100 < 3*total {
			t.Fatalf("%s starved: %d of %d", name, c, total)
		}
	}
}

// round_robin on one node: 999 calls → 333 each, exactly (a per-node counter, not a draw).
func TestMetricRouting_RoundRobinIsExact(t *testing.T) {
	tr := newTrio(t, time.Second)
	for _, up := range tr.ups {
		up.Set(relaytest.Succeed()) // a failure would add a retry to another channel's count
	}
	tr.tune("*", rsModel, map[string]any{"strategy": "round_robin"})
	tr.burst(999, 12, tr.key)
	if n := tr.since(); n["A"] != 333 || n["B"] != 333 || n["C"] != 333 {
		t.Fatalf("999 calls round-robin: %v, want 333 each", n)
	}
}

// A key avoiding A sends nothing to A; a profile with max_price 10 sends nothing to B (12); a per-request
// override (header or body field) changes only that request and its log row names the strategy; the body
// field never reaches the upstream; preferences that exclude every channel are a 400 naming them.
func TestMetricRouting_PreferencesProfileKeyAndRequest(t *testing.T) {
	tr := newTrio(t, 300*time.Millisecond)
	tr.warm(tr.key)
	avoidA := tr.world.key(tr.alice, map[string]any{"routing": map[string]any{"avoid": []string{"tag:prov-A"}}}).Key
	tr.burst(200, 8, avoidA)
	if n := tr.since(); n["A"] != 0 || n["B"]+n["C"] < 200 {
		t.Fatalf("key avoiding A: %v", n)
	}

	bob := tr.world.user("bob", rsBalance)
	if res := bob.c.Do("PATCH", "/api/user/routing", map[string]any{"max_price": 10}); res.Status != http.StatusOK {
		t.Fatalf("profile routing: %d %s", res.Status, res.Body)
	}
	bobKey := tr.world.key(bob, nil).Key
	tr.burst(200, 8, bobKey)
	if n := tr.since(); n["B"] != 0 || n["A"]+n["C"] < 200 {
		t.Fatalf("profile max_price 10: %v", n)
	}

	over := tr.do("/v1/chat/completions", tr.key, chatBody(rsModel, false), "X-Tollgate-Route", "strategy=cost")
	over.mustOK(t)
	plain := tr.do("/v1/chat/completions", tr.key, chatBody(rsModel, false))
	plain.mustOK(t)
	body := tr.do("/v1/chat/completions", tr.key, chatBody(rsModel, false, "tollgate", map[string]any{"route": "strategy=least_busy; avoid=tag:prov-B"}))
	body.mustOK(t)
	for id, want := range map[string]string{over.reqID: "cost", plain.reqID: "priority", body.reqID: "least_busy"} {
		var d struct {
			Policy string `json:"policy"`
		}
		if l := tr.logOf(id); json.Unmarshal(l.Decision.V, &d) != nil || d.Policy != want {
			t.Fatalf("log row %s: decision %s, want strategy %s", id, l.Decision.V, want)
		}
	}
	for name, up := range tr.ups {
		for _, rq := range up.Requests() {
			if strings.Contains(string(rq.Body), "tollgate") {
				t.Fatalf("%s received the routing field: %s", name, rq.Body)
			}
		}
	}

	all := tr.do("/v1/chat/completions", tr.key, chatBody(rsModel, false), "X-Tollgate-Route", "avoid=tag:prov-A,tag:prov-B; max_price=1")
	if msg := openAIErr(t, all, http.StatusBadRequest, "route_excluded_all"); !strings.Contains(msg, "avoid, max_price") {
		t.Fatalf("every channel excluded: %q should name avoid and max_price", msg)
	}
	for hdr, field := range map[string]string{"strategy=fastest": "strategy", "avoid=provider-x": "avoid", "max_price=cheap": "max_price",
		"min_success=2": "min_success", "require=teleport": "require", "strategy=cost; strategy=cost": "strategy", "colour=blue": "colour"} {
		bad := tr.do("/v1/chat/completions", tr.key, chatBody(rsModel, false), "X-Tollgate-Route", hdr)
		if msg := openAIErr(t, bad, http.StatusBadRequest, "validation_failed"); !strings.Contains(msg, field) {
			t.Fatalf("header %q: %q should name %s", hdr, msg, field)
		}
	}
	bad := tr.do("/v1/chat/completions", tr.key, chatBody(rsModel, false, "tollgate", map[string]any{"route": 5}))
	openAIErr(t, bad, http.StatusBadRequest, "validation_failed")
	bad = tr.do("/v1/chat/completions", tr.key, chatBody(rsModel, false, "tollgate", map[string]any{"billing": "free"}))
	if msg := openAIErr(t, bad, http.StatusBadRequest, "validation_failed"); !strings.Contains(msg, "tollgate.billing") {
		t.Fatalf("unknown tollgate field: %q", msg)
	}
}

// C's success rises to 99 %: within two aggregation periods its share under performance exceeds 20 %.
func TestMetricRouting_RecoveredChannelRegainsShareWithinTwoPeriods(t *testing.T) {
	const period = time.Second
	tr := newTrio(t, period)
	tr.warm(tr.key)
	tr.tune("*", rsModel, map[string]any{"strategy": "performance"})
	tr.burst(300, 16, tr.key)
	before := tr.since()
	if before["C"]*100 > 10*300 {
		t.Fatalf("C at 70 %% took %v", before)
	}
	tr.ups["C"].Set(relaytest.FailShare(1, 100, relaytest.ServerError()))
	changed := time.Now()
	for time.Since(changed) < 2*period { // live traffic for two periods
		tr.burst(64, 16, tr.key)
	}
	tr.since()
	tr.burst(400, 16, tr.key)
	after := tr.since()
	total := after["A"] + after["B"] + after["C"]
	t.Logf("C's share: before %v, two periods after it reached 99 %%: %v", before, after)
	if after["C"]*100 <= 20*total {
		t.Fatalf("two periods after C reached 99 %%: %v, want C > 20 %%", after)
	}
}

// The simulator is open to users for their own groups and keys only, naming providers rather than channels;
// admins may simulate any user or group.
func TestMetricRouting_SimulatorScopes(t *testing.T) {
	tr := newTrio(t, time.Second)
	tr.logicalGroup("vip", "2", []route{{"all", 10, 1, []int64{tr.ids["A"], tr.ids["B"]}}}, map[string]any{"access": map[string]any{"all": false}})
	bob := tr.world.user("bob", rsBalance)
	if res := tr.alice.c.Do("POST", "/api/routing/simulate", map[string]any{"model": rsModel, "group": "vip"}); res.Status != http.StatusForbidden {
		t.Fatalf("user simulating a group closed to them: %d %s", res.Status, res.Body)
	}
	if res := tr.alice.c.Do("POST", "/api/routing/simulate", map[string]any{"model": rsModel, "user_id": bob.id}); res.Status != http.StatusForbidden {
		t.Fatalf("user simulating another user: %d %s", res.Status, res.Body)
	}
	bobKey := tr.world.key(bob, nil)
	if res := tr.alice.c.Do("POST", "/api/routing/simulate", map[string]any{"model": rsModel, "token_id": bobKey.ID}); res.Status != http.StatusNotFound {
		t.Fatalf("user simulating another user's key: %d %s", res.Status, res.Body)
	}
	if res := tr.alice.c.Do("POST", "/api/routing/simulate", map[string]any{"model": rsModel, "preferences": map[string]any{"strategy": "nope"}}); res.Status != http.StatusBadRequest {
		t.Fatalf("bad preference: %d %s", res.Status, res.Body)
	}
	mine := simulate(t, tr.alice.c, map[string]any{"model": rsModel})
	if len(mine.Candidates) != 3 || mine.Strategy != "priority" {
		t.Fatalf("alice's own group: %+v", mine)
	}
	for _, c := range mine.Candidates { // users see providers, not channels (show_channel_to_users is off)
		if c.ChannelID != 0 || !strings.HasPrefix(c.Name, "prov-") {
			t.Fatalf("a user's simulation shows a channel: %+v", c)
		}
	}
	vip := simulate(t, tr.root, map[string]any{"model": rsModel, "group": "vip", "user_id": bob.id})
	if kept, _ := order(vip); len(kept) != 2 {
		t.Fatalf("admin simulating vip for bob: %+v", vip)
	}
}

// Each routed request leaves a decision row (strategy, ranking with scores and inputs, the choice, the time
// taken), found by request id and model; rows older than the retention are deleted.
func TestMetricRouting_DecisionLogAndRetention(t *testing.T) {
	tr := newTrio(t, 300*time.Millisecond)
	// The default keeps 1 in 100 decisions (every one costs a row); this test keeps every one.
	if res := tr.root.Do("PUT", "/api/admin/settings", map[string]any{"routing_decision_sample": 1}); res.Status != http.StatusOK {
		t.Fatalf("settings: %d %s", res.Status, res.Body)
	}
	tr.warm(tr.key)
	a := tr.do("/v1/chat/completions", tr.key, chatBody(rsModel, false), "X-Tollgate-Route", "strategy=balanced")
	a.mustOK(t)
	var page struct {
		Items []model.RoutingDecision `json:"items"`
	}
	waitFor(t, "the decision row", func() bool { // queued after the answer (finish), written in batches
		tr.node.App.Decisions.Flush()
		res := tr.root.Do("GET", "/api/admin/routing/decisions?request_id="+a.reqID, nil)
		return res.Status == http.StatusOK && json.Unmarshal(res.Body, &page) == nil && len(page.Items) == 1
	})
	d := page.Items[0]
	var body struct {
		Ranking []ranked `json:"ranking"`
	}
	if d.Strategy != "balanced" || d.ChannelID == 0 || d.Model != rsModel || json.Unmarshal(d.Candidates.V, &body) != nil ||
		len(body.Ranking) != 3 || body.Ranking[0].Inputs == nil || body.Ranking[0].Score <= 0 {
		t.Fatalf("decision row %+v %s", d, d.Candidates.V)
	}
	if res := tr.root.Do("GET", "/api/admin/routing/decisions?model="+rsModel+"&limit=5", nil); res.Status != http.StatusOK ||
		!strings.Contains(string(res.Body), `"next_cursor":`) {
		t.Fatalf("decisions by model: %d %s", res.Status, res.Body)
	}
	if res := tr.root.Do("GET", "/api/admin/routing/decisions?from=yesterday", nil); res.Status != http.StatusBadRequest {
		t.Fatalf("bad from: %d", res.Status)
	}
	if res := tr.alice.c.Do("GET", "/api/admin/routing/decisions", nil); res.Status != http.StatusForbidden {
		t.Fatalf("a user reading decisions: %d", res.Status)
	}
	n, err := tr.node.App.Decisions.Purge(t.Context(), time.Now().AddDate(0, 0, 8))
	if err != nil || n < 91 {
		t.Fatalf("retention 7 days, 8 days on: deleted %d (%v)", n, err)
	}
	if rows, _ := tr.node.App.Decisions.List(t.Context(), model.DecisionFilter{RequestID: a.reqID}); len(rows) != 0 {
		t.Fatalf("row left after retention: %+v", rows)
	}
}

// The admin configuration: rows per group × model with the effective tuning; invalid values name the field.
func TestMetricRouting_AdminConfiguration(t *testing.T) {
	tr := newTrio(t, time.Second)
	tr.tune("default", rsModel, map[string]any{"strategy": "balanced", "weights": map[string]any{"latency": 0.2, "success": 0.5, "cost": 0.3},
		"min_samples": 5, "failure_threshold": 0.4, "recovery_s": 30, "max_attempts": 2})
	res := tr.root.Do("GET", "/api/admin/routing/models", nil)
	var out struct {
		Items []struct {
			Group     string            `json:"group"`
			Model     string            `json:"model"`
			Effective model.RouteTuning `json:"effective"`
		} `json:"items"`
	}
	if res.Status != http.StatusOK || json.Unmarshal(res.Body, &out) != nil {
		t.Fatalf("list: %d %s", res.Status, res.Body)
	}
	found := false
	for _, it := range out.Items {
		if it.Group == "default" && it.Model == rsModel {
			found = true
			if e := it.Effective; e.Strategy != "balanced" || e.MinSamples != 5 || e.MaxAttempts != 2 || e.LatencyRefMs != 100 {
				t.Fatalf("effective tuning %+v (global latency_ref_ms 100 under the row)", e)
			}
		}
	}
	if !found {
		t.Fatalf("row missing: %s", res.Body)
	}
	plain := tr.do("/v1/chat/completions", tr.key, chatBody(rsModel, false))
	plain.mustOK(t)
	var d struct {
		Policy string `json:"policy"`
	}
	if l := tr.logOf(plain.reqID); json.Unmarshal(l.Decision.V, &d) != nil || d.Policy != "balanced" {
		t.Fatalf("the group × model strategy: %s", l.Decision.V)
	}
	for field, body := range map[string]map[string]any{
		"strategy":          {"strategy": "fastest"},
		"weights.latency":   {"weights": map[string]any{"latency": 2}},
		"max_attempts":      {"max_attempts": 50},
		"failure_threshold": {"failure_threshold": -1},
	} {
		wantField(t, tr.root.Do("PUT", "/api/admin/routing/models/default/"+rsModel, body), field)
	}
	if res := tr.root.Do("DELETE", "/api/admin/routing/models/default/"+rsModel, nil); res.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", res.Status, res.Body)
	}
	if res := tr.alice.c.Do("PUT", fmt.Sprintf("/api/admin/routing/models/default/%s", rsModel), map[string]any{}); res.Status != http.StatusForbidden {
		t.Fatalf("a user writing routing config: %d", res.Status)
	}
}

package relay_test

// The Done-when list of the logical-groups issue, through real HTTP into fake upstreams, counted from log rows.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"tollgate/relay/relaytest"
)

// Group gpt-shared with routes asxs (20) and codex2api (10), failover 2 failures / 60 s: new sessions go to
// asxs; two failures in a row cool it and new sessions go to codex2api; after the cooldown and the half-open
// probes new sessions are back on asxs. Sessions bound to codex2api during the outage return to asxs 60 s
// after it closed when return-to-primary is 60 s, and stay where they are without it.
func TestRouting_RoutesCooldownProbesAndReturnToPrimary(t *testing.T) {
	for _, rtp := range []int{60, 0} {
		t.Run(fmt.Sprintf("return_to_primary_%ds", rtp), func(t *testing.T) {
			clock := &routeClock{}
			r := newResilient(t, withRouteClock(clock))
			asxsUp, codexUp := fake(t), fake(t)
			asxs, codex := r.channel(openaiChannel(asxsUp)), r.channel(openaiChannel(codexUp))
			r.logicalGroup("gpt-shared", "1", []route{{"asxs", 20, 1, []int64{asxs}}, {"codex2api", 10, 1, []int64{codex}}},
				map[string]any{"failover": map[string]any{"consecutive_failures": 2, "cooldown_s": 60}, "return_to_primary_s": rtp})
			key := r.world.key(r.alice, map[string]any{"group": "gpt-shared"}).Key

			only(t, "100 new sessions, all healthy", r.sessions(key, "new", 0, 100), "gpt-shared/asxs")

			asxsUp.Set(relaytest.Fail(relaytest.ServerError()))
			failed := r.sessions(key, "outage", 0, 2) // each: asxs 500, then codex2api serves
			only(t, "the two failing sessions", failed, "gpt-shared/codex2api")
			if n := len(failed[1].Attempts.V); n != 2 {
				t.Fatalf("second failing session made %d attempts, want asxs then codex2api", n)
			}
			seen := asxsUp.Count()
			during := r.sessions(key, "outage", 2, 100)
			only(t, "100 new sessions while asxs cools", during, "gpt-shared/codex2api")
			if asxsUp.Count() != seen {
				t.Fatalf("asxs got %d calls while its route was open", asxsUp.Count()-seen)
			}
			var d struct {
				Considered []struct {
					Route   string `json:"route"`
					Skipped bool   `json:"skipped"`
					Reason  string `json:"reason"`
				} `json:"considered"`
			}
			if err := json.Unmarshal(during[0].Decision.V, &d); err != nil || len(d.Considered) == 0 ||
				d.Considered[0].Route != "asxs" || d.Considered[0].Reason != "route_open" {
				t.Fatalf("decision %s: want asxs skipped as route_open first", during[0].Decision.V)
			}

			asxsUp.Set(relaytest.Succeed())
			clock.advance(61 * time.Second)
			only(t, "new sessions after the cooldown (probes, then closed)", r.sessions(key, "after", 0, 20), "gpt-shared/asxs")

			// Bound to codex2api during the outage; asxs closed moments ago.
			only(t, "outage sessions just after asxs closed", r.sessions(key, "outage", 0, 10), "gpt-shared/codex2api")
			clock.advance(61 * time.Second)
			back := r.sessions(key, "outage", 10, 10)
			if rtp > 0 {
				only(t, "outage sessions 60 s after asxs closed", back, "gpt-shared/asxs")
				if back[0].Sticky != "returned:session" {
					t.Fatalf("sticky note %q, want returned:session", back[0].Sticky)
				}
				only(t, "and they stay there", r.sessions(key, "outage", 10, 10), "gpt-shared/asxs")
			} else {
				only(t, "outage sessions without return-to-primary", back, "gpt-shared/codex2api")
			}
		})
	}
}

// One session on a 3-key channel keeps its key for 20 calls; when that key 429s the session moves to one
// other key and stays there.
func TestRouting_SessionKeepsItsUpstreamKey(t *testing.T) {
	r := newResilient(t)
	up := fake(t)
	keys := []string{"sk-sticky-0", "sk-sticky-1", "sk-sticky-2"}
	r.channel(openaiChannel(up, keys...))
	body := chatBody(rsModel, false, "metadata", map[string]any{"user_id": "user_1_account__session_keys"})
	used := func(n int) map[string]int {
		up.ClearRequests()
		for range n {
			r.chat(body).mustOK(t)
		}
		return keyRequests(up)
	}
	first := used(20)
	if len(first) != 1 {
		t.Fatalf("20 calls of one session used keys %v, want one", first)
	}
	var bound string
	for k := range first {
		bound = k
	}
	up.Set(relaytest.ForKey(bound, relaytest.Fail(relaytest.RateLimited(time.Minute))))
	after := used(20)
	delete(after, bound) // the one 429 it answered
	if len(after) != 1 {
		t.Fatalf("after %s 429ed the session used %v, want one other key", bound, after)
	}
	for k, n := range after {
		if n != 20 {
			t.Fatalf("the new key %s served %d of 20", k, n)
		}
	}
}

// A key cap of 2 on a 2-key channel with 6 concurrent slow streams: no key ever has more than 2 in flight
// at the fake upstream; the rest are served by the next route.
func TestRouting_KeyCapSendsTheRestToTheNextRoute(t *testing.T) {
	r := newResilient(t)
	capped := fake(t, relaytest.WithChunks(10), relaytest.WithChunkDelay(40*time.Millisecond))
	spare := fake(t, relaytest.WithChunks(10), relaytest.WithChunkDelay(40*time.Millisecond))
	spec := openaiChannel(capped, "sk-cap-0", "sk-cap-1")
	id := r.postChannel(map[string]any{"type": spec.Type, "name": spec.Name, "base_url": spec.BaseURL, "keys": spec.Keys,
		"models": spec.Models, "key_max_concurrency": 2})
	next := r.channel(openaiChannel(spare))
	r.logicalGroup("capped", "1", []route{{"main", 20, 1, []int64{id}}, {"spill", 10, 1, []int64{next}}}, nil)
	key := r.world.key(r.alice, map[string]any{"group": "capped"}).Key
	var wg sync.WaitGroup
	errs := make(chan string, 6)
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, events, _ := r.stream("/v1/chat/completions", key, chatBody(rsModel, true, "user", fmt.Sprintf("u%d", i)))
			if res.StatusCode != http.StatusOK || len(events) == 0 {
				errs <- fmt.Sprintf("stream %d: %d with %d events", i, res.StatusCode, len(events))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	for k, peak := range capped.PeakByKey() {
		if peak > 2 {
			t.Fatalf("key %s had %d in flight, cap 2", k, peak)
		}
	}
	if spare.Count() < 2 || capped.Count()+spare.Count() != 6 {
		t.Fatalf("capped served %d, spill %d: want at least 2 on the spill route and 6 in all", capped.Count(), spare.Count())
	}
}

// A VIP user (tier 0.8) pays 40 units for a call that costs 50 at list price in a group of ratio 1.0, and
// 60 for the same call in a group of ratio 1.5: model price × group ratio × tier ratio.
func TestRouting_TierTimesGroupRatio(t *testing.T) {
	r := newResilient(t)
	up := fake(t) // 10 prompt + 20 completion tokens at 1 and 2 USD / 1M: 50 units at list price
	ch := r.channel(openaiChannel(up))
	r.logicalGroup("std", "1.0", []route{{"main", 1, 1, []int64{ch}}}, nil)
	r.logicalGroup("premium", "1.5", []route{{"main", 1, 1, []int64{ch}}}, nil)
	if res := r.root.Do("POST", "/api/admin/tiers", map[string]any{"name": "vip", "ratio": "0.8"}); res.Status != http.StatusCreated {
		t.Fatalf("create tier: %d %s", res.Status, res.Body)
	}
	calls := 0
	cost := func(key string) int64 {
		calls++
		a := r.do("/v1/chat/completions", key, chatBody(rsModel, false))
		a.mustOK(t)
		return r.logOf(a.reqID).Cost
	}
	std, premium := r.world.key(r.alice, map[string]any{"group": "std"}).Key, r.world.key(r.alice, map[string]any{"group": "premium"}).Key
	if c := cost(std); c != 50 {
		t.Fatalf("list price call cost %d, want 50", c)
	}
	if res := r.root.Do("PATCH", fmt.Sprintf("/api/admin/users/%d", r.alice.id), map[string]any{"tier": "vip"}); res.Status != http.StatusOK {
		t.Fatalf("set tier: %d %s", res.Status, res.Body)
	}
	waitFor(t, "the VIP price", func() bool { return cost(std) == 40 })
	if c := cost(premium); c != 60 {
		t.Fatalf("VIP in a 1.5 group paid %d, want 60", c)
	}
	r.checkBooks(calls)
}

// A key with fallback groups [gpt-shared, gpt-backup]: with every gpt-shared route open the call is served
// by gpt-backup, billed at its ratio, and the log row names the group and the route.
func TestRouting_FallbackGroupServesAndBillsAtItsRatio(t *testing.T) {
	r := newResilient(t)
	sharedUp, backupUp := fake(t), fake(t)
	shared, backup := r.channel(openaiChannel(sharedUp)), r.channel(openaiChannel(backupUp))
	r.logicalGroup("gpt-shared", "1", []route{{"asxs", 20, 1, []int64{shared}}},
		map[string]any{"failover": map[string]any{"consecutive_failures": 2, "cooldown_s": 60}})
	r.logicalGroup("gpt-backup", "1.5", []route{{"reserve", 10, 1, []int64{backup}}}, nil)
	key := r.world.key(r.alice, map[string]any{"group": "gpt-shared", "fallback_groups": []string{"gpt-backup"}}).Key
	sharedUp.Set(relaytest.Fail(relaytest.ServerError()))
	r.sessions(key, "trip", 0, 2)
	seen := sharedUp.Count()
	for _, l := range r.sessions(key, "fb", 0, 5) {
		if l.Group != "gpt-backup" || l.Route != "reserve" || l.Cost != 75 || l.GroupRatio != "1.5" {
			t.Fatalf("row group %q route %q cost %d ratio %s, want gpt-backup/reserve 75 at 1.5", l.Group, l.Route, l.Cost, l.GroupRatio)
		}
		if !strings.Contains(string(l.Decision.V), `"reason":"route_open"`) {
			t.Fatalf("decision %s does not show gpt-shared's open route", l.Decision.V)
		}
	}
	if sharedUp.Count() != seen {
		t.Fatal("the open route was called")
	}
	// The user's own log view names the group and route, and carries no decision.
	res := r.alice.c.Do("GET", "/api/logs?page_size=1", nil)
	if res.Status != http.StatusOK || !strings.Contains(string(res.Body), `"group":"gpt-backup"`) ||
		!strings.Contains(string(res.Body), `"route":"reserve"`) || strings.Contains(string(res.Body), "decision") {
		t.Fatalf("user log view: %d %s", res.Status, res.Body)
	}
	// The sticky view counts the sessions bound per route.
	sv := r.root.Do("GET", "/api/admin/sticky?group=gpt-shared&model="+rsModel, nil)
	if sv.Status != http.StatusOK || !strings.Contains(string(sv.Body), `"route":"reserve","count":7`) {
		t.Fatalf("sticky view: %d %s", sv.Status, sv.Body)
	}
	r.checkBooks(7)

	// A disabled group refuses its keys in the caller's protocol; its fallbacks do not stand in for it.
	if res := r.root.Do("PATCH", "/api/admin/logical-groups/gpt-shared", map[string]any{"status": "disabled"}); res.Status != http.StatusOK {
		t.Fatalf("disable: %d %s", res.Status, res.Body)
	}
	openAIErr(t, r.do("/v1/chat/completions", key, chatBody(rsModel, false)), http.StatusForbidden, "group_disabled")
}

package relay_test

// What the metric-driven routing tests add to world: three fake upstreams with the issue's profiles, routing
// configuration through the admin API, concurrent bursts and per-upstream call counts.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"tollgate/app/apptest"
	"tollgate/relay/relaytest"
)

// latencyScale divides the issue's latencies (A 450 ms, B 800 ms, C 200 ms) so that a thousand calls take
// seconds; the latency reference of the score is divided alike, so every score is what it would be unscaled.
const latencyScale = 10

// upstreamProfile is one fake upstream as the issue sets it: latency, success rate (fail of every of calls),
// upstream price in USD per 1M tokens and a provider tag.
type upstreamProfile struct {
	name     string
	latency  time.Duration
	fail, of int
	price    string
}

var issueProfiles = []upstreamProfile{
	{"A", 450 * time.Millisecond / latencyScale, 1, 50, "5"},
	{"B", 800 * time.Millisecond / latencyScale, 1, 20, "12"},
	{"C", 200 * time.Millisecond / latencyScale, 3, 10, "2"},
}

// trio is a node with three channels on fakes with the issue's profiles, all serving rsModel.
type trio struct {
	*resilient
	ups    map[string]*relaytest.Upstream
	ids    map[string]int64
	names  map[int64]string
	period time.Duration
	seen   map[string]int // upstream counts at the last mark
}

// withRoutingPeriod sets the node's aggregation period.
func withRoutingPeriod(p time.Duration) func(*apptest.Env) {
	return func(e *apptest.Env) { e.Options.RoutingPeriod = p }
}

func newTrio(t *testing.T, period time.Duration) *trio {
	t.Helper()
	r := newResilient(t, withRoutingPeriod(period))
	r.stickyOff() // every call its own decision: no session binds a channel here
	tr := &trio{resilient: r, ups: map[string]*relaytest.Upstream{}, ids: map[string]int64{}, names: map[int64]string{},
		period: period, seen: map[string]int{}}
	for _, p := range issueProfiles {
		up := fake(t, relaytest.WithHeaderDelay(p.latency), relaytest.FailShare(p.fail, p.of, relaytest.ServerError()))
		id := r.postChannel(map[string]any{"type": "openai", "name": p.name, "base_url": up.URL,
			"keys": []string{"sk-upstream-" + p.name}, "models": []string{rsModel}, "tag": "prov-" + p.name,
			"cost_price": map[string]string{"input": p.price, "output": p.price}})
		tr.ups[p.name], tr.ids[p.name], tr.names[id] = up, id, p.name
	}
	tr.tune("*", "*", map[string]any{"latency_ref_ms": 1000 / latencyScale, "min_samples": 10})
	return tr
}

// tune PUTs a routing configuration row.
func (tr *trio) tune(group, m string, body map[string]any) {
	tr.t.Helper()
	if res := tr.root.Do("PUT", "/api/admin/routing/models/"+group+"/"+m, body); res.Status != http.StatusOK {
		tr.t.Fatalf("tune %s/%s: %d %s", group, m, res.Status, res.Body)
	}
}

// burst sends n chat calls with key, conc at a time, and fails on anything but a 200 (or the 502 of a request
// whose every channel failed).
func (tr *trio) burst(n, conc int, key string, hdr ...string) {
	tr.t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bad []string
	next := make(chan struct{}, n)
	for range n {
		next <- struct{}{}
	}
	close(next)
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range next {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				a, err := tr.tryCall(ctx, "POST", "/v1/chat/completions", key, chatBody(rsModel, false), hdr...)
				cancel()
				// Every channel of a request may fail (B then C at 95 % and 70 %): a 502 is the upstream's,
				// not the router's; anything else is a failure of the test.
				if err != nil || a.status != http.StatusOK && !(a.status == http.StatusBadGateway && strings.Contains(string(a.body), "upstream_error")) {
					mu.Lock()
					if err != nil {
						bad = append(bad, err.Error())
					} else {
						bad = append(bad, fmt.Sprintf("%d %s", a.status, a.body))
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if len(bad) > 0 {
		tr.t.Fatalf("%d of %d calls failed, first: %s", len(bad), n, bad[0])
	}
}

// since returns the calls each upstream took since the last call of since (and marks now).
func (tr *trio) since() map[string]int {
	out := map[string]int{}
	for name, up := range tr.ups {
		c := up.Count()
		out[name] = c - tr.seen[name]
		tr.seen[name] = c
	}
	return out
}

// warm sends 90 calls round-robin (30 to each upstream) and waits two periods, so every channel has
// samples in the routing snapshot.
func (tr *trio) warm(key string) {
	tr.t.Helper()
	tr.burst(90, 6, key, "X-Tollgate-Route", "strategy=round_robin")
	time.Sleep(2*tr.period + tr.period/2)
	tr.since()
}

// ranked is a simulator candidate as the tests read it.
type ranked struct {
	ChannelID int64   `json:"channel_id"`
	Name      string  `json:"name"`
	Score     float64 `json:"score"`
	Share     float64 `json:"share"`
	Excluded  bool    `json:"excluded"`
	Pref      string  `json:"pref"`
	Reason    string  `json:"reason"`
	Inputs    *struct {
		Success   float64 `json:"success"`
		LatencyMs float64 `json:"latency_ms"`
		Price     float64 `json:"price"`
	} `json:"inputs"`
}

type simResult struct {
	Strategy   string   `json:"strategy"`
	Candidates []ranked `json:"candidates"`
	DecisionUs int64    `json:"decision_us"`
}

// simulate POSTs /api/routing/simulate as c and decodes a 200.
func simulate(t *testing.T, c *apptest.Client, body map[string]any) simResult {
	t.Helper()
	res := c.Do("POST", "/api/routing/simulate", body)
	var out simResult
	if res.Status != http.StatusOK || json.Unmarshal(res.Body, &out) != nil {
		t.Fatalf("simulate %v: %d %s", body, res.Status, res.Body)
	}
	return out
}

// order lists the names of the candidates not excluded, in ranking order.
func order(s simResult) (kept []string, excluded []ranked) {
	for _, c := range s.Candidates {
		if c.Excluded {
			excluded = append(excluded, c)
		} else {
			kept = append(kept, c.Name)
		}
	}
	return kept, excluded
}

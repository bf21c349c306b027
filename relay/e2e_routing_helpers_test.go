package relay_test

// What the routing tests add to world: a movable clock for the route breakers, logical groups through the
// admin API, and counts of where log rows went.

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"tollgate/app/apptest"
	"tollgate/model"
)

// routeClock is real time plus an offset a test moves forward (past a group's cooldown).
type routeClock struct{ off atomic.Int64 }

func (c *routeClock) now() time.Time          { return time.Now().Add(time.Duration(c.off.Load())) }
func (c *routeClock) advance(d time.Duration) { c.off.Add(int64(d)) }

// withRouteClock runs the node's route breakers on c.
func withRouteClock(c *routeClock) func(*apptest.Env) {
	return func(e *apptest.Env) { e.Options.RouteClock = c.now }
}

// route is one route of a logical group as the admin API takes it.
type route struct {
	Name     string  `json:"name"`
	Priority int64   `json:"priority"`
	Weight   int     `json:"weight,omitempty"`
	Channels []int64 `json:"channels"`
}

// logicalGroup creates a group open to every user; extra adds or overrides fields.
func (w *world) logicalGroup(name, ratio string, routes []route, extra map[string]any) {
	w.t.Helper()
	body := map[string]any{"name": name, "ratio": ratio, "access": map[string]any{"all": true}, "routes": routes}
	for k, v := range extra {
		body[k] = v
	}
	if r := w.root.Do("POST", "/api/admin/logical-groups", body); r.Status != http.StatusCreated {
		w.t.Fatalf("create group %s: %d %s", name, r.Status, r.Body)
	}
}

// sessions sends n chat calls, each its own session (prompt_cache_key tag-i), and returns their log rows.
func (r *resilient) sessions(key, tag string, from, n int) []model.UsageLog {
	r.t.Helper()
	out := make([]model.UsageLog, 0, n)
	for i := from; i < from+n; i++ {
		a := r.do("/v1/chat/completions", key, chatBody(rsModel, false, "prompt_cache_key", fmt.Sprintf("%s-%d", tag, i)))
		a.mustOK(r.t)
		out = append(out, r.logOf(a.reqID))
	}
	return out
}

// routeCounts counts log rows by "group/route".
func routeCounts(ls []model.UsageLog) map[string]int {
	out := map[string]int{}
	for _, l := range ls {
		out[l.Group+"/"+l.Route]++
	}
	return out
}

// only fails unless every row went to want ("group/route").
func only(t testing.TB, what string, ls []model.UsageLog, want string) {
	t.Helper()
	if got := routeCounts(ls); got[want] != len(ls) {
		t.Fatalf("%s: rows by route %v, want all %d on %s", what, got, len(ls), want)
	}
}

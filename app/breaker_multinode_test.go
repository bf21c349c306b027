package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"tollgate/app/apptest"
	"tollgate/relay/relaytest"
)

// breakerView is the part of the health drawer's shape the breaker tests read.
type breakerView struct {
	State  string `json:"state"`
	Forced bool   `json:"forced"`
	Keys   []struct {
		Index  int    `json:"index"`
		State  string `json:"state"`
		Forced bool   `json:"forced"`
	} `json:"keys"`
}

// breakerChannel creates an openai channel with keys keys on node n and returns its id.
func breakerChannel(t *testing.T, root *apptest.Client, base string, keys int) int64 {
	t.Helper()
	ks := make([]string, keys)
	for i := range ks {
		ks[i] = fmt.Sprintf("sk-breaker-%d", i)
	}
	r := root.Do("POST", "/api/admin/channels", map[string]any{"type": "openai", "name": "brk", "base_url": base,
		"keys": ks, "models": []string{"m1"}, "groups": []string{"default"}})
	if r.Status != 201 {
		t.Fatalf("create channel: %d %s", r.Status, r.Body)
	}
	var ch struct{ ID int64 }
	r.JSON(t, &ch)
	return ch.ID
}

// TestTwoNodes_ForceOpenOnAIsHonouredByBWithinASecond forces a channel's breaker open through node A's admin
// API and measures how long node B's tracker takes to refuse it, then closes it on A and measures again.
func TestTwoNodes_ForceOpenOnAIsHonouredByBWithinASecond(t *testing.T) {
	env := apptest.NewEnv(t)
	if env.Shape != "mysql" {
		t.Skip("two-node propagation needs the shared MariaDB + Redis shape (make test-go-mysql runs it)")
	}
	a, b := env.Start(t), env.Start(t)
	up := relaytest.New()
	t.Cleanup(up.Close)
	root := a.Root(t)
	id := breakerChannel(t, root, up.URL, 2)
	eventually(t, time.Second, "node B knows the channel", func() bool { _, ok := b.App.Channels.Snapshot().ByID[id]; return ok })
	if !b.App.Health.Available(id) {
		t.Fatal("B must admit a healthy channel")
	}

	start := time.Now()
	if r := root.Do("POST", path("/api/admin/channels/%d/breaker", id), map[string]any{"action": "open"}); r.Status != 200 {
		t.Fatalf("force open on A: %d %s", r.Status, r.Body)
	}
	// Measured from before A's HTTP request, so the API, the cache write and the bus all count.
	eventually(t, 2*time.Second, "node B refuses a channel forced open on A", func() bool { return !b.App.Health.Available(id) })
	el := time.Since(start)
	if el >= time.Second {
		t.Fatalf("force open reached B after %s, want < 1s", el)
	}
	t.Logf("force open on A → refused on B in %s", el)
	var view breakerView
	b.Root(t).Do("GET", path("/api/admin/channels/%d/health", id), nil).JSON(t, &view)
	if view.State != "open" || !view.Forced {
		t.Fatalf("B's health drawer: %+v", view)
	}
	if ok, _ := b.App.Health.Allow(id); ok {
		t.Fatal("B admitted a request on a forced open channel")
	}

	start = time.Now()
	if r := root.Do("POST", path("/api/admin/channels/%d/breaker", id), map[string]any{"action": "close"}); r.Status != 200 {
		t.Fatalf("force close on A: %d %s", r.Status, r.Body)
	}
	eventually(t, 2*time.Second, "node B admits the channel closed on A", func() bool { return b.App.Health.Available(id) })
	if el := time.Since(start); el >= time.Second {
		t.Fatalf("force close reached B after %s, want < 1s", el)
	}
	t.Logf("force close on A → available on B in %s", time.Since(start))

	// A key held open on A is skipped on B; its sibling is not.
	start = time.Now()
	if r := root.Do("POST", path("/api/admin/channels/%d/breaker", id), map[string]any{"action": "open", "key_index": 1}); r.Status != 200 {
		t.Fatalf("force key open on A: %d %s", r.Status, r.Body)
	}
	eventually(t, 2*time.Second, "node B skips the key forced open on A", func() bool { return !b.App.Health.KeyAllowed(id, 1) })
	if el := time.Since(start); el >= time.Second {
		t.Fatalf("key force open reached B after %s, want < 1s", el)
	}
	if !b.App.Health.KeyAllowed(id, 0) || !b.App.Health.Available(id) {
		t.Fatal("forcing one key touched its sibling or the channel on B")
	}
}

// TestBreakerAPI_ForcesValidatesAndAudits drives POST /api/admin/channels/:id/breaker on one node.
func TestBreakerAPI_ForcesValidatesAndAudits(t *testing.T) {
	n := apptest.New(t)
	up := relaytest.New()
	t.Cleanup(up.Close)
	root := n.Root(t)
	id := breakerChannel(t, root, up.URL, 2)
	brk := path("/api/admin/channels/%d/breaker", id)

	var v breakerView
	r := root.Do("POST", brk, map[string]any{"action": "open"})
	wantStatus(t, r, 200)
	r.JSON(t, &v)
	if v.State != "open" || !v.Forced || len(v.Keys) != 2 || v.Keys[0].Forced {
		t.Fatalf("force open answered %s", r.Body)
	}
	if n.App.Health.Available(id) {
		t.Fatal("channel still available after force open")
	}

	r = root.Do("POST", brk, map[string]any{"action": "open", "key_index": 1})
	wantStatus(t, r, 200)
	v = breakerView{}
	r.JSON(t, &v)
	if !v.Keys[1].Forced || v.Keys[1].State != "open" || v.Keys[0].Forced {
		t.Fatalf("key force open answered %s", r.Body)
	}

	r = root.Do("POST", brk, map[string]any{"action": "half_open"})
	wantStatus(t, r, 200)
	v = breakerView{}
	r.JSON(t, &v)
	if v.State != "half_open" || v.Forced {
		t.Fatalf("half_open answered %s", r.Body)
	}

	r = root.Do("POST", brk, map[string]any{"action": "reset"})
	wantStatus(t, r, 200)
	v = breakerView{}
	r.JSON(t, &v)
	if v.State != "closed" || v.Forced || v.Keys[1].Forced || v.Keys[1].State != "ok" {
		t.Fatalf("reset answered %s", r.Body)
	}
	if !n.App.Health.Available(id) || !n.App.Health.KeyAllowed(id, 1) {
		t.Fatal("reset left the channel or key refused")
	}

	wantField(t, root.Do("POST", brk, map[string]any{"action": "explode"}), "action")
	wantField(t, root.Do("POST", brk, map[string]any{}), "action")
	wantField(t, root.Do("POST", brk, map[string]any{"action": "open", "key_index": 2}), "key_index")
	wantField(t, root.Do("POST", brk, map[string]any{"action": "open", "key_index": -1}), "key_index")
	wantError(t, root.Do("POST", "/api/admin/channels/999999/breaker", map[string]any{"action": "open"}), http.StatusNotFound, "channel_not_found")
	if !n.App.Health.Available(id) {
		t.Fatal("a refused request changed the breaker")
	}
	user := n.SignUp(t, "brkuser", "password-123456")
	if r := user.Do("POST", brk, map[string]any{"action": "open"}); r.Status != http.StatusForbidden {
		t.Fatalf("non-admin force: %d %s", r.Status, r.Body)
	}
	if !n.App.Health.Available(id) {
		t.Fatal("a non-admin's request changed the breaker")
	}

	var page struct {
		Items []struct {
			Action, Target, Detail string
		}
	}
	root.Do("GET", "/api/admin/audit?action=channel.breaker", nil).JSON(t, &page)
	if len(page.Items) != 4 {
		t.Fatalf("audit has %d channel.breaker entries, want 4 (one per accepted action): %+v", len(page.Items), page.Items)
	}
	seen := map[string]bool{}
	for _, e := range page.Items {
		if e.Target != strconv.FormatInt(id, 10) {
			t.Fatalf("audit target %q, want the channel id", e.Target)
		}
		var d struct {
			Action   string `json:"action"`
			KeyIndex *int   `json:"key_index"`
		}
		if err := json.Unmarshal([]byte(e.Detail), &d); err != nil {
			t.Fatalf("audit detail %q: %v", e.Detail, err)
		}
		seen[fmt.Sprintf("%s/%v", d.Action, d.KeyIndex != nil && *d.KeyIndex == 1)] = true
	}
	for _, want := range []string{"open/false", "open/true", "half_open/false", "reset/false"} {
		if !seen[want] {
			t.Fatalf("audit lacks %s: %+v", want, page.Items)
		}
	}
}

package relay_test

// What the resilience tests add to world: breaker and metrics options, settings, channel priorities, the
// health and status readers, relay calls that leave the request id to the node, and a check of the books.

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"tollgate/app/apptest"
	"tollgate/model"
	"tollgate/service/health"
)

// rsBalance is alice's starting balance in quota units (1 USD) in a resilient world.
const rsBalance = 1_000_000

const rsModel = "gpt-4o-mini"
const rsClaude = "claude-sonnet-4-5"

// withHealth sets the node's breaker configuration (small cooldowns for the breaker tests).
func withHealth(c health.Config) func(*apptest.Env) {
	return func(e *apptest.Env) { e.Options.Health = c }
}

// withMetricsToken guards /metrics with tok.
func withMetricsToken(tok string) func(*apptest.Env) {
	return func(e *apptest.Env) { e.Cfg.MetricsToken = tok }
}

// at is the channel on the given priority tier.
func (s chanSpec) at(priority int64) chanSpec {
	s.Priority = priority
	return s
}

// resilient is a world with prices for rsModel and rsClaude, the recovery schedule off, and a user "alice"
// holding rsBalance and an unlimited key. The tests add the channels.
type resilient struct {
	*world
	alice *person
	key   string
}

func newResilient(t testing.TB, opts ...func(*apptest.Env)) *resilient {
	t.Helper()
	w := newWorld(t, opts...)
	w.prices(price{Model: rsModel, Input: "1", Output: "2"}, price{Model: rsClaude, Input: "3", Output: "15"})
	// The recovery schedule is off unless a test turns it on: it must not probe behind a test's back.
	w.settings(map[string]any{"channel_test_interval": 0})
	r := &resilient{world: w, alice: w.user("alice", rsBalance)}
	r.key = w.key(r.alice, nil).Key
	return r
}

// stickyOff turns session stickiness off for the default group (every kind's TTL 0), for tests of how a
// channel's keys share traffic call by call: with it on, a session keeps its key.
func (w *world) stickyOff() {
	w.t.Helper()
	off := map[string]any{"sticky": map[string]any{"ttl_s": map[string]int{"conversation": 0, "session": 0, "user_model": 0, "bucket": 0}}}
	if res := w.root.Do("PATCH", "/api/admin/logical-groups/default", off); res.Status != http.StatusOK {
		w.t.Fatalf("sticky off: %d %s", res.Status, res.Body)
	}
}

// settings applies a partial settings object.
func (w *world) settings(patch map[string]any) {
	w.t.Helper()
	if res := w.root.Do("PUT", "/api/admin/settings", patch); res.Status != http.StatusOK {
		w.t.Fatalf("put settings %v: %d %s", patch, res.Status, res.Body)
	}
}

// ---- relay calls ----

// do posts body to path with key and leaves the request id to the node: reqID is the X-Tollgate-Request-Id
// it answered with. A stream's events are read into events.
func (w *world) do(path, key string, body any, hdr ...string) *answer {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a, err := w.tryCall(ctx, "POST", path, key, body, append(hdr[:len(hdr):len(hdr)], "X-Request-Id", "")...)
	if err != nil {
		w.t.Fatalf("POST %s: %v", path, err)
	}
	a.reqID = a.header.Get("X-Tollgate-Request-Id")
	if strings.HasPrefix(a.header.Get("Content-Type"), "text/event-stream") {
		a.events, _ = readSSE(bytes.NewReader(a.body), nil)
	}
	return a
}

// chat sends a chat completion with alice's key.
func (r *resilient) chat(body map[string]any, hdr ...string) *answer {
	r.t.Helper()
	return r.do("/v1/chat/completions", r.key, body, hdr...)
}

// mustOK fails unless the answer is a 200.
func (a *answer) mustOK(t testing.TB) {
	t.Helper()
	if a.status != http.StatusOK {
		t.Fatalf("status = %d, want 200 (body %s)", a.status, a.body)
	}
}

// ---- health and status ----

// channelHealth is GET /api/admin/channels/:id/health.
type channelHealth struct {
	State         string     `json:"state"`
	Status        string     `json:"status"`
	CooldownUntil *time.Time `json:"cooldown_until"`
	Trips         int        `json:"trips"`
	Keys          []struct {
		Index         int        `json:"index"`
		State         string     `json:"state"`
		CooldownUntil *time.Time `json:"cooldown_until"`
	} `json:"keys"`
}

func (w *world) health(id int64) channelHealth {
	w.t.Helper()
	res := w.root.Do("GET", fmt.Sprintf("/api/admin/channels/%d/health", id), nil)
	if res.Status != http.StatusOK {
		w.t.Fatalf("health %d: %d %s", id, res.Status, res.Body)
	}
	var h channelHealth
	res.JSON(w.t, &h)
	return h
}

// channelStatus is the channel's status from GET /api/admin/channels/:id.
func (w *world) channelStatus(id int64) string {
	w.t.Helper()
	res := w.root.Do("GET", fmt.Sprintf("/api/admin/channels/%d", id), nil)
	if res.Status != http.StatusOK {
		w.t.Fatalf("channel %d: %d %s", id, res.Status, res.Body)
	}
	return res.M(w.t)["status"].(string)
}

// ---- books ----

// checkBooks asserts that alice's n relay calls each left exactly one non-test log row and that the live
// balance, the SQL balance and used quota all equal the start minus the logged costs. It returns the total.
func (r *resilient) checkBooks(n int) int64 {
	r.t.Helper()
	ls := r.waitLogs(n, "user_id = ? AND is_test = ?", r.alice.id, false)
	var sum int64
	seen := map[string]bool{}
	for _, l := range ls {
		if seen[l.RequestID] {
			r.t.Fatalf("two log rows for request %s", l.RequestID)
		}
		seen[l.RequestID] = true
		if l.HTTPStatus != http.StatusOK && l.Cost != 0 {
			r.t.Fatalf("request %s delivered nothing (HTTP %d) but cost %d", l.RequestID, l.HTTPStatus, l.Cost)
		}
		sum += l.Cost
	}
	if got := r.liveBalance(r.alice.id); got != rsBalance-sum {
		r.t.Fatalf("live balance = %d, want %d - %d", got, rsBalance, sum)
	}
	if u := r.sqlUser(r.alice.id); u.Quota != rsBalance-sum || u.UsedQuota != sum {
		r.t.Fatalf("SQL quota/used = %d/%d, want %d/%d", u.Quota, u.UsedQuota, rsBalance-sum, sum)
	}
	return sum
}

// attemptsOf renders a log row's attempts as "channel:class" ("ok" for a success), for compact assertions.
func attemptsOf(l model.UsageLog) string {
	parts := make([]string, 0, len(l.Attempts.V))
	for _, a := range l.Attempts.V {
		c := a.Class
		if c == "" {
			c = "ok"
		}
		parts = append(parts, fmt.Sprintf("%d:%s", a.ChannelID, c))
	}
	return strings.Join(parts, ",")
}

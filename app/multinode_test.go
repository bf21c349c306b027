package app_test

import (
	"fmt"
	"testing"
	"time"

	"tollgate/app/apptest"
	"tollgate/relay/relaytest"
	"tollgate/service/health"
)

// TestTwoNodes_RoutingChangesReachTheOtherNodeWithinASecond runs two Tollgate nodes on one MariaDB + Redis: a
// channel created on A is routable on B, a channel disabled on A stops being routed on B, and a breaker
// tripped on A is avoided by B, each in under a second.
func TestTwoNodes_RoutingChangesReachTheOtherNodeWithinASecond(t *testing.T) {
	env := apptest.NewEnv(t)
	if env.Shape != "mysql" {
		t.Skip("two-node propagation needs the shared MariaDB + Redis shape (make test-go-mysql runs it)")
	}
	a, b := env.Start(t), env.Start(t)
	up := relaytest.New()
	t.Cleanup(up.Close)

	root := a.Root(t)
	if r := root.Do("PUT", "/api/admin/pricing", []map[string]string{{"model": "m1", "input": "1", "output": "2"}}); r.Status != 200 {
		t.Fatalf("pricing: %d %s", r.Status, r.Body)
	}
	r := root.Do("POST", "/api/admin/channels", map[string]any{"type": "openai", "name": "c1", "base_url": up.URL,
		"keys": []string{"k1"}, "models": []string{"m1"}, "groups": []string{"default"}})
	if r.Status != 201 {
		t.Fatalf("create channel: %d %s", r.Status, r.Body)
	}
	var ch struct{ ID int64 }
	r.JSON(t, &ch)
	took := eventually(t, time.Second, "node B routes to a channel created on A", func() bool {
		return len(b.App.Channels.Snapshot().Route("default", "m1")) == 1
	})
	t.Logf("create → routable on B in %s", took)

	// B answers real traffic through the new channel.
	root.Do("POST", "/api/admin/users/1/quota", map[string]any{"delta": 1_000_000, "reason": "test"})
	var key struct{ Key string }
	root.Do("POST", "/api/tokens", map[string]any{"name": "k"}).JSON(t, &key)
	cb := &apptest.Client{T: t, Base: b.URL, Token: key.Key}
	eventually(t, 2*time.Second, "node B relays through the channel", func() bool {
		return cb.Do("POST", "/v1/chat/completions", map[string]any{"model": "m1", "messages": []any{map[string]string{"role": "user", "content": "hi"}}}).Status == 200
	})

	if r := root.Do("PATCH", fmt.Sprintf("/api/admin/channels/%d", ch.ID), map[string]any{"status": "disabled"}); r.Status != 200 {
		t.Fatalf("disable: %d %s", r.Status, r.Body)
	}
	took = eventually(t, time.Second, "node B stops routing to a channel disabled on A", func() bool {
		return len(b.App.Channels.Snapshot().Route("default", "m1")) == 0
	})
	t.Logf("disable → unroutable on B in %s", took)
	root.Do("PATCH", fmt.Sprintf("/api/admin/channels/%d", ch.ID), map[string]any{"status": "enabled"})
	eventually(t, time.Second, "re-enabled on B", func() bool { return len(b.App.Channels.Snapshot().Route("default", "m1")) == 1 })

	// Trip the breaker on A with server errors; B must avoid the channel without seeing any failure itself.
	if !b.App.Health.Available(ch.ID) {
		t.Fatal("B must admit a healthy channel")
	}
	for i := 0; i < 20; i++ {
		a.App.Health.Record(health.Outcome{ChannelID: ch.ID, Key: 0, Model: "m1", Class: health.ClassServer, Status: 500, Latency: time.Millisecond})
	}
	if a.App.Health.Available(ch.ID) {
		t.Fatal("A must have opened the breaker")
	}
	took = eventually(t, time.Second, "node B avoids a channel whose breaker opened on A", func() bool {
		return !b.App.Health.Available(ch.ID)
	})
	t.Logf("breaker open on A → avoided on B in %s", took)
}

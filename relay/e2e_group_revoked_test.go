package relay_test

// A key keeps the group its owner chose only while the owner may use that group: once an admin moves the
// owner out (or the group stops being selectable), the key is refused at authentication with 403
// group_revoked in the caller's protocol, without touching an upstream or the books.

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"tollgate/app/apptest"
)

func TestKeyGroup_RevokedWhenTheOwnerLeavesIt(t *testing.T) {
	t.Parallel()
	env := apptest.NewEnv(t)
	a := env.Start(t)
	w := worldOn(t, a)
	// On MariaDB + Redis a second node must refuse the key as soon as the change reaches it through the bus.
	other := w
	if env.Shape == "mysql" {
		b := env.Start(t)
		other = worldOn(t, b)
	}
	oa, an := fake(t), fake(t)
	r := w.root.Do("POST", "/api/admin/groups", map[string]any{"name": "vip", "ratio": "0.5"})
	if r.Status != http.StatusCreated {
		t.Fatalf("create group: %d %s", r.Status, r.Body)
	}
	spec := openaiChannel(oa)
	spec.Groups = []string{"default", "vip"}
	w.channel(spec)
	aspec := anthropicChannel(an)
	aspec.Groups = []string{"default", "vip"}
	w.channel(aspec)
	w.prices()
	alice := w.user("alice", 1_000_000)
	setGroup := func(g string) {
		t.Helper()
		if r := w.root.Do("PATCH", "/api/admin/users/"+strconv.FormatInt(alice.id, 10), map[string]string{"group": g}); r.Status != http.StatusOK {
			t.Fatalf("move alice to %s: %d %s", g, r.Status, r.Body)
		}
	}
	setGroup("vip")
	k := w.key(alice, map[string]any{"group": "vip"})
	for _, n := range []*world{w, other} {
		if a := n.call("POST", "/v1/chat/completions", k.Key, chatBody("gpt-4o-mini", false)); a.status != http.StatusOK {
			t.Fatalf("vip key in vip: %d %s", a.status, a.body)
		}
	}
	w.waitLogs(2) // one call per node (the same node twice on SQLite); both nodes share the database
	calls := oa.Count() + an.Count()
	balance := w.liveBalance(alice.id)

	setGroup("default")
	for _, n := range []*world{w, other} {
		waitFor(t, "the node refuses the key", func() bool {
			return n.call("GET", "/v1/models", k.Key, nil).status == http.StatusForbidden
		})
		msg := openAIErr(t, n.call("POST", "/v1/chat/completions", k.Key, chatBody("gpt-4o-mini", false)), http.StatusForbidden, "group_revoked")
		if !strings.Contains(msg, `"vip"`) {
			t.Fatalf("message %q does not name the group", msg)
		}
		openAIErr(t, n.call("POST", "/v1/chat/completions", k.Key, chatBody("gpt-4o-mini", true)), http.StatusForbidden, "group_revoked")
		msg = anthropicErr(t, n.call("POST", "/v1/messages", k.Key, messagesBody("claude-sonnet-4-5", false), "x-api-key", k.Key),
			http.StatusForbidden, "permission_error")
		if !strings.Contains(msg, "vip") {
			t.Fatalf("Anthropic message %q does not name the group", msg)
		}
	}
	if got := oa.Count() + an.Count(); got != calls {
		t.Fatalf("refused calls reached the upstream (%d → %d)", calls, got)
	}
	if got := w.liveBalance(alice.id); got != balance {
		t.Fatalf("balance moved on refused calls: %d → %d", balance, got)
	}
	// A key without a group of its own follows its owner and keeps working.
	plain := w.key(alice, nil)
	if a := other.call("POST", "/v1/chat/completions", plain.Key, chatBody("gpt-4o-mini", false)); a.status != http.StatusOK {
		t.Fatalf("plain key: %d %s", a.status, a.body)
	}
	// Moving the owner back gives the key its group again.
	setGroup("vip")
	waitFor(t, "the key works again", func() bool {
		return other.call("POST", "/v1/chat/completions", k.Key, chatBody("gpt-4o-mini", false)).status == http.StatusOK
	})
}

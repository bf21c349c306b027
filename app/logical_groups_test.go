package app_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"tollgate/app/apptest"
	"tollgate/model"
)

// The logical-group API keeps what it is given and refuses, field by field, what it cannot keep: nothing is
// written by a refused request, the old /groups path is the same book, and every change is audited.
func TestLogicalGroups_CRUDValidationAndAudit(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	root := n.Root(t)
	r := root.Do("POST", "/api/admin/channels", map[string]any{"type": "openai", "name": "up", "base_url": "http://127.0.0.1:9",
		"keys": []string{"sk-1"}, "models": []string{"m1"}})
	wantStatus(t, r, http.StatusCreated)
	var ch struct {
		ID int64 `json:"id"`
	}
	r.JSON(t, &ch)
	good := map[string]any{"name": "gpt-shared", "display_name": "GPT shared", "ratio": "1.2", "models": []string{"m1"},
		"access":              map[string]any{"all": false, "tiers": []string{"vip"}, "users": []int64{7}},
		"sticky":              map[string]any{"levels": []string{"session", "bucket"}, "ttl_s": map[string]int{"session": 600}},
		"failover":            map[string]any{"consecutive_failures": 2, "cooldown_s": 60, "max_attempts": 3, "deadline_s": 120},
		"return_to_primary_s": 60,
		"routes": []map[string]any{{"name": "asxs", "priority": 20, "weight": 1, "channels": []int64{ch.ID}},
			{"name": "codex2api", "priority": 10, "channels": []int64{ch.ID}}}}
	route := func(over map[string]any) []map[string]any {
		r := map[string]any{"name": "r", "priority": 1, "weight": 1, "channels": []int64{ch.ID}}
		for k, v := range over {
			r[k] = v
		}
		return []map[string]any{r}
	}
	groups := count(t, n, &model.Group{})
	for _, tc := range []struct {
		name  string
		body  any
		field string
		code  string
	}{
		{"bad name", map[string]any{"name": "a b"}, "name", ""},
		{"unknown status", map[string]any{"name": "g", "status": "paused"}, "status", ""},
		{"ratio not decimal", map[string]any{"name": "g", "ratio": "x"}, "ratio", ""},
		{"display name too long", map[string]any{"name": "g", "display_name": strings.Repeat("d", 129)}, "display_name", ""},
		{"duplicate model", map[string]any{"name": "g", "models": []string{"m1", "m1"}}, "models", ""},
		{"too many models", map[string]any{"name": "g", "models": manyNames(1001)}, "models", ""},
		{"empty model", map[string]any{"name": "g", "models": []string{""}}, "models", ""},
		{"unknown sticky level", map[string]any{"name": "g", "sticky": map[string]any{"levels": []string{"forever"}}}, "sticky.levels", ""},
		{"repeated sticky level", map[string]any{"name": "g", "sticky": map[string]any{"levels": []string{"session", "session"}}}, "sticky.levels", ""},
		{"ttl of unknown kind", map[string]any{"name": "g", "sticky": map[string]any{"ttl_s": map[string]int{"x": 1}}}, "sticky.ttl_s", ""},
		{"negative ttl", map[string]any{"name": "g", "sticky": map[string]any{"ttl_s": map[string]int{"session": -1}}}, "sticky.ttl_s", ""},
		{"failures out of range", map[string]any{"name": "g", "failover": map[string]any{"consecutive_failures": 101}}, "failover.consecutive_failures", ""},
		{"attempts out of range", map[string]any{"name": "g", "failover": map[string]any{"max_attempts": 21}}, "failover.max_attempts", ""},
		{"negative return", map[string]any{"name": "g", "return_to_primary_s": -1}, "return_to_primary_s", ""},
		{"route without channels", map[string]any{"name": "g", "routes": route(map[string]any{"channels": []int64{}})}, "routes[0].channels", ""},
		{"route naming a missing channel", map[string]any{"name": "g", "routes": route(map[string]any{"channels": []int64{ch.ID + 99}})}, "routes[0].channels", ""},
		{"route channel twice", map[string]any{"name": "g", "routes": route(map[string]any{"channels": []int64{ch.ID, ch.ID}})}, "routes[0].channels", ""},
		{"route bad name", map[string]any{"name": "g", "routes": route(map[string]any{"name": "a:b"})}, "routes[0].name", ""},
		{"route weight", map[string]any{"name": "g", "routes": route(map[string]any{"weight": -1})}, "routes[0].weight", ""},
		{"routes named twice", map[string]any{"name": "g", "routes": append(route(nil), route(nil)...)}, "routes[1].name", ""},
		{"too many routes", map[string]any{"name": "g", "routes": manyRoutes(33, ch.ID)}, "routes", ""},
		{"access user zero", map[string]any{"name": "g", "access": map[string]any{"users": []int64{0}}}, "access.users", ""},
		{"access bad tier", map[string]any{"name": "g", "access": map[string]any{"tiers": []string{"a b"}}}, "access.tiers", ""},
		{"routes of wrong type", `{"name":"g","routes":{"a":1}}`, "routes", ""},
		{"duplicate key", `{"name":"g","ratio":"1","ratio":"9"}`, "", "duplicate_key"},
		{"duplicate key in another case", `{"name":"g","ratio":"1","Ratio":"9"}`, "", "duplicate_key"},
		{"duplicate key inside a route", `{"name":"g","routes":[{"name":"a","name":"b","channels":[1]}]}`, "", "duplicate_key"},
		{"deep body", `{"name":"g","access":` + strings.Repeat(`{"a":`, 200) + `1` + strings.Repeat(`}`, 201), "", "body_too_deep"},
		{"malformed", `{"name":`, "", "invalid_json"},
		{"exists", map[string]any{"name": "default"}, "", "group_exists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := root.Do("POST", "/api/admin/logical-groups", tc.body)
			if tc.field != "" {
				wantField(t, r, tc.field)
				return
			}
			if r.Status < 400 || r.Status >= 500 || !strings.Contains(string(r.Body), tc.code) {
				t.Fatalf("status %d body %s, want a 4xx %s", r.Status, r.Body, tc.code)
			}
		})
	}
	if got := count(t, n, &model.Group{}); got != groups {
		t.Fatalf("groups = %d after refused creates, want %d", got, groups)
	}

	r = root.Do("POST", "/api/admin/logical-groups", good)
	wantStatus(t, r, http.StatusCreated)
	var g model.Group
	r.JSON(t, &g)
	if g.DisplayName != "GPT shared" || g.Status != "enabled" || len(g.Routes.V) != 2 || g.Routes.V[1].Weight != 1 ||
		g.Failover.V.ConsecutiveFailures != 2 || g.Sticky.V.TTLs["session"] != 600 || g.ReturnToPrimaryS != 60 {
		t.Fatalf("created = %+v", g)
	}
	// PATCH changes what it names only; the old path reads the same book.
	wantStatus(t, root.Do("PATCH", "/api/admin/logical-groups/gpt-shared", map[string]any{"status": "disabled",
		"routes": route(nil)}), http.StatusOK)
	r = root.Do("GET", "/api/admin/groups/gpt-shared", nil)
	wantStatus(t, r, http.StatusOK)
	r.JSON(t, &g)
	if g.Status != "disabled" || len(g.Routes.V) != 1 || g.DisplayName != "GPT shared" || g.Ratio.String() != "1.2" {
		t.Fatalf("after patch = %+v", g)
	}
	wantError(t, root.Do("GET", "/api/admin/logical-groups/nope", nil), http.StatusNotFound, "group_not_found")
	r = root.Do("GET", "/api/admin/logical-groups/defaults", nil)
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"consecutive_failures":3`) || !strings.Contains(string(r.Body), `"session":7200`) {
		t.Fatalf("defaults: %d %s", r.Status, r.Body)
	}
	// Users see only what they may use, and never the routes.
	alice := n.SignUp(t, "alice", "correct-horse-1")
	wantStatus(t, alice.Do("GET", "/api/admin/logical-groups", nil), http.StatusForbidden)
	r = alice.Do("GET", "/api/user/groups", nil)
	if r.Status != http.StatusOK || strings.Contains(string(r.Body), "gpt-shared") || strings.Contains(string(r.Body), "routes") {
		t.Fatalf("alice's groups: %s", r.Body)
	}
	wantStatus(t, root.Do("PATCH", "/api/admin/logical-groups/gpt-shared", map[string]any{"status": "enabled",
		"access": map[string]any{"users": []int64{userID(t, n, "alice")}}}), http.StatusOK)
	r = alice.Do("GET", "/api/user/groups", nil)
	if !strings.Contains(string(r.Body), `"name":"gpt-shared"`) || !strings.Contains(string(r.Body), `"models":["m1"]`) {
		t.Fatalf("alice listed in access: %s", r.Body)
	}
	wantStatus(t, root.Do("DELETE", "/api/admin/logical-groups/gpt-shared", nil), http.StatusNoContent)
	if got := count(t, n, &model.AuditLog{}, "action LIKE ?", "group.%"); got != 4 {
		t.Fatalf("group audit rows = %d, want 4 (create, 2 updates, delete)", got)
	}
}

// A key's fallback groups must be groups its owner may use, at most five, each once.
func TestLogicalGroups_KeyFallbacksAreChecked(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	root := n.Root(t)
	wantStatus(t, root.Do("POST", "/api/admin/logical-groups", map[string]any{"name": "open", "access": map[string]any{"all": true}}), http.StatusCreated)
	wantStatus(t, root.Do("POST", "/api/admin/logical-groups", map[string]any{"name": "closed"}), http.StatusCreated)
	alice := n.SignUp(t, "alice", "correct-horse-1")
	wantStatus(t, alice.Do("POST", "/api/tokens", map[string]any{"name": "k", "fallback_groups": []string{"open"}}), http.StatusCreated)
	wantError(t, alice.Do("POST", "/api/tokens", map[string]any{"name": "k", "fallback_groups": []string{"closed"}}), http.StatusForbidden, "group_not_allowed")
	wantField(t, alice.Do("POST", "/api/tokens", map[string]any{"name": "k", "fallback_groups": []string{"open", "open"}}), "fallback_groups")
	wantField(t, alice.Do("POST", "/api/tokens", map[string]any{"name": "k", "fallback_groups": manyNames(6)}), "fallback_groups")
}

func manyNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("m%d", i)
	}
	return out
}

func manyRoutes(n int, ch int64) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = map[string]any{"name": fmt.Sprintf("r%d", i), "priority": i, "channels": []int64{ch}}
	}
	return out
}

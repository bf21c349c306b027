package app_test

import (
	"net/http"
	"strings"
	"testing"

	"tollgate/app/apptest"
	"tollgate/model"
)

type groupView struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Ratio       string `json:"ratio"`
	Selectable  bool   `json:"selectable"`
}

func TestGroups_CRUDAndConflicts(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	root := n.Root(t)
	list := func() []groupView {
		var gs []groupView
		r := root.Do("GET", "/api/admin/groups", nil)
		wantStatus(t, r, http.StatusOK)
		r.JSON(t, &gs)
		return gs
	}
	if gs := list(); len(gs) != 1 || gs[0].Name != "default" || gs[0].Ratio != "1" {
		t.Fatalf("fresh groups = %+v, want only default with ratio 1", gs)
	}

	r := root.Do("POST", "/api/admin/groups", map[string]any{"name": "vip", "description": "big spenders", "ratio": "1.5", "selectable": true})
	wantStatus(t, r, http.StatusCreated)
	var g groupView
	r.JSON(t, &g)
	if g != (groupView{Name: "vip", Description: "big spenders", Ratio: "1.5", Selectable: true}) {
		t.Fatalf("created = %+v", g)
	}
	if ratio := n.App.Groups.Ratio("vip"); ratio.String() != "1.5" {
		t.Fatalf("snapshot ratio = %s, want 1.5 right after create", ratio)
	}

	groups := count(t, n, &model.Group{})
	for _, tc := range []struct {
		name   string
		body   any
		status int
		code   string
		field  string
	}{
		{"duplicate", map[string]any{"name": "vip", "ratio": "3"}, 409, "group_exists", ""},
		{"duplicate default", map[string]any{"name": "default"}, 409, "group_exists", ""},
		{"ratio not a number", map[string]any{"name": "g1", "ratio": "abc"}, 400, "validation_failed", "ratio"},
		{"negative ratio", map[string]any{"name": "g1", "ratio": "-1"}, 400, "validation_failed", "ratio"},
		{"ratio too large", map[string]any{"name": "g1", "ratio": "1000.01"}, 400, "validation_failed", "ratio"},
		{"ratio of wrong type", `{"name": "g1", "ratio": 1.5}`, 400, "validation_failed", "ratio"},
		{"missing name", map[string]any{"ratio": "1"}, 400, "validation_failed", "name"},
		{"name with spaces", map[string]any{"name": "my group"}, 400, "validation_failed", "name"},
		{"name too long", map[string]any{"name": strings.Repeat("g", 65)}, 400, "validation_failed", "name"},
		{"description too long", map[string]any{"name": "g1", "description": strings.Repeat("d", 256)}, 400, "validation_failed", "description"},
		{"malformed JSON", `{"name": "g1",`, 400, "invalid_json", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := root.Do("POST", "/api/admin/groups", tc.body)
			if tc.field != "" {
				wantField(t, r, tc.field)
			} else {
				wantError(t, r, tc.status, tc.code)
			}
		})
	}
	if got := count(t, n, &model.Group{}); got != groups {
		t.Fatalf("groups = %d after refused creates, want %d", got, groups)
	}
	wantChinese(t, wantError(t, zh(root).Do("POST", "/api/admin/groups", map[string]any{"name": "vip"}), 409, "group_exists"))

	// Update.
	r = root.Do("PATCH", "/api/admin/groups/vip", map[string]any{"ratio": "2.25", "selectable": false})
	wantStatus(t, r, http.StatusOK)
	r.JSON(t, &g)
	if g.Ratio != "2.25" || g.Selectable || g.Description != "big spenders" {
		t.Fatalf("updated = %+v", g)
	}
	if ratio := n.App.Groups.Ratio("vip"); ratio.String() != "2.25" {
		t.Fatalf("snapshot ratio = %s after update", ratio)
	}
	wantField(t, root.Do("PATCH", "/api/admin/groups/vip", map[string]any{"ratio": "-2"}), "ratio")
	wantError(t, root.Do("PATCH", "/api/admin/groups/nope", map[string]any{"ratio": "2"}), http.StatusNotFound, "group_not_found")

	// Delete: default never, a group in use by a user or a key not while it is.
	wantError(t, root.Do("DELETE", "/api/admin/groups/default", nil), http.StatusConflict, "group_in_use")
	alice := n.SignUp(t, "alice", "correct-horse-1")
	aliceID := userID(t, n, "alice")
	wantStatus(t, root.Do("PATCH", path("/api/admin/users/%d", aliceID), map[string]string{"group": "vip"}), http.StatusOK)
	wantError(t, root.Do("DELETE", "/api/admin/groups/vip", nil), http.StatusConflict, "group_in_use")
	key := createKey(t, alice, map[string]any{"name": "k", "group": "vip"})
	wantStatus(t, root.Do("PATCH", path("/api/admin/users/%d", aliceID), map[string]string{"group": "default"}), http.StatusOK)
	wantError(t, root.Do("DELETE", "/api/admin/groups/vip", nil), http.StatusConflict, "group_in_use") // the key still uses it
	wantStatus(t, alice.Do("DELETE", path("/api/tokens/%d", key.ID), nil), http.StatusNoContent)

	wantStatus(t, root.Do("DELETE", "/api/admin/groups/vip", nil), http.StatusNoContent)
	wantError(t, root.Do("DELETE", "/api/admin/groups/vip", nil), http.StatusNotFound, "group_not_found")
	if gs := list(); len(gs) != 1 {
		t.Fatalf("groups after delete = %+v", gs)
	}
	if _, ok := n.App.Groups.Get("vip"); ok {
		t.Fatal("the snapshot still has the deleted group")
	}
	if got := count(t, n, &model.AuditLog{}, "action LIKE ?", "group.%"); got != 3 {
		t.Fatalf("group audit rows = %d, want 3 (create, update, delete)", got)
	}
}

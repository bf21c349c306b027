package app_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"tollgate/app/apptest"
	"tollgate/model"
)

type tierView struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Ratio       string `json:"ratio"`
	Users       int64  `json:"users"`
	CreatedAt   string `json:"created_at"`
	UpdatedAt   string `json:"updated_at"`
}

func TestTiers_CRUDValidationConflictsAndAudit(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	root := n.Root(t)
	list := func() []tierView {
		t.Helper()
		var ts []tierView
		r := root.Do("GET", "/api/admin/tiers", nil)
		wantStatus(t, r, http.StatusOK)
		r.JSON(t, &ts)
		return ts
	}
	if ts := list(); len(ts) != 1 || ts[0].Name != "default" || ts[0].Ratio != "1" || ts[0].Users != 1 || ts[0].CreatedAt == "" {
		t.Fatalf("fresh tiers = %+v, want only default with ratio 1 and root in it", ts)
	}

	r := root.Do("POST", "/api/admin/tiers", map[string]any{"name": "vip", "description": "big spenders", "ratio": "0.8"})
	wantStatus(t, r, http.StatusCreated)
	var tv tierView
	r.JSON(t, &tv)
	if tv.Name != "vip" || tv.Description != "big spenders" || tv.Ratio != "0.8" || tv.UpdatedAt == "" {
		t.Fatalf("created = %+v", tv)
	}
	if ratio := n.App.Tiers.Ratio("vip"); ratio.String() != "0.8" {
		t.Fatalf("snapshot ratio = %s right after create, want 0.8", ratio)
	}

	tiers := count(t, n, &model.Tier{})
	for _, tc := range []struct {
		name   string
		body   any
		status int
		code   string
		field  string
	}{
		{"duplicate", map[string]any{"name": "vip", "ratio": "3"}, 409, "tier_exists", ""},
		{"duplicate default", map[string]any{"name": "default", "ratio": "1"}, 409, "tier_exists", ""},
		{"missing ratio", map[string]any{"name": "t1"}, 400, "validation_failed", "ratio"},
		{"ratio not a number", map[string]any{"name": "t1", "ratio": "abc"}, 400, "validation_failed", "ratio"},
		{"negative ratio", map[string]any{"name": "t1", "ratio": "-0.5"}, 400, "validation_failed", "ratio"},
		{"ratio too large", map[string]any{"name": "t1", "ratio": "1000.01"}, 400, "validation_failed", "ratio"},
		{"ratio of wrong type", `{"name": "t1", "ratio": 0.8}`, 400, "validation_failed", "ratio"},
		{"missing name", map[string]any{"ratio": "1"}, 400, "validation_failed", "name"},
		{"name with spaces", map[string]any{"name": "my tier", "ratio": "1"}, 400, "validation_failed", "name"},
		{"name too long", map[string]any{"name": strings.Repeat("t", 65), "ratio": "1"}, 400, "validation_failed", "name"},
		{"description too long", map[string]any{"name": "t1", "ratio": "1", "description": strings.Repeat("d", 256)}, 400, "validation_failed", "description"},
		{"malformed JSON", `{"name": "t1",`, 400, "invalid_json", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := root.Do("POST", "/api/admin/tiers", tc.body)
			if tc.field != "" {
				wantField(t, r, tc.field)
			} else {
				wantError(t, r, tc.status, tc.code)
			}
		})
	}
	if got := count(t, n, &model.Tier{}); got != tiers {
		t.Fatalf("tiers = %d after refused creates, want %d", got, tiers)
	}
	wantChinese(t, wantError(t, zh(root).Do("POST", "/api/admin/tiers", map[string]any{"name": "vip", "ratio": "1"}), 409, "tier_exists"))

	// Update: only what is sent changes.
	r = root.Do("PATCH", "/api/admin/tiers/vip", map[string]any{"ratio": "0.75"})
	wantStatus(t, r, http.StatusOK)
	r.JSON(t, &tv)
	if tv.Ratio != "0.75" || tv.Description != "big spenders" {
		t.Fatalf("updated = %+v", tv)
	}
	if ratio := n.App.Tiers.Ratio("vip"); ratio.String() != "0.75" {
		t.Fatalf("snapshot ratio = %s after update", ratio)
	}
	wantField(t, root.Do("PATCH", "/api/admin/tiers/vip", map[string]any{"ratio": "-2"}), "ratio")
	wantError(t, root.Do("PATCH", "/api/admin/tiers/nope", map[string]any{"ratio": "2"}), http.StatusNotFound, "tier_not_found")

	// Non-admins cannot touch tiers.
	alice := n.SignUp(t, "alice", "correct-horse-1")
	wantStatus(t, alice.Do("GET", "/api/admin/tiers", nil), http.StatusForbidden)
	wantStatus(t, alice.Do("POST", "/api/admin/tiers", map[string]any{"name": "cheap", "ratio": "0.01"}), http.StatusForbidden)

	// Delete: default never, a tier with users not while it has them.
	wantError(t, root.Do("DELETE", "/api/admin/tiers/default", nil), http.StatusConflict, "tier_default")
	aliceID := userID(t, n, "alice")
	wantStatus(t, root.Do("PATCH", path("/api/admin/users/%d", aliceID), map[string]string{"tier": "vip"}), http.StatusOK)
	if ts := list(); len(ts) != 2 || ts[1].Name != "vip" || ts[1].Users != 1 || ts[0].Users != 1 {
		t.Fatalf("tiers with alice in vip = %+v", ts)
	}
	wantChinese(t, wantError(t, zh(root).Do("DELETE", "/api/admin/tiers/vip", nil), http.StatusConflict, "tier_in_use"))
	wantStatus(t, root.Do("PATCH", path("/api/admin/users/%d", aliceID), map[string]string{"tier": ""}), http.StatusOK) // "" = default
	wantStatus(t, root.Do("DELETE", "/api/admin/tiers/vip", nil), http.StatusNoContent)
	wantError(t, root.Do("DELETE", "/api/admin/tiers/vip", nil), http.StatusNotFound, "tier_not_found")
	if ts := list(); len(ts) != 1 || ts[0].Users != 2 {
		t.Fatalf("tiers after delete = %+v, want default with root and alice", ts)
	}
	if n.App.Tiers.Exists("vip") || n.App.Tiers.Ratio("vip").String() != "1" {
		t.Fatal("the snapshot still has the deleted tier")
	}
	if got := count(t, n, &model.AuditLog{}, "action LIKE ?", "tier.%"); got != 3 {
		t.Fatalf("tier audit rows = %d, want 3 (create, update, delete; refusals are not audited)", got)
	}
	if got := count(t, n, &model.AuditLog{}, "action = ? AND target = ? AND actor_name = ?", "tier.delete", "vip", "root"); got != 1 {
		t.Fatalf("tier.delete audit rows naming vip and root = %d, want 1", got)
	}
}

func TestTiers_UserPatchSetsTierAndKeepsOtherFields(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	root := n.Root(t)
	n.SignUp(t, "bob", "correct-horse-1")
	id := userID(t, n, "bob")
	wantStatus(t, root.Do("POST", "/api/admin/tiers", map[string]any{"name": "vip", "ratio": "0.8"}), http.StatusCreated)
	wantStatus(t, root.Do("POST", "/api/admin/groups", map[string]any{"name": "g2", "ratio": "1.5"}), http.StatusCreated)

	var u struct {
		Tier   string `json:"tier"`
		Group  string `json:"group"`
		Email  string `json:"email"`
		RPM    int    `json:"rpm"`
		TPM    int64  `json:"tpm"`
		Status string `json:"status"`
	}
	root.Do("GET", path("/api/admin/users/%d", id), nil).JSON(t, &u)
	if u.Tier != "default" {
		t.Fatalf("a new user's tier = %q, want default", u.Tier)
	}
	// The relay's cached view is loaded before the change; the change must replace it.
	if c, err := n.App.Accounts.Cached(context.Background(), id); err != nil || c.Tier != "default" {
		t.Fatalf("cached = %+v, %v", c, err)
	}

	r := root.Do("PATCH", path("/api/admin/users/%d", id), map[string]any{"tier": "vip", "group": "g2", "email": "bob@example.com", "rpm": 7, "tpm": 900})
	wantStatus(t, r, http.StatusOK)
	r.JSON(t, &u)
	if u.Tier != "vip" || u.Group != "g2" || u.Email != "bob@example.com" || u.RPM != 7 || u.TPM != 900 || u.Status != "enabled" {
		t.Fatalf("after patch = %+v", u)
	}
	if c, err := n.App.Accounts.Cached(context.Background(), id); err != nil || c.Tier != "vip" || c.Group != "g2" {
		t.Fatalf("cached after patch = %+v, %v; want tier vip, group g2", c, err)
	}
	if got := count(t, n, &model.AuditLog{}, "action = ? AND detail LIKE ?", "user.update", `%"user_tier":"vip"%`); got != 1 {
		t.Fatalf("user.update audit rows with the tier = %d, want 1", got)
	}

	// Fields not sent stay, the tier included.
	r = root.Do("PATCH", path("/api/admin/users/%d", id), map[string]any{"rpm": 8})
	wantStatus(t, r, http.StatusOK)
	r.JSON(t, &u)
	if u.Tier != "vip" || u.RPM != 8 || u.Group != "g2" {
		t.Fatalf("after rpm-only patch = %+v", u)
	}

	// An unknown tier is a field error and changes nothing, not even the fields sent with it.
	wantField(t, root.Do("PATCH", path("/api/admin/users/%d", id), map[string]any{"tier": "gold", "rpm": 9}), "tier")
	wantField(t, root.Do("PATCH", path("/api/admin/users/%d", id), map[string]any{"tier": "VIP"}), "tier")
	root.Do("GET", path("/api/admin/users/%d", id), nil).JSON(t, &u)
	if u.Tier != "vip" || u.RPM != 8 {
		t.Fatalf("after refused patches = %+v", u)
	}
	wantField(t, root.Do("PATCH", path("/api/admin/users/%d", id), map[string]any{"tier": 5}), "tier")

	// The admin user list carries the tier too.
	var page struct {
		Items []struct {
			Username string `json:"username"`
			Tier     string `json:"tier"`
		} `json:"items"`
	}
	root.Do("GET", "/api/admin/users?q=bob", nil).JSON(t, &page)
	if len(page.Items) != 1 || page.Items[0].Tier != "vip" {
		t.Fatalf("user list = %+v", page.Items)
	}
}

// Tier changes made on node A reach node B: the tier's ratio in B's snapshot and a user's tier in the user
// view B's relay reads (Accounts.Cached), both within a second.
func TestTwoNodes_TierChangesReachTheOtherNodeWithinASecond(t *testing.T) {
	env := apptest.NewEnv(t)
	if env.Shape != "mysql" {
		t.Skip("two-node propagation needs the shared MariaDB + Redis shape (make test-go-mysql runs it)")
	}
	a, b := env.Start(t), env.Start(t)
	root := a.Root(t)
	a.SignUp(t, "carol", "correct-horse-1")
	id := userID(t, a, "carol")
	if c, err := b.App.Accounts.Cached(context.Background(), id); err != nil || c.Tier != "default" {
		t.Fatalf("B's cached carol = %+v, %v", c, err)
	}
	wantStatus(t, root.Do("POST", "/api/admin/tiers", map[string]any{"name": "vip", "ratio": "0.8"}), http.StatusCreated)
	took := eventually(t, time.Second, "node B sees the tier created on A", func() bool { return b.App.Tiers.Ratio("vip").String() == "0.8" })
	t.Logf("create → B in %s", took)
	wantStatus(t, root.Do("PATCH", path("/api/admin/users/%d", id), map[string]any{"tier": "vip"}), http.StatusOK)
	took = eventually(t, time.Second, "node B's cached user has the new tier", func() bool {
		c, err := b.App.Accounts.Cached(context.Background(), id)
		return err == nil && c.Tier == "vip"
	})
	t.Logf("user tier → B in %s", took)
	wantStatus(t, root.Do("PATCH", "/api/admin/tiers/vip", map[string]any{"ratio": "0.5"}), http.StatusOK)
	eventually(t, time.Second, "node B sees the new ratio", func() bool { return b.App.Tiers.Ratio("vip").String() == "0.5" })
}

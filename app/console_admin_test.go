package app_test

import (
	"context"
	"net/http"
	"testing"

	"tollgate/app/apptest"
	"tollgate/model"
)

func TestAdminUsers_CreateThenDeleteKeepsTheBooks(t *testing.T) {
	n := apptest.New(t)
	root := n.Root(t)
	r := root.Do("POST", "/api/admin/users", map[string]any{"username": "carol", "password": "Granite-Lake-82",
		"email": "carol@example.com", "quota": 2_500_000})
	wantStatus(t, r, http.StatusCreated)
	var u userView
	r.JSON(t, &u)
	if u.Username != "carol" || u.Role != "user" || u.Quota != 2_500_000 || u.Status != "enabled" {
		t.Fatalf("created %+v", u)
	}
	carol := n.Login(t, "carol", "Granite-Lake-82")
	createKey(t, carol, map[string]any{"name": "k"})

	// Hostile and wrong input: named fields, the password policy, duplicates, roles only root grants.
	wantError(t, root.Do("POST", "/api/admin/users", map[string]any{"username": "carol", "password": "Granite-Lake-82"}), http.StatusConflict, "username_taken")
	wantField(t, root.Do("POST", "/api/admin/users", map[string]any{"username": "x", "password": "Granite-Lake-82"}), "username")
	wantError(t, root.Do("POST", "/api/admin/users", map[string]any{"username": "dave", "password": "password1"}), http.StatusBadRequest, "weak_password")
	wantField(t, root.Do("POST", "/api/admin/users", map[string]any{"username": "dave", "password": "Granite-Lake-82", "role": "god"}), "role")
	wantField(t, root.Do("POST", "/api/admin/users", map[string]any{"username": "dave", "password": "Granite-Lake-82", "quota": -1}), "quota")
	wantError(t, root.Do("POST", "/api/admin/users", map[string]any{"username": "dave", "password": "Granite-Lake-82", "group": "nope"}), http.StatusBadRequest, "group_not_found")
	wantError(t, carol.Do("POST", "/api/admin/users", map[string]any{"username": "eve", "password": "Granite-Lake-82"}), http.StatusForbidden, "forbidden")
	wantStatus(t, root.Do("POST", "/api/admin/users", map[string]any{"username": "adm", "password": "Granite-Lake-82", "role": "admin"}), http.StatusCreated)
	adm := n.Login(t, "adm", "Granite-Lake-82")
	wantError(t, adm.Do("POST", "/api/admin/users", map[string]any{"username": "adm2", "password": "Granite-Lake-82", "role": "admin"}), http.StatusForbidden, "role_not_allowed")

	// Delete: nobody deletes themselves, root, or (as a plain admin) another admin.
	rootID, admID := userID(t, n, "root"), userID(t, n, "adm")
	wantError(t, root.Do("DELETE", path("/api/admin/users/%d", rootID), nil), http.StatusForbidden, "cannot_modify_self")
	wantError(t, adm.Do("DELETE", path("/api/admin/users/%d", rootID), nil), http.StatusForbidden, "forbidden")
	wantError(t, adm.Do("DELETE", path("/api/admin/users/%d", admID), nil), http.StatusForbidden, "cannot_modify_self")
	wantError(t, root.Do("DELETE", "/api/admin/users/999999", nil), http.StatusNotFound, "user_not_found")

	wantStatus(t, adm.Do("DELETE", path("/api/admin/users/%d", u.ID), nil), http.StatusNoContent)
	wantError(t, root.Do("DELETE", path("/api/admin/users/%d", u.ID), nil), http.StatusNotFound, "user_not_found")
	// Signed out everywhere, cannot sign in, the name is free again; the key stops.
	wantStatus(t, carol.Do("GET", "/api/user/self", nil), http.StatusUnauthorized)
	wantError(t, n.Anon(t).Do("POST", "/api/auth/login", map[string]string{"username": "carol", "password": "Granite-Lake-82"}), http.StatusUnauthorized, "invalid_credentials")
	var row model.User
	if err := n.App.Store.DB.First(&row, u.ID).Error; err != nil {
		t.Fatal(err)
	}
	if row.Username != "#deleted-"+itoa(u.ID) || row.Email != "" || row.PasswordHash != "" || row.Status != "deleted" {
		t.Fatalf("deleted row not anonymised: %+v", row)
	}
	// The books still hold: Σ credits = balance (nothing was spent), and the row keeps the balance.
	credits, err := n.App.Store.SumCredits(context.Background(), u.ID)
	if err != nil || credits != 2_500_000 || row.Quota != credits {
		t.Fatalf("credits %d (%v), balance %d", credits, err, row.Quota)
	}
	// Deleted accounts leave the list and cannot be edited or funded.
	var list struct {
		Items []userView `json:"items"`
	}
	root.Do("GET", "/api/admin/users?size=100", nil).JSON(t, &list)
	for _, it := range list.Items {
		if it.ID == u.ID {
			t.Fatalf("deleted user listed: %+v", it)
		}
	}
	root.Do("GET", "/api/admin/users?status=deleted", nil).JSON(t, &list)
	if len(list.Items) != 1 || list.Items[0].ID != u.ID {
		t.Fatalf("status=deleted list: %+v", list.Items)
	}
	wantError(t, root.Do("PATCH", path("/api/admin/users/%d", u.ID), map[string]any{"status": "enabled"}), http.StatusConflict, "user_deleted")
	wantError(t, root.Do("POST", path("/api/admin/users/%d/quota", u.ID), map[string]any{"delta": 1, "reason": "x"}), http.StatusConflict, "user_deleted")
	wantStatus(t, root.Do("POST", "/api/admin/users", map[string]any{"username": "carol", "password": "Granite-Lake-83"}), http.StatusCreated)
	if count(t, n, &model.AuditLog{}, "action IN ?", []string{"user.create", "user.delete"}) != 4 {
		t.Fatalf("audit rows for create/delete: %d", count(t, n, &model.AuditLog{}, "action IN ?", []string{"user.create", "user.delete"}))
	}
}

func itoa(n int64) string { return path("%d", n) }

func TestPassword_WrongCurrentPasswordSaysSo(t *testing.T) {
	n := apptest.New(t)
	c := n.SignUp(t, "frank", "Copper-Tree-57")
	e := wantError(t, c.Do("POST", "/api/user/password", map[string]string{"old_password": "Copper-Tree-99", "new_password": "Copper-Tree-58"}),
		http.StatusBadRequest, "wrong_current_password")
	if e.Error.Message == "Wrong username or password." {
		t.Fatalf("message %q blames the username", e.Error.Message)
	}
	wantChinese(t, wantError(t, zh(c).Do("POST", "/api/user/password", map[string]string{"old_password": "nope-nope-1", "new_password": "Copper-Tree-58"}),
		http.StatusBadRequest, "wrong_current_password"))
}

func TestStatus_PublicBaseURLFromTheRequestTheSettingOrTheEnv(t *testing.T) {
	env := apptest.NewEnv(t)
	n := env.Start(t)
	root := n.Root(t)
	base := func(c *apptest.Client) string {
		var s struct {
			PublicBaseURL string `json:"public_base_url"`
		}
		c.Do("GET", "/api/status", nil).JSON(t, &s)
		return s.PublicBaseURL
	}
	if got := base(n.Anon(t)); got != n.URL {
		t.Fatalf("without a setting: %q, want the request's %q", got, n.URL)
	}
	for _, bad := range []any{"ftp://x.example", "https://x.example/", "https://x.example/v1", "https://x.example?a=1", "x.example", "https://u:p@x.example"} {
		wantField(t, root.Do("PUT", "/api/admin/settings", map[string]any{"public_base_url": bad}), "public_base_url")
	}
	wantStatus(t, root.Do("PUT", "/api/admin/settings", map[string]any{"public_base_url": "https://api.example.com"}), http.StatusOK)
	if got := base(n.Anon(t)); got != "https://api.example.com" {
		t.Fatalf("with the setting: %q", got)
	}
	// PUBLIC_URL overrides the setting (a second node on the same database).
	env.Cfg.PublicURL = "https://gw.example.net"
	if got := base(env.Start(t).Anon(t)); got != "https://gw.example.net" {
		t.Fatalf("with PUBLIC_URL: %q", got)
	}
}

func TestChannels_PatchOneFieldLeavesTheOthers(t *testing.T) {
	n := apptest.New(t)
	root := n.Root(t)
	r := root.Do("POST", "/api/admin/channels", map[string]any{"type": "openai", "name": "c1", "base_url": "https://api.example.com",
		"keys": []string{"sk-aaaaaaaaaaaaaaaa"}, "models": []string{"gpt-4o"}, "groups": []string{"default"}, "priority": 3, "weight": 7})
	wantStatus(t, r, http.StatusCreated)
	id := int64(r.M(t)["id"].(float64))
	for _, c := range []struct {
		body           map[string]any
		priority, weig float64
	}{{map[string]any{"priority": 9}, 9, 7}, {map[string]any{"weight": 2}, 9, 2}} {
		r := root.Do("PATCH", path("/api/admin/channels/%d", id), c.body)
		wantStatus(t, r, http.StatusOK)
		m := r.M(t)
		if m["priority"] != c.priority || m["weight"] != c.weig || m["name"] != "c1" {
			t.Fatalf("after %v: %v", c.body, m)
		}
	}
}

package app_test

import (
	"net/http"
	"strings"
	"testing"

	"tollgate/app/apptest"
	"tollgate/model"
)

// keyState is the part of a key view these tests read.
type keyState struct {
	ID            int64  `json:"id"`
	Status        string `json:"status"`
	AdminDisabled bool   `json:"admin_disabled"`
	GroupRevoked  bool   `json:"group_revoked"`
	Group         string `json:"group"`
}

func keyIn(t testing.TB, c *apptest.Client, listPath string, id int64) keyState {
	t.Helper()
	var page struct {
		Items []keyState `json:"items"`
	}
	r := c.Do("GET", listPath, nil)
	wantStatus(t, r, http.StatusOK)
	r.JSON(t, &page)
	for _, k := range page.Items {
		if k.ID == id {
			return k
		}
	}
	t.Fatalf("key %d not in %s: %s", id, listPath, r.Body)
	return keyState{}
}

func auditCount(t testing.TB, n *apptest.Node, action string, actorID int64) int64 {
	return count(t, n, &model.AuditLog{}, "action = ? AND actor_id = ?", action, actorID)
}

// Before: the owner could PATCH a key an admin had disabled back to enabled, and admin key changes left no
// audit row.
func TestAdminDisabledKey_StaysDisabledUntilAnAdminEnablesIt(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	root := n.Root(t)
	rootID := userID(t, n, "root")
	alice := n.SignUp(t, "alice", "correct-horse-1")
	key := createKey(t, alice, map[string]any{"name": "laptop"})
	adminPath := path("/api/admin/tokens/%d", key.ID)
	ownPath := path("/api/tokens/%d", key.ID)

	wantStatus(t, root.Do("PATCH", adminPath, map[string]string{"status": "disabled"}), http.StatusOK)
	if k := keyIn(t, alice, "/api/tokens", key.ID); k.Status != "disabled" || !k.AdminDisabled {
		t.Fatalf("owner's view = %+v, want disabled by an admin", k)
	}
	if k := keyIn(t, root, "/api/admin/tokens", key.ID); !k.AdminDisabled {
		t.Fatalf("admin's view = %+v, want admin_disabled", k)
	}

	// The owner cannot switch it back on, with a clear message; other edits still work and keep it off.
	e := wantError(t, alice.Do("PATCH", ownPath, map[string]string{"status": "enabled"}), http.StatusForbidden, "key_admin_disabled")
	if !strings.Contains(e.Error.Message, "administrator") {
		t.Fatalf("message %q", e.Error.Message)
	}
	wantChinese(t, wantError(t, zh(alice).Do("PATCH", ownPath, map[string]string{"status": "enabled"}), http.StatusForbidden, "key_admin_disabled"))
	wantStatus(t, alice.Do("PATCH", ownPath, map[string]any{"name": "renamed", "status": "disabled"}), http.StatusOK)
	if k := keyIn(t, alice, "/api/tokens", key.ID); k.Status != "disabled" || !k.AdminDisabled {
		t.Fatalf("after the owner's edit = %+v, want still disabled by an admin", k)
	}
	r := as(n.Anon(t), key.Key).Do("GET", "/v1/models", nil)
	wantStatus(t, r, http.StatusUnauthorized)

	// An admin's enable clears the mark; then the owner is free again.
	wantStatus(t, root.Do("PATCH", adminPath, map[string]string{"status": "enabled"}), http.StatusOK)
	if k := keyIn(t, alice, "/api/tokens", key.ID); k.Status != "enabled" || k.AdminDisabled {
		t.Fatalf("after the admin's enable = %+v", k)
	}
	wantStatus(t, as(n.Anon(t), key.Key).Do("GET", "/v1/models", nil), http.StatusOK)
	wantStatus(t, alice.Do("PATCH", ownPath, map[string]string{"status": "disabled"}), http.StatusOK)
	wantStatus(t, alice.Do("PATCH", ownPath, map[string]string{"status": "enabled"}), http.StatusOK)

	// Both admin actions are audited, with the actor, the key and its owner; the owner's own edits are not admin actions.
	if d, en := auditCount(t, n, "token.disable", rootID), auditCount(t, n, "token.enable", rootID); d != 1 || en != 1 {
		t.Fatalf("audit rows: disable %d, enable %d; want 1 each", d, en)
	}
	var page struct {
		Items []model.AuditLog `json:"items"`
	}
	root.Do("GET", "/api/admin/audit?action=token.disable", nil).JSON(t, &page)
	if len(page.Items) != 1 || page.Items[0].ActorName != "root" || !strings.Contains(page.Items[0].Target, "alice") ||
		!strings.Contains(page.Items[0].Detail, `"owner":"alice"`) {
		t.Fatalf("audit = %+v", page.Items)
	}
}

// Before: a non-root admin could disable root's keys.
func TestAdminKeys_AnAdminCannotActOnKeysOfAnEqualOrHigherRole(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	root := n.Root(t)
	n.SignUp(t, "adm", "correct-horse-1")
	n.SignUp(t, "adm2", "correct-horse-1")
	alice := n.SignUp(t, "alice", "correct-horse-1")
	for _, name := range []string{"adm", "adm2"} {
		wantStatus(t, root.Do("PATCH", path("/api/admin/users/%d", userID(t, n, name)), map[string]string{"role": "admin"}), http.StatusOK)
	}
	adm, adm2 := n.Login(t, "adm", "correct-horse-1"), n.Login(t, "adm2", "correct-horse-1")
	rootKey := createKey(t, root, map[string]any{"name": "root-key"})
	adm2Key := createKey(t, adm2, map[string]any{"name": "adm2-key"})
	admKey := createKey(t, adm, map[string]any{"name": "adm-key"})
	aliceKey := createKey(t, alice, map[string]any{"name": "alice-key"})
	admID := userID(t, n, "adm")

	for _, k := range []tokenView{rootKey, adm2Key} {
		for _, st := range []string{"disabled", "enabled"} {
			wantError(t, adm.Do("PATCH", path("/api/admin/tokens/%d", k.ID), map[string]string{"status": st}), http.StatusForbidden, "key_owner_protected")
		}
		if v := keyIn(t, root, "/api/admin/tokens", k.ID); v.Status != "enabled" || v.AdminDisabled {
			t.Fatalf("refused action changed key %d: %+v", k.ID, v)
		}
	}
	wantChinese(t, wantError(t, zh(adm).Do("PATCH", path("/api/admin/tokens/%d", rootKey.ID), map[string]string{"status": "disabled"}),
		http.StatusForbidden, "key_owner_protected"))
	if c := auditCount(t, n, "token.disable", admID) + auditCount(t, n, "token.enable", admID); c != 0 {
		t.Fatalf("refused actions wrote %d audit rows", c)
	}
	// A user's key and the admin's own are fine; root acts on every key.
	wantStatus(t, adm.Do("PATCH", path("/api/admin/tokens/%d", aliceKey.ID), map[string]string{"status": "disabled"}), http.StatusOK)
	wantStatus(t, adm.Do("PATCH", path("/api/admin/tokens/%d", admKey.ID), map[string]string{"status": "disabled"}), http.StatusOK)
	wantStatus(t, root.Do("PATCH", path("/api/admin/tokens/%d", adm2Key.ID), map[string]string{"status": "disabled"}), http.StatusOK)
	if c := auditCount(t, n, "token.disable", admID); c != 2 {
		t.Fatalf("adm's disables audited %d times, want 2", c)
	}
}

// Before: a key kept a group (its routing and discount) after its owner was moved out of it. The relay side
// is tested end to end in relay/e2e_group_revoked_test.go; this is the console's mark.
func TestKeyGroup_ConsoleMarksAKeyWhoseGroupTheOwnerLost(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	root := n.Root(t)
	wantStatus(t, root.Do("POST", "/api/admin/groups", map[string]any{"name": "vip", "ratio": "0.5"}), http.StatusCreated)
	alice := n.SignUp(t, "alice", "correct-horse-1")
	id := userID(t, n, "alice")
	wantStatus(t, root.Do("PATCH", path("/api/admin/users/%d", id), map[string]string{"group": "vip"}), http.StatusOK)
	key := createKey(t, alice, map[string]any{"name": "vip-key", "group": "vip"})
	plain := createKey(t, alice, map[string]any{"name": "plain"})
	if k := keyIn(t, alice, "/api/tokens", key.ID); k.GroupRevoked {
		t.Fatalf("key in the owner's own group marked revoked: %+v", k)
	}
	wantStatus(t, root.Do("PATCH", path("/api/admin/users/%d", id), map[string]string{"group": "default"}), http.StatusOK)
	for _, c := range []struct {
		cl   *apptest.Client
		list string
	}{{alice, "/api/tokens"}, {root, "/api/admin/tokens"}} {
		if k := keyIn(t, c.cl, c.list, key.ID); !k.GroupRevoked || k.Group != "vip" {
			t.Fatalf("%s: %+v, want group_revoked", c.list, k)
		}
		if k := keyIn(t, c.cl, c.list, plain.ID); k.GroupRevoked {
			t.Fatalf("%s: a key without a group of its own is marked: %+v", c.list, k)
		}
	}
	// Making the group selectable gives it back.
	wantStatus(t, root.Do("PATCH", "/api/admin/groups/vip", map[string]any{"selectable": true}), http.StatusOK)
	if k := keyIn(t, alice, "/api/tokens", key.ID); k.GroupRevoked {
		t.Fatalf("selectable group still marked revoked: %+v", k)
	}
}

package app_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"tollgate/app/apptest"
	"tollgate/model"
)

var keyRE = regexp.MustCompile(`^sk-[0-9A-Za-z]{48}$`)

func TestKeyLifecycle_CreateListRevealPatchDelete(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	alice := n.SignUp(t, "alice", "correct-horse-1")
	expires := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)

	limited := createKey(t, alice, map[string]any{"name": "dev", "remain_quota": 1_000_000, "models": []string{"gpt-4o"},
		"allowed_ips": []string{"10.0.0.0/8", "127.0.0.1"}, "rpm": 60, "concurrency": 2, "expires_at": expires})
	if !keyRE.MatchString(limited.Key) {
		t.Fatalf("created key %q is not sk- + 48 base62 characters", limited.Key)
	}
	if limited.Name != "dev" || limited.Status != "enabled" || limited.Unlimited || limited.RemainQuota != 1_000_000 ||
		limited.RPM != 60 || limited.Concurrency != 2 || len(limited.Models) != 1 || len(limited.AllowedIPs) != 2 ||
		limited.UserID != userID(t, n, "alice") {
		t.Fatalf("created key = %+v", limited)
	}
	unlimited := createKey(t, alice, map[string]any{"name": "ci"})
	if !unlimited.Unlimited || unlimited.Key == limited.Key || unlimited.Models == nil || unlimited.AllowedIPs == nil {
		t.Fatalf("key without remain_quota = %+v, want unlimited with [] lists", unlimited)
	}

	// Lists and reads show masked keys only.
	var page struct {
		Items []tokenView `json:"items"`
		Total int64       `json:"total"`
	}
	alice.Do("GET", "/api/tokens", nil).JSON(t, &page)
	if page.Total != 2 || len(page.Items) != 2 {
		t.Fatalf("list = %+v", page)
	}
	created := map[int64]string{limited.ID: limited.Key, unlimited.ID: unlimited.Key}
	for _, it := range page.Items {
		full := created[it.ID]
		if it.Key == full || !strings.Contains(it.Key, "****") || !strings.HasPrefix(it.Key, full[:7]) ||
			!strings.HasSuffix(it.Key, full[len(full)-4:]) || len(it.Key) > 20 {
			t.Fatalf("listed key %q is not a mask of %q", it.Key, full)
		}
	}
	alice.Do("GET", "/api/tokens?size=1&page=2", nil).JSON(t, &page)
	if page.Total != 2 || len(page.Items) != 1 {
		t.Fatalf("page 2 of size 1 = %+v", page)
	}
	alice.Do("GET", "/api/tokens?q=de", nil).JSON(t, &page)
	if page.Total != 1 || page.Items[0].ID != limited.ID {
		t.Fatalf("q=de = %+v", page)
	}
	r := alice.Do("GET", path("/api/tokens/%d", limited.ID), nil)
	wantStatus(t, r, http.StatusOK)
	if bytes.Contains(r.Body, []byte(limited.Key)) || bytes.Contains(r.Body, []byte(limited.Key[3:])) {
		t.Fatalf("GET shows the key in clear: %s", r.Body)
	}

	// Reveal gives back exactly the created key.
	for id, key := range created {
		r := alice.Do("POST", path("/api/tokens/%d/reveal", id), nil)
		wantStatus(t, r, http.StatusOK)
		if got := r.M(t)["key"]; got != key {
			t.Fatalf("reveal %d = %v, want %s", id, got, key)
		}
	}

	// The relay's view finds it by the clear key.
	ctx := context.Background()
	if c, err := n.App.Tokens.Lookup(ctx, limited.Key); err != nil || c.ID != limited.ID || c.Status != "enabled" || len(c.Nets) != 2 {
		t.Fatalf("Lookup = %+v, %v", c, err)
	}

	// Patch changes what it names and nothing else.
	r = alice.Do("PATCH", path("/api/tokens/%d", limited.ID), map[string]any{"name": "prod", "status": "disabled", "remain_quota": 5})
	wantStatus(t, r, http.StatusOK)
	var patched tokenView
	r.JSON(t, &patched)
	if patched.Name != "prod" || patched.Status != "disabled" || patched.RemainQuota != 5 || patched.RPM != 60 ||
		patched.Concurrency != 2 || len(patched.Models) != 1 || len(patched.AllowedIPs) != 2 || patched.Key == limited.Key {
		t.Fatalf("patched = %+v", patched)
	}
	if c, err := n.App.Tokens.Lookup(ctx, limited.Key); err != nil || c.Status != "disabled" || c.Name != "prod" {
		t.Fatalf("Lookup after patch = %+v, %v (the per-node cache was not invalidated)", c, err)
	}
	r = alice.Do("PATCH", path("/api/tokens/%d", limited.ID), map[string]any{"expires_at": nil, "models": []string{}})
	wantStatus(t, r, http.StatusOK)
	if m := r.M(t); m["expires_at"] != nil || len(m["models"].([]any)) != 0 || m["name"] != "prod" {
		t.Fatalf("clearing expiry and models = %s", r.Body)
	}

	// Delete removes it everywhere.
	wantStatus(t, alice.Do("DELETE", path("/api/tokens/%d", limited.ID), nil), http.StatusNoContent)
	wantError(t, alice.Do("GET", path("/api/tokens/%d", limited.ID), nil), http.StatusNotFound, "token_not_found")
	wantError(t, alice.Do("POST", path("/api/tokens/%d/reveal", limited.ID), nil), http.StatusNotFound, "token_not_found")
	wantError(t, alice.Do("DELETE", path("/api/tokens/%d", limited.ID), nil), http.StatusNotFound, "token_not_found")
	if _, err := n.App.Tokens.Lookup(ctx, limited.Key); err == nil {
		t.Fatal("a deleted key is still found by Lookup")
	}
	alice.Do("GET", "/api/tokens", nil).JSON(t, &page)
	if page.Total != 1 || page.Items[0].ID != unlimited.ID {
		t.Fatalf("list after delete = %+v", page)
	}
}

func TestKeys_AnotherUsersKeyIsNotFoundAndUntouched(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	alice := n.SignUp(t, "alice", "correct-horse-1")
	bob := n.SignUp(t, "bob", "correct-horse-1")
	root := n.Root(t)
	key := createKey(t, alice, map[string]any{"name": "mine", "remain_quota": 100})
	createKey(t, bob, map[string]any{"name": "bobs"})
	id := path("/api/tokens/%d", key.ID)

	for _, who := range []struct {
		name string
		c    *apptest.Client
	}{{"other user", bob}, {"admin through the owner routes", root}} {
		for _, tc := range []struct {
			method, path string
			body         any
		}{
			{"GET", id, nil},
			{"PATCH", id, map[string]any{"name": "stolen", "status": "disabled", "remain_quota": 0}},
			{"POST", id + "/reveal", nil},
			{"DELETE", id, nil},
		} {
			t.Run(who.name+" "+tc.method+" "+tc.path, func(t *testing.T) {
				r := who.c.Do(tc.method, tc.path, tc.body)
				wantError(t, r, http.StatusNotFound, "token_not_found")
				if bytes.Contains(r.Body, []byte(key.Key[3:])) || bytes.Contains(r.Body, []byte("mine")) {
					t.Fatalf("refusal leaks the key: %s", r.Body)
				}
				wantChinese(t, wantError(t, zh(who.c).Do(tc.method, tc.path, tc.body), http.StatusNotFound, "token_not_found"))
			})
		}
	}
	for _, p := range []string{"/api/tokens/999999", "/api/tokens/abc", "/api/tokens/-1", "/api/tokens/0"} {
		wantError(t, alice.Do("GET", p, nil), http.StatusNotFound, "token_not_found")
	}

	// Alice's key is exactly as it was.
	var got tokenView
	alice.Do("GET", id, nil).JSON(t, &got)
	if got.Name != "mine" || got.Status != "enabled" || got.RemainQuota != 100 {
		t.Fatalf("alice's key after the attempts = %+v", got)
	}
	if r := alice.Do("POST", id+"/reveal", nil); r.M(t)["key"] != key.Key {
		t.Fatalf("alice's key changed: %s", r.Body)
	}
	var page struct {
		Items []tokenView `json:"items"`
		Total int64       `json:"total"`
	}
	bob.Do("GET", "/api/tokens", nil).JSON(t, &page)
	if page.Total != 1 || page.Items[0].Name != "bobs" {
		t.Fatalf("bob's list = %+v", page)
	}
}

func TestAdminKeys_ListAllAndDisableAny(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	alice := n.SignUp(t, "alice", "correct-horse-1")
	n.SignUp(t, "bob", "correct-horse-1")
	root := n.Root(t)
	key := createKey(t, alice, map[string]any{"name": "a1"})
	createKey(t, n.Login(t, "bob", "correct-horse-1"), map[string]any{"name": "b1"})

	var page struct {
		Items []tokenView `json:"items"`
		Total int64       `json:"total"`
	}
	root.Do("GET", "/api/admin/tokens", nil).JSON(t, &page)
	if page.Total != 2 {
		t.Fatalf("admin list = %+v", page)
	}
	root.Do("GET", path("/api/admin/tokens?user_id=%d", userID(t, n, "alice")), nil).JSON(t, &page)
	if page.Total != 1 || page.Items[0].Key == key.Key || !strings.Contains(page.Items[0].Key, "****") {
		t.Fatalf("admin list of alice = %+v (keys must be masked for admins too)", page)
	}
	wantField(t, root.Do("GET", "/api/admin/tokens?user_id=x", nil), "user_id")

	wantField(t, root.Do("PATCH", path("/api/admin/tokens/%d", key.ID), map[string]string{"status": "paused"}), "status")
	wantError(t, root.Do("PATCH", "/api/admin/tokens/999999", map[string]string{"status": "disabled"}), 404, "token_not_found")
	r := root.Do("PATCH", path("/api/admin/tokens/%d", key.ID), map[string]any{"status": "disabled", "name": "renamed"})
	wantStatus(t, r, http.StatusOK)
	if m := r.M(t); m["status"] != "disabled" || m["name"] != "a1" {
		t.Fatalf("admin patch = %s (admins may change status only)", r.Body)
	}
	if c, err := n.App.Tokens.Lookup(context.Background(), key.Key); err != nil || c.Status != "disabled" {
		t.Fatalf("Lookup after admin disable = %+v, %v", c, err)
	}
}

func TestKeyGroup_OnlySelectableOrOwnGroup(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	root := n.Root(t)
	alice := n.SignUp(t, "alice", "correct-horse-1")
	wantStatus(t, root.Do("POST", "/api/admin/groups", map[string]any{"name": "vip", "ratio": "2", "selectable": false}), 201)
	wantStatus(t, root.Do("POST", "/api/admin/groups", map[string]any{"name": "open", "ratio": "0.5", "selectable": true}), 201)

	var groups []struct {
		Name string `json:"name"`
	}
	alice.Do("GET", "/api/user/groups", nil).JSON(t, &groups)
	if names := fmt.Sprint(groups); names != "[{default} {open}]" {
		t.Fatalf("alice's groups = %s, want default and open", names)
	}

	for _, g := range []string{"vip", "nope"} {
		e := wantError(t, alice.Do("POST", "/api/tokens", map[string]any{"name": "k", "group": g}), http.StatusForbidden, "group_not_allowed")
		if !strings.Contains(e.Error.Message, g) {
			t.Fatalf("message %q does not name the group", e.Error.Message)
		}
		wantChinese(t, wantError(t, zh(alice).Do("POST", "/api/tokens", map[string]any{"name": "k", "group": g}), 403, "group_not_allowed"), g)
	}
	noTokens(t, n)

	k := createKey(t, alice, map[string]any{"name": "k", "group": "open"})
	if k.Group != "open" {
		t.Fatalf("key group = %q", k.Group)
	}
	wantError(t, alice.Do("PATCH", path("/api/tokens/%d", k.ID), map[string]any{"group": "vip", "name": "x"}), 403, "group_not_allowed")
	var got tokenView
	alice.Do("GET", path("/api/tokens/%d", k.ID), nil).JSON(t, &got)
	if got.Group != "open" || got.Name != "k" {
		t.Fatalf("a refused patch changed the key: %+v", got)
	}

	// A user placed in vip by an admin may use vip.
	wantStatus(t, root.Do("PATCH", path("/api/admin/users/%d", userID(t, n, "alice")), map[string]string{"group": "vip"}), 200)
	createKey(t, alice, map[string]any{"name": "v", "group": "vip"})
}

func TestKeyCreate_BadInputIsRefusedAndWritesNothing(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	alice := n.SignUp(t, "alice", "correct-horse-1")
	for _, tc := range []struct {
		name  string
		body  any
		field string
	}{
		{"missing name", map[string]any{}, "name"},
		{"blank name", map[string]any{"name": "   "}, "name"},
		{"name too long", map[string]any{"name": strings.Repeat("n", 65)}, "name"},
		{"name of wrong type", `{"name": 12}`, "name"},
		{"negative quota", map[string]any{"name": "k", "remain_quota": -1}, "remain_quota"},
		{"quota of wrong type", `{"name": "k", "remain_quota": "lots"}`, "remain_quota"},
		{"expiry in the past", map[string]any{"name": "k", "expires_at": time.Now().Add(-time.Hour)}, "expires_at"},
		{"expiry of wrong type", `{"name": "k", "expires_at": 5}`, "expires_at"},
		{"expiry not RFC 3339", `{"name": "k", "expires_at": "tomorrow"}`, "expires_at"},
		{"models not a list", `{"name": "k", "models": "gpt-4o"}`, "models"},
		{"empty model name", map[string]any{"name": "k", "models": []string{""}}, "models"},
		{"bad allowed ip", map[string]any{"name": "k", "allowed_ips": []string{"10.0.0.0/8", "nope"}}, "allowed_ips"},
		{"negative rpm", map[string]any{"name": "k", "rpm": -1}, "rpm"},
		{"rpm of wrong type", `{"name": "k", "rpm": "fast"}`, "rpm"},
		{"concurrency too high", map[string]any{"name": "k", "concurrency": 10_001}, "concurrency"},
		{"unknown status", map[string]any{"name": "k", "status": "paused"}, "status"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantField(t, alice.Do("POST", "/api/tokens", tc.body), tc.field)
		})
	}
	wantError(t, alice.Do("POST", "/api/tokens", `{"name": "k"`), http.StatusBadRequest, "invalid_json")
	wantError(t, alice.Do("POST", "/api/tokens", `{"name": "`+strings.Repeat("k", 1<<20)+`"}`), http.StatusRequestEntityTooLarge, "body_too_large")
	noTokens(t, n)

	// A refused patch leaves the key as it was.
	k := createKey(t, alice, map[string]any{"name": "k", "rpm": 5})
	wantField(t, alice.Do("PATCH", path("/api/tokens/%d", k.ID), map[string]any{"name": "renamed", "rpm": -3}), "rpm")
	var got tokenView
	alice.Do("GET", path("/api/tokens/%d", k.ID), nil).JSON(t, &got)
	if got.Name != "k" || got.RPM != 5 {
		t.Fatalf("a refused patch changed the key: %+v", got)
	}
}

func TestCreatedKey_AppearsNowhereInTheDatabase(t *testing.T) {
	t.Parallel()
	env := apptest.NewEnv(t)
	n := env.Start(t)
	alice := n.SignUp(t, "alice", "correct-horse-1")
	var keys []string
	for i := range 3 {
		k := createKey(t, alice, map[string]any{"name": fmt.Sprintf("k%d", i), "remain_quota": 1000})
		keys = append(keys, k.Key)
	}
	// Touch the key through the other paths that write rows: reveal, patch, the relay's lookup.
	tok := createKey(t, alice, map[string]any{"name": "patched"})
	keys = append(keys, tok.Key)
	wantStatus(t, alice.Do("POST", path("/api/tokens/%d/reveal", tok.ID), nil), 200)
	wantStatus(t, alice.Do("PATCH", path("/api/tokens/%d", tok.ID), map[string]any{"name": "p2"}), 200)
	if _, err := n.App.Tokens.Lookup(context.Background(), tok.Key); err != nil {
		t.Fatal(err)
	}
	needles := func(key string) []string { return []string{key, key[3:], key[3:27], key[27:]} }

	if count(t, n, &model.Token{}) != 4 {
		t.Fatal("the keys were not stored at all")
	}
	var all []string
	for _, k := range keys {
		all = append(all, needles(k)...)
	}
	if where, s := env.StoreHolds(t, n, all...); where != "" {
		t.Fatalf("%s holds key text %q", where, s)
	}
}

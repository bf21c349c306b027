package app_test

import (
	"net/http"
	"strings"
	"testing"

	"tollgate/app/apptest"
)

// Import new-api's ratios (dry run, then merge), export ours, replace; the public list shows what the caller
// pays in their tier and group, with a search.
func TestPriceCatalog_ImportExportAndWhatAUserPays(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	root := n.Root(t)
	wantStatus(t, root.Do("PUT", "/api/admin/pricing", []map[string]string{{"model": "keep-me", "input": "1", "output": "1"},
		{"model": "gpt-4o", "input": "9", "output": "9"}}), http.StatusOK)
	catalog := `{"model_ratio":{"gpt-4o":1.25,"gpt-4o-mini":0.075},"completion_ratio":{"gpt-4o":4,"gpt-4o-mini":4}}`
	r := root.Do("POST", "/api/admin/pricing/import?dry_run=1", catalog)
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"added":1`) || !strings.Contains(string(r.Body), `"changed":1`) ||
		!strings.Contains(string(r.Body), `"format":"new-api"`) {
		t.Fatalf("dry run: %d %s", r.Status, r.Body)
	}
	if p := root.Do("GET", "/api/admin/pricing", nil); strings.Contains(string(p.Body), "gpt-4o-mini") {
		t.Fatal("a dry run saved prices")
	}
	wantStatus(t, root.Do("POST", "/api/admin/pricing/import", catalog), http.StatusOK)
	ex := root.Do("GET", "/api/admin/pricing/export", nil)
	body := string(ex.Body)
	if ex.Status != http.StatusOK || !strings.Contains(ex.Header.Get("Content-Disposition"), "attachment") ||
		!strings.Contains(body, `{"model":"gpt-4o","input":"2.5","output":"10"`) || !strings.Contains(body, `"model":"keep-me"`) ||
		!strings.Contains(body, `{"model":"gpt-4o-mini","input":"0.15","output":"0.6"`) {
		t.Fatalf("export after merge: %d %s", ex.Status, body)
	}
	// Our export imports back as the whole table.
	wantStatus(t, root.Do("POST", "/api/admin/pricing/import?mode=replace", `{"prices":[{"model":"only","input":"1","output":"2"}]}`), http.StatusOK)
	if p := root.Do("GET", "/api/admin/pricing", nil); strings.Contains(string(p.Body), "keep-me") || !strings.Contains(string(p.Body), `"only"`) {
		t.Fatalf("replace: %s", p.Body)
	}
	wantField(t, root.Do("POST", "/api/admin/pricing/import", `{"model_ratio":{"m":-1}}`), "model_ratio")
	wantField(t, root.Do("POST", "/api/admin/pricing/import?mode=append", `[]`), "mode")
	wantField(t, root.Do("POST", "/api/admin/pricing/import", `[{"model":"a","input":"x"}]`), "input")

	// What alice pays: group premium (1.5) × tier vip (0.8) = 1.2.
	wantStatus(t, root.Do("PUT", "/api/admin/pricing", []map[string]string{{"model": "gpt-4o", "input": "2.5", "output": "10"},
		{"model": "claude", "input": "3", "output": "15"}}), http.StatusOK)
	wantStatus(t, root.Do("POST", "/api/admin/tiers", map[string]any{"name": "vip", "ratio": "0.8"}), http.StatusCreated)
	wantStatus(t, root.Do("POST", "/api/admin/logical-groups", map[string]any{"name": "premium", "ratio": "1.5", "access": map[string]any{"all": true}}), http.StatusCreated)
	wantStatus(t, root.Do("POST", "/api/admin/logical-groups", map[string]any{"name": "closed", "ratio": "0.1"}), http.StatusCreated)
	alice := n.SignUp(t, "alice", "correct-horse-1")
	wantStatus(t, root.Do("PATCH", path("/api/admin/users/%d", userID(t, n, "alice")), map[string]string{"tier": "vip"}), http.StatusOK)
	r = alice.Do("GET", "/api/pricing?group=premium&q=GPT", nil)
	if r.Status != http.StatusOK || strings.Contains(string(r.Body), "claude") ||
		!strings.Contains(string(r.Body), `"input":"3"`) || !strings.Contains(string(r.Body), `"output":"12"`) || !strings.Contains(string(r.Body), `"ratio":"1.2"`) {
		t.Fatalf("alice in premium: %d %s", r.Status, r.Body)
	}
	wantError(t, alice.Do("GET", "/api/pricing?group=closed", nil), http.StatusForbidden, "group_not_allowed")
}

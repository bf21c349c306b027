package app_test

import (
	"net/http"
	"strings"
	"testing"

	"tollgate/app/apptest"
)

// Prices beyond tokens survive the table's round trips (save, read, export, import) on either store, count as
// a change in an import's dry run, and show on the public list at the caller's ratio.
func TestPricing_MediaFieldsRoundTripAndShowAtTheCallersRatio(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	root := n.Root(t)
	row := map[string]any{"model": "dall-e-3", "per_image": "0.04", "per_image_by_size": map[string]string{"1024x1792/hd": "0.12"},
		"tiers": []map[string]any{{"above_prompt_tokens": 200000, "input": "2.5", "output": "15"}}, "input": "1", "output": "2"}
	wantStatus(t, root.Do("PUT", "/api/admin/pricing", []any{row, map[string]string{"model": "tts-1", "per_1m_chars": "15"},
		map[string]string{"model": "whisper-1", "per_audio_minute": "0.006"}, map[string]string{"model": "rerank", "per_1k_searches": "2"}}), http.StatusOK)
	got := string(root.Do("GET", "/api/admin/pricing", nil).Body)
	for _, want := range []string{`"per_image":"0.04"`, `"per_image_by_size":{"1024x1792/hd":"0.12"}`, `"above_prompt_tokens":200000`,
		`"per_1m_chars":"15"`, `"per_audio_minute":"0.006"`, `"per_1k_searches":"2"`} {
		if !strings.Contains(got, want) {
			t.Fatalf("admin pricing lacks %s: %s", want, got)
		}
	}
	ex := string(root.Do("GET", "/api/admin/pricing/export", nil).Body)
	wantStatus(t, root.Do("POST", "/api/admin/pricing/import?mode=replace", ex), http.StatusOK)
	if again := string(root.Do("GET", "/api/admin/pricing", nil).Body); again != got {
		t.Fatalf("export → import changed the table:\n%s\n%s", got, again)
	}
	r := root.Do("POST", "/api/admin/pricing/import?dry_run=1", `[{"model":"tts-1","input":"0","output":"0","per_1m_chars":"30"}]`)
	if !strings.Contains(string(r.Body), `"changed":1`) {
		t.Fatalf("a changed character price is a change: %s", r.Body)
	}
	wantField(t, root.Do("PUT", "/api/admin/pricing", []map[string]any{{"model": "x", "per_image_by_size": map[string]string{"huge": "1"}}}), "per_image_by_size")
	wantStatus(t, root.Do("POST", "/api/admin/logical-groups", map[string]any{"name": "premium", "ratio": "1.5", "access": map[string]any{"all": true}}), http.StatusCreated)
	alice := n.SignUp(t, "alice", "correct-horse-1")
	pub := string(alice.Do("GET", "/api/pricing?group=premium&q=dall", nil).Body)
	if !strings.Contains(pub, `"per_image":"0.06"`) || !strings.Contains(pub, `"1024x1792/hd":"0.18"`) || strings.Contains(pub, "per_1m_chars") {
		t.Fatalf("public pricing: %s", pub)
	}
}

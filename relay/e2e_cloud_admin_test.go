package relay_test

// The console API of the cloud channel types: each type's settings are checked (400 naming the field),
// credentials are sealed and come back masked, defaults fill the base URL, and channel tests, model fetch and
// token counting work for every new type (or say plainly that the vendor has no model list).

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"tollgate/relay/relaytest"
)

func TestCloudChannels_SettingsAreCheckedNamingTheField(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	vx := relaytest.NewVertex()
	t.Cleanup(vx.Close)
	base := func(typ string, keys []string, cfg map[string]any) map[string]any {
		return map[string]any{"type": typ, "name": "c-" + typ, "keys": keys, "models": []string{"m"}, "config": cfg}
	}
	badPEM := strings.Replace(vx.Key, `-----BEGIN PRIVATE KEY-----\n`, `-----BEGIN PRIVATE KEY-----\nAAAA`, 1)
	cases := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"vertex without a region", base("vertex", []string{vx.Key}, map[string]any{"vertex": map[string]any{"project": "my-project"}}), "config.vertex.region"},
		{"vertex key not JSON", base("vertex", []string{"not json"}, map[string]any{"vertex": map[string]any{"region": "us-central1"}}), "keys"},
		{"vertex key of another type", base("vertex", []string{`{"type":"authorized_user"}`}, map[string]any{"vertex": map[string]any{"region": "us-central1"}}), "keys"},
		{"vertex key with a broken private key", base("vertex", []string{badPEM}, map[string]any{"vertex": map[string]any{"region": "us-central1"}}), "keys"},
		{"vertex bad publisher", base("vertex", []string{vx.Key}, map[string]any{"vertex": map[string]any{"region": "us-central1", "publishers": map[string]string{"m": "meta"}}}), "config.vertex.publishers"},
		{"bedrock without a region", base("bedrock", []string{"AKID:secret"}, nil), "config.bedrock.region"},
		{"bedrock region malformed", base("bedrock", []string{"AKID:secret"}, map[string]any{"bedrock": map[string]any{"region": "mars"}}), "config.bedrock.region"},
		{"bedrock key without secret", base("bedrock", []string{"AKIDONLY"}, map[string]any{"bedrock": map[string]any{"region": "us-east-1"}}), "keys"},
		{"azure without api_version", map[string]any{"type": "azure", "name": "a", "base_url": "https://r.openai.azure.com", "keys": []string{"k"}, "models": []string{"m"}}, "config.azure.api_version"},
		{"unknown preset", base("openai-compatible", []string{"k"}, map[string]any{"preset": "nope"}), "config.preset"},
		{"openai without base_url", base("openai", []string{"k"}, nil), "base_url"},
	}
	for _, c := range cases {
		r := w.root.Do("POST", "/api/admin/channels", c.body)
		if r.Status != http.StatusBadRequest || gjson.GetBytes(r.Body, "error.field").String() != c.field &&
			!strings.Contains(gjson.GetBytes(r.Body, "error.message").String(), c.field) {
			t.Errorf("%s: %d %s, want 400 naming %s", c.name, r.Status, r.Body, c.field)
		}
	}
}

func TestCloudChannels_SecretsMaskedDefaultsFilled(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	vx := relaytest.NewVertex()
	t.Cleanup(vx.Close)
	get := func(id int64) map[string]any {
		r := w.root.Do("GET", fmt.Sprintf("/api/admin/channels/%d", id), nil)
		var v map[string]any
		_ = json.Unmarshal(r.Body, &v)
		if strings.Contains(string(r.Body), "PRIVATE KEY") || strings.Contains(string(r.Body), "wJalrXUtnFEMI") {
			t.Fatalf("a secret came back in clear: %s", r.Body)
		}
		return v
	}
	id := w.postChannel(map[string]any{"type": "vertex", "name": "vx", "keys": []string{vx.Key}, "models": []string{"gemini-2.5-pro"},
		"config": map[string]any{"vertex": map[string]any{"region": "europe-west4"}}})
	v := get(id)
	if v["base_url"] != "https://europe-west4-aiplatform.googleapis.com" || gjson.Get(mustJSON(v), "config.vertex.project").String() != "tollgate-test" {
		t.Fatalf("vertex defaults: %v", v)
	}
	id = w.postChannel(map[string]any{"type": "bedrock", "name": "br", "keys": []string{"AKIDTOLLGATE:wJalrXUtnFEMI/K7MDENG/bPxRfiCYSECRET"},
		"models": []string{"claude-sonnet-4-5"}, "config": map[string]any{"bedrock": map[string]any{"region": "us-west-2"}}})
	if v = get(id); v["base_url"] != "https://bedrock-runtime.us-west-2.amazonaws.com" {
		t.Fatalf("bedrock default base URL: %v", v["base_url"])
	}
	// Editing without keys keeps the stored credentials (still checked against the new settings).
	r := w.root.Do("PATCH", fmt.Sprintf("/api/admin/channels/%d", id), map[string]any{"config": map[string]any{"bedrock": map[string]any{"region": "eu-central-1"}}, "base_url": ""})
	if r.Status != http.StatusOK || gjson.GetBytes(r.Body, "base_url").String() != "https://bedrock-runtime.eu-central-1.amazonaws.com" {
		t.Fatalf("update: %d %s", r.Status, r.Body)
	}
	id = w.postChannel(map[string]any{"type": "openai-compatible", "name": "ds", "keys": []string{"sk-ds-0000000000001"}, "models": []string{"deepseek-chat"},
		"config": map[string]any{"preset": "deepseek"}})
	if v = get(id); v["base_url"] != "https://api.deepseek.com" || gjson.Get(mustJSON(v), "config.preset").String() != "deepseek" {
		t.Fatalf("preset defaults: %v", v)
	}
	// Settings of another type are not kept.
	id = w.postChannel(map[string]any{"type": "openai", "name": "oa", "base_url": "https://api.openai.com", "keys": []string{"sk-0000000000001"},
		"models": []string{"gpt-4o"}, "config": map[string]any{"bedrock": map[string]any{"region": "us-east-1"}}})
	if c := gjson.Get(mustJSON(get(id)), "config").Raw; c != "{}" {
		t.Fatalf("openai channel kept config %s", c)
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestCloudChannels_TestFetchModelsAndCountTokens(t *testing.T) {
	t.Parallel()
	az := relaytest.NewAzure()
	t.Cleanup(az.Close)
	vx := relaytest.NewVertex()
	t.Cleanup(vx.Close)
	br := relaytest.NewBedrock("us-east-1")
	t.Cleanup(br.Close)
	w := cloudWorld(t, "gpt-4o-mini", "gemini-2.5-flash", "claude-sonnet-4-5", "claude-haiku")
	azID := w.postChannel(cloudSpec{chanSpec: chanSpec{Type: "azure", Name: "az", Keys: []string{"azure-key-0001"}, Models: []string{"gpt-4o-mini"}},
		BaseURL: az.URL, Config: map[string]any{"azure": map[string]any{"api_version": "2024-10-21"}}})
	vxID := w.postChannel(cloudSpec{chanSpec: chanSpec{Type: "vertex", Name: "vx", Keys: []string{vx.Key}, Models: []string{"gemini-2.5-flash", "claude-sonnet-4-5"}},
		BaseURL: vx.URL, Config: map[string]any{"vertex": map[string]any{"region": "us-east5"}}})
	brID := w.postChannel(cloudSpec{chanSpec: chanSpec{Type: "bedrock", Name: "br", Keys: []string{br.Key()}, Models: []string{"claude-haiku"}},
		BaseURL: br.URL, Config: map[string]any{"bedrock": map[string]any{"region": "us-east-1"}}})

	for _, c := range []struct {
		id    int64
		model string
	}{{azID, "gpt-4o-mini"}, {vxID, "gemini-2.5-flash"}, {vxID, "claude-sonnet-4-5"}, {brID, "claude-haiku"}} {
		r := w.root.Do("POST", fmt.Sprintf("/api/admin/channels/%d/test", c.id), map[string]any{"model": c.model})
		if r.Status != http.StatusOK || !gjson.GetBytes(r.Body, "ok").Bool() {
			t.Fatalf("test channel %d %s: %d %s", c.id, c.model, r.Status, r.Body)
		}
	}
	if br.Verified.Load() != 1 || br.Refused.Load() != 0 {
		t.Fatalf("bedrock test call signature: verified %d refused %d", br.Verified.Load(), br.Refused.Load())
	}

	r := w.root.Do("POST", fmt.Sprintf("/api/admin/channels/%d/fetch-models", azID), nil)
	seen := az.Seen()
	if r.Status != http.StatusOK || len(gjson.GetBytes(r.Body, "models").Array()) == 0 || seen[len(seen)-1].Path != "/openai/models" ||
		seen[len(seen)-1].Query != "api-version=2024-10-21" {
		t.Fatalf("azure fetch models: %d %s", r.Status, r.Body)
	}
	for _, id := range []int64{vxID, brID} {
		wantCode(t, w.root.Do("POST", fmt.Sprintf("/api/admin/channels/%d/fetch-models", id), nil), http.StatusUnprocessableEntity, "model_list_unsupported")
	}

	// count_tokens: Bedrock and Claude on Vertex have no counting endpoint here, so the relay counts locally;
	// Gemini on Vertex counts upstream (countTokens).
	for _, m := range []string{"claude-haiku", "claude-sonnet-4-5"} {
		before := len(br.Seen()) + len(vx.Seen())
		a := w.call("POST", "/v1/messages/count_tokens", w.key, map[string]any{"model": m, "messages": []any{map[string]any{"role": "user", "content": "hello there"}}})
		if a.status != http.StatusOK || gjson.GetBytes(a.body, "input_tokens").Int() <= 0 || len(br.Seen())+len(vx.Seen()) != before {
			t.Fatalf("count_tokens %s: %d %s (upstream calls %d → %d)", m, a.status, a.body, before, len(br.Seen())+len(vx.Seen()))
		}
	}
	a := w.call("POST", "/v1beta/models/gemini-2.5-flash:countTokens", "", map[string]any{"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "hello"}}}}},
		"x-goog-api-key", w.key, "Authorization", "")
	seen2 := vx.Seen()
	if a.status != http.StatusOK || !strings.HasSuffix(seen2[len(seen2)-1].Path, "/publishers/google/models/gemini-2.5-flash:countTokens") {
		t.Fatalf("gemini countTokens on vertex: %d %s last %s", a.status, a.body, seen2[len(seen2)-1].Path)
	}
}

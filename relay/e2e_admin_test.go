package relay_test

// The admin and console API around the relay: channels (validation, masked keys, fetch-models), pricing,
// and usage logs (filters, cursor pagination, privacy, stats).

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"tollgate/app/apptest"
	"tollgate/relay/relaytest"
)

// wantField checks a console 400 validation_failed naming field.
func wantField(t *testing.T, r *apptest.Resp, field string) {
	t.Helper()
	var e struct {
		Error struct{ Code, Message, Field string } `json:"error"`
	}
	r.JSON(t, &e)
	if r.Status != http.StatusBadRequest || e.Error.Code != "validation_failed" || e.Error.Field != field || e.Error.Message == "" {
		t.Fatalf("want 400 validation_failed on %q, got %d %s", field, r.Status, r.Body)
	}
}

// noClearKeys fails if any of the clear upstream keys appears in an admin answer.
func noClearKeys(t *testing.T, what string, body []byte, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if strings.Contains(string(body), k) {
			t.Fatalf("%s shows an upstream key in clear: %s", what, body)
		}
	}
}

type channelView struct {
	ID      int64    `json:"id"`
	Type    string   `json:"type"`
	Name    string   `json:"name"`
	BaseURL string   `json:"base_url"`
	Keys    []string `json:"keys"`
	Models  []string `json:"models"`
	Status  string   `json:"status"`
}

func TestAdmin_ChannelsValidateAndNeverShowKeys(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000)
	// Two keys with the same mask (same first 7 and last 4 characters), as OpenAI project keys often have.
	k1, k2, k3 := "sk-proj-AAAAAAAAAAAA-tail", "sk-proj-BBBBBBBBBBBB-tail", "sk-proj-CCCCCCCCCCCC-last"
	up := fake(t)
	good := openaiChannel(up, k1, k2)
	good.Models = []string{"gpt-4o-mini", "custom-model"}

	bad := map[string]map[string]any{
		"type":     {"type": "gemini-ish", "name": "x", "base_url": up.URL, "keys": []string{"k-123456789012"}},
		"base_url": {"type": "openai", "name": "x", "base_url": "ftp://example.com", "keys": []string{"k-123456789012"}},
		"keys":     {"type": "openai", "name": "x", "base_url": up.URL, "keys": []string{}},
		"name":     {"type": "openai", "base_url": up.URL, "keys": []string{"k-123456789012"}},
	}
	for field, body := range bad {
		wantField(t, s.root.Do("POST", "/api/admin/channels", body), field)
	}
	wantField(t, s.root.Do("POST", "/api/admin/channels", map[string]any{"type": "openai", "name": "x", "base_url": "not a url", "keys": []string{"k"}}), "base_url")
	wantField(t, s.root.Do("POST", "/api/admin/channels", map[string]any{"type": "openai", "name": "x", "base_url": up.URL, "keys": []string{"  ", ""}}), "keys")
	if r := s.alice.c.Do("POST", "/api/admin/channels", good); r.Status != http.StatusForbidden {
		t.Fatalf("a user created a channel: %d %s", r.Status, r.Body)
	}

	r := s.root.Do("POST", "/api/admin/channels", good)
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	noClearKeys(t, "create", r.Body, k1, k2)
	var ch channelView
	r.JSON(t, &ch)
	if len(ch.Keys) != 2 || !strings.Contains(ch.Keys[0], "****") || ch.Type != "openai" || ch.Status != "enabled" {
		t.Fatalf("created channel = %+v", ch)
	}
	path := fmt.Sprintf("/api/admin/channels/%d", ch.ID)

	r = s.root.Do("GET", "/api/admin/channels?type=openai&model=custom-model", nil)
	noClearKeys(t, "list", r.Body, k1, k2)
	var list struct {
		Items []channelView `json:"items"`
		Total int64         `json:"total"`
	}
	r.JSON(t, &list)
	if list.Total != 1 || len(list.Items) != 1 || list.Items[0].ID != ch.ID {
		t.Fatalf("filtered list = %s", r.Body)
	}
	if r = s.root.Do("GET", "/api/admin/channels?type=anthropic", nil); !strings.Contains(string(r.Body), `"total":1`) {
		t.Fatalf("anthropic list = %s", r.Body)
	}
	r = s.root.Do("GET", path, nil)
	noClearKeys(t, "get", r.Body, k1, k2)

	// The masked keys sent back keep the stored keys; a new clear key is added; a masked key that matches
	// nothing is refused.
	r = s.root.Do("PATCH", path, map[string]any{"name": "renamed", "keys": append(slices.Clone(ch.Keys), k3)})
	if r.Status != http.StatusOK {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	noClearKeys(t, "patch", r.Body, k1, k2, k3)
	if got := s.node.App.Channels.Snapshot().ByID[ch.ID].Keys; !slices.Equal(got, []string{k1, k2, k3}) {
		t.Fatalf("stored keys after a masked round trip = %q, want %q", got, []string{k1, k2, k3})
	}
	wantField(t, s.root.Do("PATCH", path, map[string]any{"keys": []string{"sk-proj****zzzz"}}), "keys")
	wantField(t, s.root.Do("PATCH", path, map[string]any{"keys": []string{}}), "keys")
	wantField(t, s.root.Do("PATCH", path, map[string]any{"status": "sleeping"}), "status")
	wantField(t, s.root.Do("PATCH", path, map[string]any{"base_url": "localhost:80"}), "base_url")

	// The relay uses the stored keys.
	a := s.call("POST", "/v1/chat/completions", s.key.Key, chatBody("custom-model", false))
	if a.status != http.StatusNotFound { // no price for custom-model: refused before any upstream
		t.Fatalf("unpriced model: %d %s", a.status, a.body)
	}
	s.prices(append(slices.Clone(defaultPrices), price{Model: "custom-model", Input: "1", Output: "1"})...)
	waitFor(t, "custom-model to be served", func() bool {
		return s.call("POST", "/v1/chat/completions", s.key.Key, chatBody("custom-model", false)).status == http.StatusOK
	})
	if last, _ := up.Last(); !slices.Contains([]string{k1, k2, k3}, last.Key) {
		t.Fatalf("upstream got key %q", last.Key)
	}

	// Disabled: a known model with no enabled channel is 503 no_channel; enabled again: served.
	if r = s.root.Do("PATCH", path, map[string]any{"status": "disabled"}); r.Status != http.StatusOK {
		t.Fatalf("disable: %d %s", r.Status, r.Body)
	}
	openAIErr(t, s.call("POST", "/v1/chat/completions", s.key.Key, chatBody("custom-model", false)), http.StatusServiceUnavailable, "no_channel")
	if r = s.root.Do("PATCH", path, map[string]any{"status": "enabled"}); r.Status != http.StatusOK {
		t.Fatalf("enable: %d %s", r.Status, r.Body)
	}
	if a = s.call("POST", "/v1/chat/completions", s.key.Key, chatBody("custom-model", false)); a.status != http.StatusOK {
		t.Fatalf("re-enabled channel: %d %s", a.status, a.body)
	}

	noClearKeys(t, "audit log", s.root.Do("GET", "/api/admin/audit?size=100", nil).Body, k1, k2, k3)
	if r = s.root.Do("GET", path+"/health", nil); r.Status != http.StatusOK {
		t.Fatalf("channel health: %d %s", r.Status, r.Body)
	}
	noClearKeys(t, "channel health", r.Body, k1, k2, k3)
	if r = s.root.Do("DELETE", path, nil); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	for _, m := range []string{"GET", "DELETE"} {
		if r = s.root.Do(m, path, nil); r.Status != http.StatusNotFound || !strings.Contains(string(r.Body), "channel_not_found") {
			t.Fatalf("%s deleted channel: %d %s", m, r.Status, r.Body)
		}
	}
}

func TestAdmin_FetchModelsReadsTheUpstreamList(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000)
	s.oa.Set(relaytest.WithModels("gpt-b", "gpt-a"))
	r := s.root.Do("POST", fmt.Sprintf("/api/admin/channels/%d/fetch-models", s.oaID), nil)
	if r.Status != http.StatusOK || string(r.Body) != `{"models":["gpt-a","gpt-b"]}` {
		t.Fatalf("fetch-models: %d %s", r.Status, r.Body)
	}
	last, _ := s.oa.Last()
	if last.Method != "GET" || last.Path != "/v1/models" || last.Key != "sk-upstream-openai-0001" {
		t.Fatalf("upstream saw %s %s with key %q", last.Method, last.Path, last.Key)
	}
	r = s.root.Do("POST", fmt.Sprintf("/api/admin/channels/%d/fetch-models", s.anID), nil)
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), "claude-sonnet-4-5") {
		t.Fatalf("anthropic fetch-models: %d %s", r.Status, r.Body)
	}
	if last, _ = s.an.Last(); last.Header.Get("Anthropic-Version") == "" || last.Key != "sk-ant-upstream-0001" {
		t.Fatalf("anthropic models request headers: %v", last.Header)
	}
	s.oa.Set(relaytest.Fail(relaytest.InvalidKey()))
	r = s.root.Do("POST", fmt.Sprintf("/api/admin/channels/%d/fetch-models", s.oaID), nil)
	if r.Status != http.StatusBadGateway || !strings.Contains(string(r.Body), "upstream_error") {
		t.Fatalf("fetch-models from a refusing upstream: %d %s", r.Status, r.Body)
	}
	if r = s.root.Do("POST", "/api/admin/channels/999999/fetch-models", nil); r.Status != http.StatusNotFound {
		t.Fatalf("fetch-models of no channel: %d %s", r.Status, r.Body)
	}
}

func TestAdmin_PricingValidatesAndAppliesTheCallersGroupRatio(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000)
	for field, row := range map[string]price{
		"input":    {Model: "m", Input: "abc"},
		"output":   {Model: "m", Output: "-1"},
		"per_call": {Model: "m", PerCall: "1,5"},
		"model":    {Model: "", Input: "1"},
	} {
		wantField(t, s.root.Do("PUT", "/api/admin/pricing", []price{row}), field)
	}
	wantField(t, s.root.Do("PUT", "/api/admin/pricing", []price{{Model: "m", Input: "1"}, {Model: "m", Input: "2"}}), "model")
	if r := s.alice.c.Do("PUT", "/api/admin/pricing", defaultPrices); r.Status != http.StatusForbidden {
		t.Fatalf("a user replaced prices: %d", r.Status)
	}
	var rows []price
	s.root.Do("GET", "/api/admin/pricing", nil).JSON(t, &rows)
	if len(rows) != len(defaultPrices) {
		t.Fatalf("prices after refused writes = %+v", rows)
	}

	type pub struct {
		price
		GroupRatio string `json:"group_ratio"`
	}
	find := func(c *apptest.Client) pub {
		var out []pub
		r := c.Do("GET", "/api/pricing", nil)
		r.JSON(t, &out)
		for _, p := range out {
			if p.Model == "gpt-4o-mini" {
				return p
			}
		}
		t.Fatalf("gpt-4o-mini not in %s", r.Body)
		return pub{}
	}
	if p := find(s.node.Anon(t)); p.Input != "1" || p.Output != "2" || p.GroupRatio != "1" {
		t.Fatalf("anonymous price = %+v", p)
	}
	if r := s.root.Do("POST", "/api/admin/groups", map[string]any{"name": "vip", "ratio": "1.5"}); r.Status != http.StatusCreated {
		t.Fatalf("create group: %d %s", r.Status, r.Body)
	}
	if r := s.root.Do("PATCH", fmt.Sprintf("/api/admin/users/%d", s.alice.id), map[string]any{"group": "vip"}); r.Status != http.StatusOK {
		t.Fatalf("move to vip: %d %s", r.Status, r.Body)
	}
	if p := find(s.alice.c); p.Input != "1.5" || p.Output != "3" || p.GroupRatio != "1.5" {
		t.Fatalf("vip price = %+v", p)
	}
}

type logItem struct {
	ID        int64  `json:"id"`
	RequestID string `json:"request_id"`
	UserID    int64  `json:"user_id"`
	TokenID   int64  `json:"token_id"`
	Model     string `json:"model"`
	Cost      int64  `json:"cost"`
	Status    string `json:"status"`
}

type logPage struct {
	Items      []logItem `json:"items"`
	NextCursor int64     `json:"next_cursor"`
}

func getLogs(t *testing.T, c *apptest.Client, path string, q url.Values) logPage {
	t.Helper()
	r := c.Do("GET", path+"?"+q.Encode(), nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET %s?%s: %d %s", path, q.Encode(), r.Status, r.Body)
	}
	var p logPage
	r.JSON(t, &p)
	return p
}

func TestAdmin_LogsFilterPaginateStayPrivateAndSum(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000, relaytest.ForModel("gpt-4o", relaytest.Fail(relaytest.ServerError())))
	second := s.world.key(s.alice, nil)
	bob := s.world.user("bob", 1_000_000)
	bobKey := s.world.key(bob, nil)
	do := func(key, model string) {
		a := s.call("POST", "/v1/chat/completions", key, chatBody(model, false))
		s.logOf(a.reqID)
	}
	for range 3 {
		do(s.key.Key, "gpt-4o-mini")
	}
	do(second.Key, "gpt-4o-mini")
	do(second.Key, "gpt-4o") // the upstream fails: an error row
	a := s.call("POST", "/v1/messages", second.Key, messagesBody("claude-sonnet-4-5", false))
	s.logOf(a.reqID)
	do(bobKey.Key, "gpt-4o-mini")

	ids := func(p logPage) (out []string) {
		for _, it := range p.Items {
			if it.UserID != s.alice.id {
				t.Fatalf("alice sees someone else's log: %+v", it)
			}
			out = append(out, it.RequestID)
		}
		return out
	}
	all := getLogs(t, s.alice.c, "/api/logs", url.Values{})
	if len(all.Items) != 6 || all.NextCursor != 0 {
		t.Fatalf("alice's logs: %d items, next %d", len(all.Items), all.NextCursor)
	}
	for i := 1; i < len(all.Items); i++ {
		if all.Items[i].ID >= all.Items[i-1].ID {
			t.Fatalf("logs not newest first: %v", ids(all))
		}
	}
	count := func(q url.Values) int { return len(ids(getLogs(t, s.alice.c, "/api/logs", q))) }
	now := time.Now().UTC()
	for _, c := range []struct {
		q    url.Values
		want int
	}{
		{url.Values{"model": {"gpt-4o-mini"}}, 4},
		{url.Values{"model": {"claude-sonnet-4-5"}}, 1},
		{url.Values{"token_id": {fmt.Sprint(second.ID)}}, 3},
		{url.Values{"status": {"error"}}, 1},
		{url.Values{"status": {"success"}, "token_id": {fmt.Sprint(s.key.ID)}}, 3},
		{url.Values{"from": {now.Add(-time.Hour).Format(time.RFC3339)}, "to": {now.Add(time.Hour).Format(time.RFC3339)}}, 6},
		{url.Values{"from": {now.Add(time.Hour).Format(time.RFC3339)}}, 0},
		{url.Values{"to": {now.Add(-time.Hour).Format(time.RFC3339)}}, 0},
		{url.Values{"user_id": {fmt.Sprint(bob.id)}}, 6}, // a user cannot widen to someone else
		{url.Values{"token_id": {fmt.Sprint(bobKey.ID)}}, 0},
	} {
		if got := count(c.q); got != c.want {
			t.Fatalf("logs?%s = %d rows, want %d", c.q.Encode(), got, c.want)
		}
	}
	for _, q := range []string{"status=bogus", "from=yesterday", "token_id=x", "cursor=abc"} {
		if r := s.alice.c.Do("GET", "/api/logs?"+q, nil); r.Status != http.StatusBadRequest {
			t.Fatalf("logs?%s: %d %s", q, r.Status, r.Body)
		}
	}

	// Cursor pagination walks every row once, newest first.
	var walked []string
	q := url.Values{"limit": {"2"}}
	for pages := 0; ; pages++ {
		p := getLogs(t, s.alice.c, "/api/logs", q)
		walked = append(walked, ids(p)...)
		if p.NextCursor == 0 || pages > 10 {
			break
		}
		q.Set("cursor", fmt.Sprint(p.NextCursor))
	}
	if !slices.Equal(walked, ids(all)) {
		t.Fatalf("paged walk %v, want %v", walked, ids(all))
	}

	// Bob sees only his row; the admin routes are closed to him and open to root.
	bp := getLogs(t, bob.c, "/api/logs", url.Values{})
	if len(bp.Items) != 1 || bp.Items[0].UserID != bob.id {
		t.Fatalf("bob's logs = %+v", bp.Items)
	}
	if r := bob.c.Do("GET", "/api/admin/logs", nil); r.Status != http.StatusForbidden {
		t.Fatalf("bob on admin logs: %d", r.Status)
	}
	if p := getLogs(t, s.root, "/api/admin/logs", url.Values{"user_id": {fmt.Sprint(bob.id)}}); len(p.Items) != 1 {
		t.Fatalf("admin filter by user: %+v", p.Items)
	}
	if p := getLogs(t, s.root, "/api/admin/logs", url.Values{"channel_id": {fmt.Sprint(s.anID)}}); len(p.Items) != 1 || p.Items[0].Model != "claude-sonnet-4-5" {
		t.Fatalf("admin filter by channel: %+v", p.Items)
	}

	// Stats: per day and per model, summed from the same rows.
	var st struct {
		Totals struct{ Requests, Cost, PromptTokens, CompletionTokens int64 } `json:"totals"`
		Days   []struct {
			Date           string `json:"date"`
			Requests, Cost int64
			PromptTokens   int64 `json:"prompt_tokens"`
		} `json:"days"`
		Models []struct {
			Model          string `json:"model"`
			Requests, Cost int64
		} `json:"models"`
	}
	r := s.alice.c.Do("GET", "/api/logs/stats", nil)
	r.JSON(t, &st)
	wantCost := int64(4*50 + 330)
	if st.Totals.Requests != 6 || st.Totals.Cost != wantCost {
		t.Fatalf("stats totals = %+v, want 6 requests costing %d (%s)", st.Totals, wantCost, r.Body)
	}
	if len(st.Days) != 1 || st.Days[0].Date != now.Format("2006-01-02") || st.Days[0].Requests != 6 || st.Days[0].Cost != wantCost {
		t.Fatalf("stats days = %+v (%s)", st.Days, r.Body)
	}
	perModel := map[string][2]int64{}
	for _, m := range st.Models {
		perModel[m.Model] = [2]int64{m.Requests, m.Cost}
	}
	want := map[string][2]int64{"gpt-4o-mini": {4, 200}, "gpt-4o": {1, 0}, "claude-sonnet-4-5": {1, 330}}
	if fmt.Sprint(perModel) != fmt.Sprint(want) {
		t.Fatalf("stats per model = %v, want %v", perModel, want)
	}
	var adm struct {
		Totals struct{ Requests int64 } `json:"totals"`
	}
	s.root.Do("GET", "/api/admin/logs/stats", nil).JSON(t, &adm)
	if adm.Totals.Requests != 7 {
		t.Fatalf("admin stats requests = %d, want 7", adm.Totals.Requests)
	}
}

package relay_test

// The channel knobs (model_mapping, header_override, body_override, status_code_mapping), /v1/completions and
// count_tokens, each through a real node into a recording fake upstream, with the books checked after.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"tollgate/model"
	"tollgate/relay/relaytest"
)

// knobChannel creates spec's channel with extra admin-API fields (header_override, body_override, …).
func (w *world) knobChannel(spec chanSpec, extra map[string]any) int64 {
	w.t.Helper()
	b, _ := json.Marshal(spec)
	in := map[string]any{}
	_ = json.Unmarshal(b, &in)
	for k, v := range extra {
		in[k] = v
	}
	return w.postChannel(in)
}

// knobWorld is a node with prices, a user with balance and a limited key.
type knobWorld struct {
	*world
	p     *person
	key   apiKey
	start int64
}

const knobBalance, knobKeyQuota = 1_000_000, 100_000

func newKnobWorld(t *testing.T) *knobWorld {
	w := newWorld(t)
	w.prices()
	p := w.user("kim", knobBalance)
	return &knobWorld{world: w, p: p, key: w.key(p, map[string]any{"remain_quota": knobKeyQuota}), start: knobBalance}
}

// checkBooks waits for n relayed rows and checks Σ cost = balance and key moved, live and in SQL.
func (k *knobWorld) checkBooks(n int) []model.UsageLog {
	k.t.Helper()
	rows := k.waitLogs(n)
	k.books(rows, k.p.id, k.start, map[int64]int64{k.key.ID: knobKeyQuota})
	return rows
}

// Costs at the default prices for the fake's 10 prompt + 20 completion tokens.
const costMini, costSonnet = 10*1 + 20*2, 10*3 + 20*15

func TestModelMapping_UpstreamSeesMappedModel_LogAndPriceKeepAskedModel(t *testing.T) {
	k := newKnobWorld(t)
	oa, an := fake(t), fake(t)
	spec := openaiChannel(oa)
	spec.Models, spec.ModelMapping = []string{"gpt-4o-mini"}, map[string]string{"gpt-4o-mini": "gpt-4o"}
	k.channel(spec)
	aspec := anthropicChannel(an)
	aspec.ModelMapping = map[string]string{"claude-sonnet-4-5": "claude-sonnet-4-5-20250929"}
	k.channel(aspec)

	cases := []struct {
		name, path, asked, upstream string
		body                        map[string]any
		up                          *relaytest.Upstream
		cost                        int64
	}{
		{"openai", "/v1/chat/completions", "gpt-4o-mini", "gpt-4o", chatBody("gpt-4o-mini", false), oa, costMini},
		{"openai stream", "/v1/chat/completions", "gpt-4o-mini", "gpt-4o", chatBody("gpt-4o-mini", true), oa, costMini},
		{"anthropic", "/v1/messages", "claude-sonnet-4-5", "claude-sonnet-4-5-20250929", messagesBody("claude-sonnet-4-5", false), an, costSonnet},
		{"anthropic stream", "/v1/messages", "claude-sonnet-4-5", "claude-sonnet-4-5-20250929", messagesBody("claude-sonnet-4-5", true), an, costSonnet},
	}
	for i, c := range cases {
		a := k.call("POST", c.path, k.key.Key, c.body)
		if a.status != http.StatusOK {
			t.Fatalf("%s: %d %s", c.name, a.status, a.body)
		}
		got, ok := c.up.Last()
		if !ok || got.Model != c.upstream {
			t.Fatalf("%s: upstream saw model %q, want the mapped %q", c.name, got.Model, c.upstream)
		}
		l := k.logOf(a.reqID)
		if l.Model != c.asked || l.UpstreamModel != c.upstream || l.Cost != c.cost {
			t.Fatalf("%s: log model %q upstream %q cost %d, want %q %q %d (the asked model's price)",
				c.name, l.Model, l.UpstreamModel, l.Cost, c.asked, c.upstream, c.cost)
		}
		k.checkBooks(i + 1)
	}
}

func TestHeaderOverride_UpstreamSeesHeaderOverClientHeader(t *testing.T) {
	k := newKnobWorld(t)
	oa, an := fake(t), fake(t)
	const orgSecret = "org-credential-0123456789abcdef"
	k.knobChannel(openaiChannel(oa), map[string]any{"header_override": map[string]string{
		"X-Org-Credential": orgSecret, "OpenAI-Beta": "assistants=v2"}})
	k.knobChannel(anthropicChannel(an), map[string]any{"header_override": map[string]string{
		"anthropic-beta": "channel-beta-2025", "X-Org-Credential": orgSecret}})

	cases := []struct {
		name, path, clientHeader, overridden, want string
		body                                       map[string]any
		up                                         *relaytest.Upstream
	}{
		{"openai", "/v1/chat/completions", "OpenAI-Beta", "OpenAI-Beta", "assistants=v2", chatBody("gpt-4o-mini", false), oa},
		{"openai stream", "/v1/chat/completions", "OpenAI-Beta", "OpenAI-Beta", "assistants=v2", chatBody("gpt-4o-mini", true), oa},
		{"anthropic", "/v1/messages", "anthropic-beta", "anthropic-beta", "channel-beta-2025", messagesBody("claude-sonnet-4-5", false), an},
		{"anthropic stream", "/v1/messages", "anthropic-beta", "anthropic-beta", "channel-beta-2025", messagesBody("claude-sonnet-4-5", true), an},
	}
	for i, c := range cases {
		a := k.call("POST", c.path, k.key.Key, c.body, c.clientHeader, "client-value", "X-Org-Credential", "from-client")
		if a.status != http.StatusOK {
			t.Fatalf("%s: %d %s", c.name, a.status, a.body)
		}
		got, _ := c.up.Last()
		if v := got.Header.Values("X-Org-Credential"); len(v) != 1 || v[0] != orgSecret {
			t.Fatalf("%s: upstream X-Org-Credential = %q, want the channel's value", c.name, v)
		}
		if v := got.Header.Values(c.overridden); len(v) != 1 || v[0] != c.want {
			t.Fatalf("%s: upstream %s = %q, want only the override %q over the client's", c.name, c.overridden, v, c.want)
		}
		k.checkBooks(i + 1)
	}
}

func TestBodyOverride_SetsAndDeletesPaths(t *testing.T) {
	k := newKnobWorld(t)
	oa, an := fake(t), fake(t)
	k.knobChannel(openaiChannel(oa), map[string]any{"body_override": map[string]any{
		"set": map[string]any{"temperature": 0.25, "metadata.team": "blue"}, "delete": []string{"user", "seed"}}})
	k.knobChannel(anthropicChannel(an), map[string]any{"body_override": map[string]any{
		"set": map[string]any{"top_k": 7}, "delete": []string{"metadata"}}})

	cases := []struct {
		name, path string
		body       map[string]any
		up         *relaytest.Upstream
		set        map[string]string // gjson path → raw JSON the upstream must see
		gone       []string
	}{
		{"openai", "/v1/chat/completions", chatBody("gpt-4o-mini", false, "user", "u-1", "seed", 3, "temperature", 1.5), oa,
			map[string]string{"temperature": "0.25", "metadata.team": `"blue"`, "max_tokens": "50"}, []string{"user", "seed"}},
		{"openai stream", "/v1/chat/completions", chatBody("gpt-4o-mini", true, "user", "u-1"), oa,
			map[string]string{"temperature": "0.25", "stream": "true"}, []string{"user"}},
		{"anthropic", "/v1/messages", messagesBody("claude-sonnet-4-5", false, "metadata", map[string]any{"user_id": "u-1"}), an,
			map[string]string{"top_k": "7", "max_tokens": "50"}, []string{"metadata"}},
		{"anthropic stream", "/v1/messages", messagesBody("claude-sonnet-4-5", true, "metadata", map[string]any{"user_id": "u-1"}, "top_k", 1), an,
			map[string]string{"top_k": "7"}, []string{"metadata"}},
	}
	for i, c := range cases {
		a := k.call("POST", c.path, k.key.Key, c.body)
		if a.status != http.StatusOK {
			t.Fatalf("%s: %d %s", c.name, a.status, a.body)
		}
		got, _ := c.up.Last()
		for path, raw := range c.set {
			if v := got.Get(path); v.Raw != raw {
				t.Fatalf("%s: upstream body %s = %s, want %s (body %s)", c.name, path, v.Raw, raw, got.Body)
			}
		}
		for _, path := range c.gone {
			if got.Get(path).Exists() {
				t.Fatalf("%s: upstream body still has %s: %s", c.name, path, got.Body)
			}
		}
		k.checkBooks(i + 1)
	}
}

func TestStatusCodeMapping_ClientSeesMappedStatus(t *testing.T) {
	k := newKnobWorld(t)
	oa, an := fake(t, relaytest.Fail(relaytest.BadRequest())), fake(t, relaytest.Fail(relaytest.BadRequest()))
	mapping := map[string]any{"status_code_mapping": map[string]int{"400": 422}}
	oaID := k.knobChannel(openaiChannel(oa), mapping)
	anID := k.knobChannel(anthropicChannel(an), mapping)

	a := k.call("POST", "/v1/chat/completions", k.key.Key, chatBody("gpt-4o-mini", false))
	if a.status != http.StatusUnprocessableEntity {
		t.Fatalf("openai: status %d, want the mapped 422 (body %s)", a.status, a.body)
	}
	b := k.call("POST", "/v1/messages", k.key.Key, messagesBody("claude-sonnet-4-5", false))
	if b.status != http.StatusUnprocessableEntity {
		t.Fatalf("anthropic: status %d, want the mapped 422 (body %s)", b.status, b.body)
	}
	for _, c := range []struct {
		id  string
		ch  int64
		cnt int
		up  *relaytest.Upstream
	}{{a.reqID, oaID, 1, oa}, {b.reqID, anID, 1, an}} {
		l := k.logOf(c.id)
		if l.HTTPStatus != http.StatusUnprocessableEntity || l.Cost != 0 || l.ChannelID != c.ch {
			t.Fatalf("log %s: http %d cost %d channel %d", c.id, l.HTTPStatus, l.Cost, l.ChannelID)
		}
		if c.up.Count() != c.cnt {
			t.Fatalf("upstream calls = %d, want %d (a client error is not retried)", c.up.Count(), c.cnt)
		}
	}
	k.checkBooks(2)

	// Statuses the mapping does not name pass unchanged.
	oa.Set(relaytest.Fail(relaytest.Status(http.StatusConflict)))
	if c := k.call("POST", "/v1/chat/completions", k.key.Key, chatBody("gpt-4o-mini", false)); c.status != http.StatusConflict {
		t.Fatalf("unmapped 409 reached the client as %d", c.status)
	}
	k.checkBooks(3)
}

func TestCompletions_PlainAndStream_Billed(t *testing.T) {
	k := newKnobWorld(t)
	oa := fake(t)
	k.channel(openaiChannel(oa))
	body := map[string]any{"model": "gpt-4o-mini", "prompt": "Say hi", "max_tokens": 50}

	a := k.call("POST", "/v1/completions", k.key.Key, body)
	if a.status != http.StatusOK || !strings.Contains(string(a.body), `"text_completion"`) {
		t.Fatalf("completions: %d %s", a.status, a.body)
	}
	if got, _ := oa.Last(); got.Path != "/v1/completions" || got.Get("prompt").String() != "Say hi" {
		t.Fatalf("upstream saw %s %s", got.Path, got.Body)
	}
	if l := k.logOf(a.reqID); l.Cost != costMini || l.Endpoint == "" || l.Stream || l.PromptTokens != 10 || l.CompletionTokens != 20 {
		t.Fatalf("completions log: %+v", l)
	}

	stream := map[string]any{"model": "gpt-4o-mini", "prompt": "Say hi", "max_tokens": 50, "stream": true}
	res, evs, id := k.stream("/v1/completions", k.key.Key, stream)
	if res.StatusCode != http.StatusOK || len(evs) < 2 || evs[len(evs)-1].data != "[DONE]" {
		t.Fatalf("completions stream: %d, %d events", res.StatusCode, len(evs))
	}
	if got, _ := oa.Last(); !got.Stream || !got.Get("stream_options.include_usage").Bool() {
		t.Fatalf("upstream stream request lacks include_usage: %s", got.Body)
	}
	if l := k.logOf(id); l.Cost != costMini || !l.Stream || l.UsageEstimated {
		t.Fatalf("completions stream log: cost %d stream %v estimated %v", l.Cost, l.Stream, l.UsageEstimated)
	}
	k.checkBooks(2)
}

func TestCountTokens_ThroughRelay_AnsweredAndFree(t *testing.T) {
	w := newWorld(t)
	w.prices()
	an := fake(t, relaytest.WithTokens(1234, 0))
	w.channel(anthropicChannel(an))
	// A user with nothing: any hold would be refused (402), so a 200 proves count_tokens holds nothing.
	broke := w.user("broke", 0)
	unlimited := w.key(broke, nil)
	rich := w.user("rich", 5000)
	key := w.key(rich, map[string]any{"remain_quota": 1000})

	body := map[string]any{"model": "claude-sonnet-4-5", "messages": []any{map[string]any{"role": "user", "content": "hi"}}}
	for _, c := range []struct {
		who     *person
		key     apiKey
		start   int64
		quota   int64
		limited bool
	}{{broke, unlimited, 0, 0, false}, {rich, key, 5000, 1000, true}} {
		a := w.call("POST", "/v1/messages/count_tokens", c.key.Key, body)
		if a.status != http.StatusOK {
			t.Fatalf("%s: count_tokens = %d %s", c.who.name, a.status, a.body)
		}
		if got := a.M(t)["input_tokens"]; got != float64(1234) {
			t.Fatalf("%s: input_tokens = %v, want the upstream's 1234", c.who.name, got)
		}
		got, _ := an.Last()
		if got.Path != "/v1/messages/count_tokens" || got.Model != "claude-sonnet-4-5" {
			t.Fatalf("upstream saw %s model %q", got.Path, got.Model)
		}
		w.flush()
		for _, l := range w.logs("user_id = ?", c.who.id) {
			if l.Cost != 0 {
				t.Fatalf("%s: count_tokens logged cost %d", c.who.name, l.Cost)
			}
		}
		keys := map[int64]int64{}
		if c.limited {
			keys[c.key.ID] = c.quota
		}
		w.books(w.logs(), c.who.id, c.start, keys)
	}
	if n := an.Count(); n != 2 {
		t.Fatalf("upstream count_tokens calls = %d, want 2", n)
	}
}

// ---- item 7: redirects and sealed header values ----

func TestUpstreamRedirect_NotFollowed_BadReply_NextChannel(t *testing.T) {
	k := newKnobWorld(t)
	target := fake(t) // where the redirect points: it must never see the request
	redirector := func(code int) string {
		srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			http.Redirect(rw, r, target.URL+r.URL.Path, code)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	good, goodAn := fake(t), fake(t)
	var want []string
	for i, c := range []struct {
		code       int
		spec, next chanSpec
		path       string
		body       map[string]any
	}{
		{http.StatusTemporaryRedirect, openaiChannel(good), openaiChannel(good), "/v1/chat/completions", chatBody("gpt-4o-mini", false)},
		{http.StatusPermanentRedirect, anthropicChannel(goodAn), anthropicChannel(goodAn), "/v1/messages", messagesBody("claude-sonnet-4-5", true)},
	} {
		bad := c.spec
		bad.BaseURL, bad.Priority = redirector(c.code), 10
		badID := k.channel(bad)
		goodID := k.channel(c.next)
		a := k.call("POST", c.path, k.key.Key, c.body)
		if a.status != http.StatusOK {
			t.Fatalf("%d: %d %s", c.code, a.status, a.body)
		}
		if n := target.Count(); n != 0 {
			r, _ := target.Last()
			t.Fatalf("%d: the redirect target received %d request(s) (body %s)", c.code, n, r.Body)
		}
		l := k.logOf(a.reqID)
		want = append(want, fmt.Sprintf("%d:bad_reply,%d:ok", badID, goodID))
		if got := attemptsOf(l); got != want[i] {
			t.Fatalf("%d: attempts %s, want %s", c.code, got, want[i])
		}
		k.checkBooks(i + 1)
		// Take the redirecting channel out of the next case's route.
		if r := k.root.Do("PATCH", fmt.Sprintf("/api/admin/channels/%d", badID), map[string]any{"status": "disabled"}); r.Status != http.StatusOK {
			t.Fatalf("disable: %d %s", r.Status, r.Body)
		}
	}
}

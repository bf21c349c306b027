package relay_test

// Bad input: each refusal has the right status, an error body in the caller's protocol (OpenAI on
// /v1/chat/completions, Anthropic on /v1/messages), and costs nothing: no hold left, no log row for requests
// that never reached an upstream, no upstream call. Upstream garbage and upstream 400s are not billed either.

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode"

	"tollgate/i18n"
	"tollgate/relay/relaytest"
)

// refusal is what one bad request must get, per protocol.
type refusal struct {
	status     int
	openaiCode string // error.code on /v1/chat/completions
	anthType   string // error.type on /v1/messages
}

// badCase is one bad request: key and body for each protocol (nil body: the well-formed default).
type badCase struct {
	name    string
	key     func(s *standard) string
	oaBody  any
	anBody  any
	hdr     []string
	want    refusal
	forUser func(s *standard) *person // whose balance must not move (default alice)
}

func (s *standard) expectRefused(t *testing.T, c badCase) {
	t.Helper()
	who := s.alice
	if c.forUser != nil {
		who = c.forUser(s)
	}
	before := s.liveBalance(who.id)
	calls := s.oa.Count() + s.an.Count()
	key := s.key.Key
	if c.key != nil {
		key = c.key(s)
	}
	for _, proto := range []string{"openai", "anthropic"} {
		path, body := "/v1/chat/completions", c.oaBody
		if proto == "anthropic" {
			path, body = "/v1/messages", c.anBody
		}
		if body == nil {
			body = chatBody("gpt-4o-mini", false)
			if proto == "anthropic" {
				body = messagesBody("claude-sonnet-4-5", false)
			}
		}
		a := s.call("POST", path, key, body, c.hdr...)
		if proto == "openai" {
			openAIErr(t, a, c.want.status, c.want.openaiCode)
		} else {
			anthropicErr(t, a, c.want.status, c.want.anthType)
		}
		if a.header.Get("X-Tollgate-Request-Id") != a.reqID {
			t.Fatalf("%s %s: answer carries request id %q, want %q", c.name, proto, a.header.Get("X-Tollgate-Request-Id"), a.reqID)
		}
		if rows := s.logs("request_id = ?", a.reqID); len(rows) != 0 {
			t.Fatalf("%s %s: a refused request left a usage log: %+v", c.name, proto, rows[0])
		}
	}
	if after := s.liveBalance(who.id); after != before {
		t.Fatalf("%s: balance moved %d → %d (a hold left or a charge)", c.name, before, after)
	}
	if n := s.oa.Count() + s.an.Count(); n != calls {
		t.Fatalf("%s: %d upstream calls for a refused request", c.name, n-calls)
	}
}

func TestBadInput_RefusedBeforeAnyUpstreamAndFree(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000)
	narrow := s.world.key(s.alice, map[string]any{"models": []string{"text-embedding-3-small"}})
	fenced := s.world.key(s.alice, map[string]any{"allowed_ips": []string{"10.9.8.7", "192.0.2.0/24"}})
	disabled := s.world.key(s.alice, nil)
	if r := s.alice.c.Do("PATCH", fmt.Sprintf("/api/tokens/%d", disabled.ID), map[string]any{"status": "disabled"}); r.Status != http.StatusOK {
		t.Fatalf("disable key: %d %s", r.Status, r.Body)
	}
	expiring := s.world.key(s.alice, map[string]any{"expires_at": time.Now().Add(1500 * time.Millisecond).UTC().Format(time.RFC3339Nano)})
	mallory := s.world.user("mallory", 500_000)
	malloryKey := s.world.key(mallory, nil)
	if r := s.root.Do("PATCH", fmt.Sprintf("/api/admin/users/%d", mallory.id), map[string]any{"status": "disabled"}); r.Status != http.StatusOK {
		t.Fatalf("disable user: %d %s", r.Status, r.Body)
	}
	waitFor(t, "the key to expire", func() bool {
		return s.call("GET", "/v1/models", expiring.Key, nil).status == http.StatusUnauthorized
	})
	keyOf := func(k apiKey) func(*standard) string { return func(*standard) string { return k.Key } }

	cases := []badCase{
		{name: "unknown model", oaBody: chatBody("no-such-model", false), anBody: messagesBody("no-such-model", false),
			want: refusal{http.StatusNotFound, "model_not_found", "not_found_error"}},
		{name: "model not allowed for the key", key: keyOf(narrow),
			want: refusal{http.StatusForbidden, "model_not_allowed", "permission_error"}},
		{name: "malformed JSON", oaBody: `{"model": "gpt-4o-mini", "messages": [`, anBody: `{"model": "claude-sonnet-4-5",`,
			want: refusal{http.StatusBadRequest, "invalid_json", "invalid_request_error"}},
		{name: "not an object", oaBody: `["gpt-4o-mini"]`, anBody: `"claude"`,
			want: refusal{http.StatusBadRequest, "invalid_json", "invalid_request_error"}},
		{name: "model of the wrong type", oaBody: `{"model": 5, "messages": []}`, anBody: `{"model": ["claude-sonnet-4-5"], "max_tokens": 5}`,
			want: refusal{http.StatusBadRequest, "", "invalid_request_error"}},
		{name: "no model", oaBody: `{"messages": [{"role": "user", "content": "hi"}]}`, anBody: `{"model": null}`,
			want: refusal{http.StatusBadRequest, "", "invalid_request_error"}},
		{name: "missing key", key: func(*standard) string { return "" },
			want: refusal{http.StatusUnauthorized, "missing_api_key", "authentication_error"}},
		{name: "wrong key", key: func(*standard) string { return "sk-" + strings.Repeat("x", 48) },
			want: refusal{http.StatusUnauthorized, "invalid_api_key", "authentication_error"}},
		{name: "not an sk- key", key: func(*standard) string { return "hello" },
			want: refusal{http.StatusUnauthorized, "invalid_api_key", "authentication_error"}},
		{name: "expired key", key: keyOf(expiring), want: refusal{http.StatusUnauthorized, "key_expired", "authentication_error"}},
		{name: "disabled key", key: keyOf(disabled), want: refusal{http.StatusUnauthorized, "key_disabled", "authentication_error"}},
		{name: "disabled user", key: keyOf(malloryKey), forUser: func(*standard) *person { return mallory },
			want: refusal{http.StatusForbidden, "user_disabled", "permission_error"}},
		{name: "IP outside the allowlist", key: keyOf(fenced),
			want: refusal{http.StatusForbidden, "ip_not_allowed", "permission_error"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { s.expectRefused(t, c) })
	}

	t.Run("x-api-key wrong key on messages", func(t *testing.T) {
		a := s.call("POST", "/v1/messages", "", messagesBody("claude-sonnet-4-5", false), "x-api-key", "sk-"+strings.Repeat("y", 48))
		anthropicErr(t, a, http.StatusUnauthorized, "authentication_error")
	})
}

func TestBadInput_BodyOverTheLimit(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000)
	big := func(model string) []byte {
		var b bytes.Buffer
		b.WriteString(`{"model":"` + model + `","pad":"`)
		b.Write(bytes.Repeat([]byte("x"), 32<<20))
		b.WriteString(`"}`)
		return b.Bytes()
	}
	for _, proto := range []string{"openai", "anthropic"} {
		path, body := "/v1/chat/completions", big("gpt-4o-mini")
		if proto == "anthropic" {
			path, body = "/v1/messages", big("claude-sonnet-4-5")
		}
		// Once with a Content-Length (refused before reading), once chunked (refused at the limit).
		for _, chunked := range []bool{false, true} {
			if chunked && proto == "anthropic" {
				continue // the limit is protocol-blind; one chunked pass is enough
			}
			var rd any = body
			if chunked {
				rd = io.MultiReader(bytes.NewReader(body)) // hides the length: sent chunked
			}
			a := s.call("POST", path, s.key.Key, rd)
			if proto == "openai" {
				openAIErr(t, a, http.StatusRequestEntityTooLarge, "body_too_large")
			} else {
				anthropicErr(t, a, http.StatusRequestEntityTooLarge, "request_too_large")
			}
		}
	}
	if n := s.oa.Count() + s.an.Count(); n != 0 {
		t.Fatalf("%d upstream calls for oversized bodies", n)
	}
	if b := s.liveBalance(s.alice.id); b != 1_000_000 || len(s.logs()) != 0 {
		t.Fatalf("oversized bodies: balance %d, %d logs", b, len(s.logs()))
	}
}

func TestBadInput_ChineseMessagesForZhCN(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000)
	zh := []string{"Accept-Language", "zh-CN,zh;q=0.9,en;q=0.5"}
	msg := openAIErr(t, s.call("POST", "/v1/chat/completions", s.key.Key, chatBody("no-such-model", false), zh...), http.StatusNotFound, "model_not_found")
	if want := i18n.T(i18n.ZhCN, "model_not_found", "no-such-model"); msg != want {
		t.Fatalf("zh-CN message = %q, want %q", msg, want)
	}
	msg = anthropicErr(t, s.call("POST", "/v1/messages", "", messagesBody("claude-sonnet-4-5", false), zh...), http.StatusUnauthorized, "authentication_error")
	if !hasHan(msg) {
		t.Fatalf("zh-CN Anthropic message %q is not Chinese", msg)
	}
	msg = openAIErr(t, s.call("POST", "/v1/chat/completions", s.key.Key, chatBody("no-such-model", false)), http.StatusNotFound, "model_not_found")
	if hasHan(msg) {
		t.Fatalf("default message %q is not English", msg)
	}
}

func hasHan(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

// upstreamPair is a faulty channel tried first (higher priority) and a good one behind it.
type upstreamPair struct {
	*standard
	badOA, badAN *relaytest.Upstream
}

func newPair(t *testing.T, fault relaytest.Fault, withBackup bool) *upstreamPair {
	t.Helper()
	w := newWorld(t, tolerant)
	p := &upstreamPair{standard: &standard{world: w}, badOA: fake(t, relaytest.Fail(fault)), badAN: fake(t, relaytest.Fail(fault))}
	oa, an := openaiChannel(p.badOA), anthropicChannel(p.badAN)
	oa.Priority, an.Priority = 10, 10
	w.channel(oa)
	w.channel(an)
	p.oa, p.an = fake(t), fake(t)
	if withBackup {
		w.channel(openaiChannel(p.oa))
		w.channel(anthropicChannel(p.an))
	}
	w.prices()
	p.alice = w.user("alice", 1_000_000)
	p.key = w.key(p.alice, nil)
	return p
}

func TestBadInput_UpstreamGarbageIsRetriedElsewhereAndBilledOnce(t *testing.T) {
	t.Parallel()
	p := newPair(t, relaytest.InvalidJSON(), true)
	for _, c := range []struct {
		path string
		body map[string]any
		up   *relaytest.Upstream
		cost int64
	}{{"/v1/chat/completions", chatBody("gpt-4o-mini", false), p.badOA, 50}, {"/v1/messages", messagesBody("claude-sonnet-4-5", false), p.badAN, 330}} {
		a := p.call("POST", c.path, p.key.Key, c.body)
		if a.status != http.StatusOK {
			t.Fatalf("%s: %d %s", c.path, a.status, a.body)
		}
		l := p.logOf(a.reqID)
		if l.Cost != c.cost || l.Status != "success" || len(l.Attempts.V) != 2 || l.Attempts.V[0].Class != "bad_reply" {
			t.Fatalf("%s: log cost %d status %s attempts %+v", c.path, l.Cost, l.Status, l.Attempts.V)
		}
	}
	if b := p.liveBalance(p.alice.id); b != 1_000_000-380 {
		t.Fatalf("balance %d, want %d: billed once per request", b, 1_000_000-380)
	}
}

func TestBadInput_UpstreamGarbageWithNoOtherChannelIs502AndFree(t *testing.T) {
	t.Parallel()
	p := newPair(t, relaytest.InvalidJSON(), false)
	a := p.call("POST", "/v1/chat/completions", p.key.Key, chatBody("gpt-4o-mini", false))
	openAIErr(t, a, http.StatusBadGateway, "upstream_bad_reply")
	b := p.call("POST", "/v1/messages", p.key.Key, messagesBody("claude-sonnet-4-5", false))
	anthropicErr(t, b, http.StatusBadGateway, "api_error")
	for _, id := range []string{a.reqID, b.reqID} {
		if l := p.logOf(id); l.Cost != 0 || l.Status != "error" || l.ErrorClass != "bad_reply" || l.HTTPStatus != http.StatusBadGateway {
			t.Fatalf("garbage log: cost %d status %s class %q http %d", l.Cost, l.Status, l.ErrorClass, l.HTTPStatus)
		}
	}
	if bal := p.liveBalance(p.alice.id); bal != 1_000_000 {
		t.Fatalf("balance %d after garbage answers, want untouched", bal)
	}
	p.flush()
	if u := p.sqlUser(p.alice.id); u.Quota != 1_000_000 || u.UsedQuota != 0 {
		t.Fatalf("SQL user quota %d used %d after garbage answers", u.Quota, u.UsedQuota)
	}
}

func TestBadInput_Upstream400PassesThroughUnchangedUnretriedAndFree(t *testing.T) {
	t.Parallel()
	const oaErr = `{"error":{"message":"messages[0].content is too long","type":"invalid_request_error","param":"messages","code":"string_above_max_length"}}`
	const anErr = `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: must be at most 8192"},"request_id":"req_x"}`
	p := newPair(t, relaytest.Fault{Kind: relaytest.FaultStatus, Status: http.StatusBadRequest, Body: oaErr}, true)
	p.badAN.Reset(relaytest.Fail(relaytest.Fault{Kind: relaytest.FaultStatus, Status: http.StatusBadRequest, Body: anErr}))
	for _, c := range []struct {
		path, want string
		body       map[string]any
		bad, good  *relaytest.Upstream
	}{{"/v1/chat/completions", oaErr, chatBody("gpt-4o-mini", false), p.badOA, p.oa},
		{"/v1/messages", anErr, messagesBody("claude-sonnet-4-5", true), p.badAN, p.an}} {
		a := p.call("POST", c.path, p.key.Key, c.body)
		if a.status != http.StatusBadRequest || string(a.body) != c.want {
			t.Fatalf("%s: %d %s, want the upstream's 400 unchanged: %s", c.path, a.status, a.body, c.want)
		}
		if c.bad.Count() != 1 || c.good.Count() != 0 {
			t.Fatalf("%s: a client error was retried: faulty upstream %d calls, backup %d", c.path, c.bad.Count(), c.good.Count())
		}
		if l := p.logOf(a.reqID); l.Cost != 0 || l.ErrorClass != "client" || l.HTTPStatus != http.StatusBadRequest {
			t.Fatalf("%s: log cost %d class %q http %d", c.path, l.Cost, l.ErrorClass, l.HTTPStatus)
		}
	}
	if bal := p.liveBalance(p.alice.id); bal != 1_000_000 {
		t.Fatalf("balance %d after upstream 400s, want untouched", bal)
	}
}

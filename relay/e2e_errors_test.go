package relay_test

// Errors the way each protocol's clients expect them: a 4xx the caller caused is passed through and condemns
// no key; an upstream error inside a stream is passed on once and logged with the upstream's class; money
// refusals stop the SDKs and CLIs at once; an overloaded upstream reaches Anthropic callers as 529.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"tollgate/relay/relaytest"
)

// echo400 is a 400 validation error whose message echoes what the caller sent, as real upstreams do.
func echo400(msg string) relaytest.Fault {
	return relaytest.Fault{Kind: relaytest.FaultStatus, Status: http.StatusBadRequest, Code: relaytest.CodeInvalidRequest, Message: msg}
}

func TestClassify_EchoedKeyWordsIn400sLeaveChannelAndEveryKeyUsable(t *testing.T) {
	t.Parallel()
	r := newResilient(t)
	r.stickyOff() // round robin over the keys, call by call
	oaEcho := "Invalid value: 'Incorrect API key provided: sk-proj-abcd1234'. Supported values are: 'system', 'assistant', 'user'."
	anEcho := "messages.0.role: Input should be 'user' or 'assistant', got 'invalid x-api-key'"
	oa := fake(t, relaytest.FailFirst(3, echo400(oaEcho)))
	an := fake(t, relaytest.FailFirst(3, echo400(anEcho)))
	oaKeys := []string{"sk-echo-openai-key-0001", "sk-echo-openai-key-0002", "sk-echo-openai-key-0003"}
	anKeys := []string{"sk-ant-echo-key-0001", "sk-ant-echo-key-0002", "sk-ant-echo-key-0003"}
	oaSpec, anSpec := openaiChannel(oa, oaKeys...), anthropicChannel(an, anKeys...)
	oaSpec.KeyStrategy, anSpec.KeyStrategy = "round_robin", "round_robin"
	oaID, anID := r.channel(oaSpec), r.channel(anSpec)

	for i := 0; i < 3; i++ {
		a := r.chat(chatBody(rsModel, false))
		if msg := openAIErr(t, a, http.StatusBadRequest, "invalid_value"); msg != oaEcho {
			t.Fatalf("OpenAI caller did not get the upstream's own 400: %q", msg)
		}
		a = r.do("/v1/messages", r.key, messagesBody(rsClaude, false))
		if msg := anthropicErr(t, a, http.StatusBadRequest, "invalid_request_error"); msg != anEcho {
			t.Fatalf("Anthropic caller did not get the upstream's own 400: %q", msg)
		}
	}
	if n, m := oa.Count(), an.Count(); n != 3 || m != 3 {
		t.Fatalf("upstream calls = %d/%d, want 3/3 (a client error is not retried)", n, m)
	}
	for _, l := range r.waitLogs(6, "user_id = ?", r.alice.id) {
		if l.ErrorClass != "client" || l.HTTPStatus != http.StatusBadRequest || l.Cost != 0 {
			t.Fatalf("log %s: class %q status %d cost %d, want client 400 free", l.RequestID, l.ErrorClass, l.HTTPStatus, l.Cost)
		}
	}
	// Give an auto-disable (asynchronous) the time it would take, then read health through the admin API.
	time.Sleep(200 * time.Millisecond)
	for _, id := range []int64{oaID, anID} {
		if st := r.channelStatus(id); st != "enabled" {
			t.Fatalf("channel %d status = %s, want enabled", id, st)
		}
		h := r.health(id)
		if h.State != "closed" || len(h.Keys) != 3 {
			t.Fatalf("channel %d health = %+v", id, h)
		}
		for _, k := range h.Keys {
			if k.State != "ok" {
				t.Fatalf("channel %d key %d state = %s, want ok", id, k.Index, k.State)
			}
		}
	}
	// Every key still serves: round robin walks all three on each channel.
	oa.ClearRequests()
	an.ClearRequests()
	for i := 0; i < 3; i++ {
		r.chat(chatBody(rsModel, false)).mustOK(t)
		r.do("/v1/messages", r.key, messagesBody(rsClaude, false)).mustOK(t)
	}
	for name, up := range map[string]*relaytest.Upstream{"openai": oa, "anthropic": an} {
		used := map[string]bool{}
		for _, rq := range up.Requests() {
			used[rq.Key] = true
		}
		if len(used) != 3 {
			t.Fatalf("%s: keys that served = %v, want all 3", name, used)
		}
	}
}

// errorEvents counts the events that report an error, in any protocol's shape.
func errorEvents(evs []sseEvent) int {
	n := 0
	for _, e := range evs {
		d := gjson.Parse(e.data)
		if e.name == "error" || d.Get("type").String() == "error" || d.Get("error").IsObject() || d.Get("type").String() == "response.failed" {
			n++
		}
	}
	return n
}

func TestStream_UpstreamErrorEventIsPassedOnOnceAndLoggedWithItsClass(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000, relaytest.Fail(relaytest.StreamError(2)))
	cases := []struct {
		name, path string
		body       map[string]any
		class      string
		last       string // gjson path and value of the upstream's error, as the client must see it
		want       string
	}{
		{"messages", "/v1/messages", messagesBody("claude-sonnet-4-5", true), "server", "error.type", "overloaded_error"},
		{"chat", "/v1/chat/completions", chatBody("gpt-4o-mini", true), "server", "error.type", "server_error"},
		{"responses", "/v1/responses", map[string]any{"model": "gpt-4o-mini", "input": "hi", "stream": true}, "server", "code", "server_error"},
	}
	for _, c := range cases {
		res, evs, id := s.stream(c.path, s.key.Key, c.body)
		if res.StatusCode != http.StatusOK || len(evs) == 0 {
			t.Fatalf("%s: %d, %d events", c.name, res.StatusCode, len(evs))
		}
		if n := errorEvents(evs); n != 1 {
			t.Fatalf("%s: %d error events, want exactly the upstream's one: %v", c.name, n, evs)
		}
		if last := gjson.Parse(evs[len(evs)-1].data).Get(c.last).String(); last != c.want {
			t.Fatalf("%s: last event %q, want the upstream's error (%s = %s)", c.name, evs[len(evs)-1].data, c.last, c.want)
		}
		l := s.logOf(id)
		if l.Status != "error" || l.ErrorClass != c.class || l.HTTPStatus != http.StatusOK {
			t.Fatalf("%s: log status %s class %q http %d, want error %s 200", c.name, l.Status, l.ErrorClass, l.HTTPStatus, c.class)
		}
	}
}

func TestStream_ResponseFailedIsAnErrorBilledOnlyForReportedUsage(t *testing.T) {
	t.Parallel()
	body := map[string]any{"model": "gpt-4o-mini", "input": "hi", "stream": true}
	for _, tc := range []struct {
		name  string
		usage bool
		code  string
		class string
		cost  int64
	}{
		{"server error with usage", true, "server_error", "server", 50}, // 10 prompt + 20 completion at 1/2 per 1M
		{"rate limited without usage", false, "rate_limit_exceeded", "rate_limited", 0},
	} {
		s := newStandard(t, 1_000_000, relaytest.WithUsage(tc.usage), relaytest.Fail(relaytest.ResponseFailed(2, tc.code)))
		res, evs, id := s.stream("/v1/responses", s.key.Key, body)
		if res.StatusCode != http.StatusOK || errorEvents(evs) != 1 {
			t.Fatalf("%s: %d, events %v", tc.name, res.StatusCode, evs)
		}
		if last := gjson.Parse(evs[len(evs)-1].data); last.Get("type").String() != "response.failed" {
			t.Fatalf("%s: last event %s, want response.failed", tc.name, evs[len(evs)-1].data)
		}
		l := s.logOf(id)
		if l.Status != "error" || l.ErrorClass != tc.class || l.Cost != tc.cost || l.UsageEstimated {
			t.Fatalf("%s: log status %s class %q cost %d estimated %v, want error %s cost %d reported", tc.name,
				l.Status, l.ErrorClass, l.Cost, l.UsageEstimated, tc.class, tc.cost)
		}
		if got := s.liveBalance(s.alice.id); got != 1_000_000-tc.cost {
			t.Fatalf("%s: balance %d, want %d", tc.name, got, 1_000_000-tc.cost)
		}
	}
}

func TestStream_UpstreamErrorWithoutUsageCostsNothing(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000, relaytest.WithUsage(false), relaytest.Fail(relaytest.StreamError(2)))
	_, evs, id := s.stream("/v1/chat/completions", s.key.Key, chatBody("gpt-4o-mini", true, "stream_options", map[string]any{"include_usage": true}))
	if errorEvents(evs) != 1 {
		t.Fatalf("events %v", evs)
	}
	if l := s.logOf(id); l.Cost != 0 || l.ErrorClass != "server" {
		t.Fatalf("log class %q cost %d, want server, free: the upstream reported no usage", l.ErrorClass, l.Cost)
	}
	if got := s.liveBalance(s.alice.id); got != 1_000_000 {
		t.Fatalf("balance %d, want untouched", got)
	}
}

func TestMoneyRefusal_EachProtocolGetsAnAnswerItsClientsDoNotRetry(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000)
	poor := s.user("poor", 0)
	poorKey := s.world.key(poor, nil)
	budget := s.world.key(s.alice, map[string]any{"remain_quota": 1, "unlimited": false})
	for _, tc := range []struct {
		key, code string
	}{{poorKey.Key, "insufficient_quota"}, {budget.Key, "key_quota_exhausted"}} {
		for _, stream := range []bool{false, true} {
			a := s.call("POST", "/v1/chat/completions", tc.key, chatBody("gpt-4o-mini", stream))
			openAIErr(t, a, http.StatusTooManyRequests, tc.code)
			if typ := gjson.GetBytes(a.body, "error.type").String(); typ != "insufficient_quota" {
				t.Fatalf("%s: OpenAI error type %q, want insufficient_quota", tc.code, typ)
			}
			if a.header.Get("x-should-retry") != "false" {
				t.Fatalf("%s: x-should-retry = %q", tc.code, a.header.Get("x-should-retry"))
			}
			a = s.call("POST", "/v1/responses", tc.key, map[string]any{"model": "gpt-4o-mini", "input": "hi", "stream": stream})
			openAIErr(t, a, http.StatusTooManyRequests, tc.code)
			a = s.call("POST", "/v1/messages", tc.key, messagesBody("claude-sonnet-4-5", stream))
			anthropicErr(t, a, http.StatusPaymentRequired, "billing_error")
			if a.header.Get("x-should-retry") != "false" {
				t.Fatalf("%s: Anthropic x-should-retry = %q", tc.code, a.header.Get("x-should-retry"))
			}
		}
	}
	msg := anthropicErr(t, s.call("POST", "/v1/messages", poorKey.Key, messagesBody("claude-sonnet-4-5", false)), http.StatusPaymentRequired, "billing_error")
	if !strings.Contains(strings.ToLower(msg), "credit balance is too low") {
		t.Fatalf("message %q lacks the phrase Claude Code shows as a billing notice", msg)
	}
	if n := s.oa.Count() + s.an.Count(); n != 0 {
		t.Fatalf("%d upstream calls for refused requests", n)
	}
}

func TestOverloaded_AnthropicCallersGet529OpenAICallers503(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000, relaytest.Fail(relaytest.Overloaded()))
	a := s.call("POST", "/v1/messages", s.key.Key, messagesBody("claude-sonnet-4-5", false))
	anthropicErr(t, a, 529, "overloaded_error")
	a = s.call("POST", "/v1/messages", s.key.Key, messagesBody("claude-sonnet-4-5", true))
	anthropicErr(t, a, 529, "overloaded_error")
	a = s.call("POST", "/v1/chat/completions", s.key.Key, chatBody("gpt-4o-mini", false))
	openAIErr(t, a, http.StatusServiceUnavailable, "upstream_overloaded")
	if typ := gjson.GetBytes(a.body, "error.type").String(); typ != "server_error" {
		t.Fatalf("OpenAI type %q, want server_error", typ)
	}
	for _, l := range s.waitLogs(3, "user_id = ?", s.alice.id) {
		if l.ErrorClass != "server" {
			t.Fatalf("log %s class %q, want server", l.RequestID, l.ErrorClass)
		}
	}
}

func TestClassify_AdminRulesKeepWorkingWhereMeant(t *testing.T) {
	t.Parallel()
	r := newResilient(t)
	r.settings(map[string]any{"error_rules": []map[string]any{
		{"status": 500, "contains": "upstream busy", "class": "rate_limited"},
		{"contains": "suspended", "class": "auth"},
	}})
	busy := relaytest.Fault{Kind: relaytest.FaultStatus, Status: http.StatusInternalServerError, Code: relaytest.CodeServerError,
		Message: "upstream busy, try again"}
	up := fake(t, relaytest.FailFirst(1, busy))
	spec := openaiChannel(up, "sk-rule-key-0001", "sk-rule-key-0002")
	spec.KeyStrategy = "round_robin"
	id := r.channel(spec)

	// A flaky upstream's 5xx, named by a rule with its status: the key cools (rate_limited), the next one serves.
	a := r.chat(chatBody(rsModel, false))
	a.mustOK(t)
	if got := attemptsOf(r.logOf(a.reqID)); got != fmt.Sprintf("%d:rate_limited,%d:ok", id, id) {
		t.Fatalf("attempts = %s", got)
	}
	cooling := 0
	for _, k := range r.health(id).Keys {
		if k.State == "cooling" {
			cooling++
		}
	}
	if cooling != 1 {
		t.Fatalf("keys cooling = %d, want 1: %+v", cooling, r.health(id).Keys)
	}

	// A rule without a status is not triggered by a caller's word echoed in a 400 ...
	up.Set(relaytest.FailFirst(1, echo400("Invalid value: 'account suspended'")))
	a = r.chat(chatBody(rsModel, false))
	openAIErr(t, a, http.StatusBadRequest, "invalid_value")
	if l := r.logOf(a.reqID); l.ErrorClass != "client" {
		t.Fatalf("echoed rule word classed %q, want client", l.ErrorClass)
	}
	// ... but reads a 403's body, where the upstream speaks about the key.
	up.Set(relaytest.FailFirst(1, relaytest.Fault{Kind: relaytest.FaultStatus, Status: http.StatusForbidden,
		Message: "This account is suspended"}))
	a = r.chat(chatBody(rsModel, false))
	if l := r.logOf(a.reqID); l.Attempts.V[0].Class != "auth" {
		t.Fatalf("403 suspended classed %q, want auth", l.Attempts.V[0].Class)
	}
}

// An upstream that echoes the request's headers in an error event inside a stream (some proxies and
// self-hosted servers do) must not hand the channel's key to the caller or the logs, before or after the
// stream is committed: the event is masked like an error answer (each channel masks its own credentials).
func TestStream_UpstreamErrorEventIsScrubbedOfTheChannelsKey(t *testing.T) {
	t.Parallel()
	const oaKey, anKey = "sk-upstream-openai-0001", "sk-ant-upstream-0001"
	echo := "upstream failed; request had Authorization: Bearer " + oaKey + " and x-api-key: " + anKey
	for _, after := range []int{2, 0} { // mid-stream, and as the very first event (a failed attempt)
		s := newStandard(t, 1_000_000, relaytest.Fail(relaytest.Fault{Kind: relaytest.FaultStreamError, AfterChunks: after, Message: echo}))
		for _, c := range []struct{ path, model, own string }{
			{"/v1/chat/completions", "gpt-4o-mini", oaKey}, {"/v1/messages", "claude-sonnet-4-5", anKey},
		} {
			body := chatBody(c.model, true)
			if c.path == "/v1/messages" {
				body = messagesBody(c.model, true)
			}
			res, evs, id := s.stream(c.path, s.key.Key, body)
			seen := fmt.Sprint(evs)
			if strings.Contains(seen, c.own) {
				t.Fatalf("after %d, %s: the caller got the channel key (%d): %s", after, c.path, res.StatusCode, seen)
			}
			l := s.logOf(id)
			if strings.Contains(l.Error, c.own) || l.Status != "error" {
				t.Fatalf("after %d, %s: log %s %q keeps the channel key", after, c.path, l.Status, l.Error)
			}
		}
	}
}

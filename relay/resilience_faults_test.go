package relay_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"tollgate/model"
	"tollgate/relay/relaytest"
)

// expectLog checks a request's log row: the error class, the status the client saw, and its cost (0 means
// it must be free; -1 means it must be charged).
func (r *resilient) expectLog(a *answer, class string, status int, cost int64) model.UsageLog {
	r.t.Helper()
	l := r.logOf(a.reqID)
	if l.ErrorClass != class || l.HTTPStatus != status || (cost == 0 && l.Cost != 0) || (cost < 0 && l.Cost <= 0) {
		r.t.Fatalf("log: class %q http %d cost %d attempts %s; want class %q http %d cost %s",
			l.ErrorClass, l.HTTPStatus, l.Cost, attemptsOf(l), class, status, map[bool]string{true: "0", false: "> 0"}[cost == 0])
	}
	return l
}

// A channel slower than its first-byte deadline is a timeout, retried on another channel before anything
// reached the client; the client gets its answer and pays once.
func TestFaults_SlowFirstByteFailsOver(t *testing.T) {
	r := newResilient(t)
	slow, fast := fake(t, relaytest.WithHeaderDelay(10*time.Second)), fake(t)
	spec := openaiChannel(slow).at(10)
	spec.Timeouts = &model.Timeouts{FirstByteMs: 300}
	slowID := r.channel(spec)
	fastID := r.channel(openaiChannel(fast))
	for i, stream := range []bool{false, true} {
		a := r.chat(chatBody(rsModel, stream, "prompt_cache_key", fmt.Sprintf("slow-%d", i)))
		a.mustOK(t)
		if stream && (len(a.events) == 0 || a.events[len(a.events)-1].data != "[DONE]") {
			t.Fatalf("stream %d events, want a complete stream", len(a.events))
		}
		l := r.expectLog(a, "", http.StatusOK, -1)
		if want := fmt.Sprintf("%d:timeout,%d:ok", slowID, fastID); attemptsOf(l) != want {
			t.Fatalf("attempts %s, want %s", attemptsOf(l), want)
		}
	}
	r.checkBooks(2)
}

// A hung upstream with a small total deadline gives the client one clear 504 in its protocol, well before
// any client-side timeout: never a hang. A stream that stalls after some chunks ends with an error event.
func TestFaults_HungUpstreamGivesOneClearTimeout(t *testing.T) {
	r := newResilient(t)
	const total = 800 * time.Millisecond
	const slack = 10 * time.Second // generous for -race on a loaded machine; the point is "not a hang"
	hung := fake(t, relaytest.Fail(relaytest.Hang()))
	oa := openaiChannel(hung)
	oa.Timeouts = &model.Timeouts{TotalMs: int(total.Milliseconds())}
	r.channel(oa)
	an := openaiChannel(hung)
	an.Type, an.Models, an.Timeouts = "anthropic", []string{rsClaude}, oa.Timeouts
	r.channel(an)

	a := r.chat(chatBody(rsModel, false))
	openAIErr(t, a, http.StatusGatewayTimeout, "upstream_timeout")
	if a.elapsed > total+slack {
		t.Fatalf("answered after %s, deadline %s", a.elapsed, total)
	}
	r.expectLog(a, "timeout", http.StatusGatewayTimeout, 0)

	a = r.do("/v1/messages", r.key, messagesBody(rsClaude, false))
	anthropicErr(t, a, http.StatusGatewayTimeout, "")
	if a.elapsed > total+slack {
		t.Fatalf("answered after %s, deadline %s", a.elapsed, total)
	}
	r.expectLog(a, "timeout", http.StatusGatewayTimeout, 0)

	// A stream that stalls after 2 chunks: the idle deadline ends it with an error event, billed for 2 chunks.
	stall := fake(t, relaytest.Fail(relaytest.HangAfter(2)))
	st := openaiChannel(stall).at(10)
	st.Timeouts = &model.Timeouts{IdleMs: 500}
	stallID := r.channel(st)
	a = r.chat(chatBody(rsModel, true, "prompt_cache_key", "stall"))
	if a.status != http.StatusOK || len(a.events) < 3 || a.elapsed > 500*time.Millisecond+slack {
		t.Fatalf("stalled stream: %d with %d events after %s", a.status, len(a.events), a.elapsed)
	}
	if last := a.events[len(a.events)-1].data; !json.Valid([]byte(last)) || string(mustField(t, last, "error")) == "" {
		t.Fatalf("stalled stream ended with %q, want an error event", last)
	}
	if l := r.expectLog(a, "timeout", http.StatusOK, -1); l.ChannelID != stallID || stall.Count() != 1 {
		t.Fatalf("stalled stream: channel %d, %d upstream requests; want one, no retry after commit", l.ChannelID, stall.Count())
	}
	r.checkBooks(3)
}

// mustField returns the raw JSON of field in the object s.
func mustField(t *testing.T, s, field string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return m[field]
}

// An upstream answering 200 with broken JSON is retried elsewhere; with nowhere else to go the client gets a
// clear 502 and pays nothing.
func TestFaults_InvalidJSONIsRetried(t *testing.T) {
	r := newResilient(t)
	broken, good := fake(t, relaytest.Fail(relaytest.InvalidJSON())), fake(t)
	brokenID := r.channel(openaiChannel(broken).at(10))
	goodID := r.channel(openaiChannel(good))
	a := r.chat(chatBody(rsModel, false))
	a.mustOK(t)
	var v struct {
		Choices []any `json:"choices"`
	}
	if json.Unmarshal(a.body, &v) != nil || len(v.Choices) != 1 {
		t.Fatalf("client got %s, want the healthy channel's answer", a.body)
	}
	if l := r.expectLog(a, "", http.StatusOK, -1); attemptsOf(l) != fmt.Sprintf("%d:bad_reply,%d:ok", brokenID, goodID) {
		t.Fatalf("attempts %s", attemptsOf(l))
	}

	good.Set(relaytest.Fail(relaytest.InvalidJSON()))
	a = r.chat(chatBody(rsModel, false, "prompt_cache_key", "all-broken"))
	openAIErr(t, a, http.StatusBadGateway, "upstream_bad_reply")
	r.expectLog(a, "bad_reply", http.StatusBadGateway, 0)
	r.checkBooks(2)
}

// A 429 storm on every channel ends in one clear 429 in the caller's protocol, at no cost.
func TestFaults_RateLimitStormGivesOneClear429(t *testing.T) {
	r := newResilient(t)
	storm := relaytest.Fail(relaytest.RateLimited(20 * time.Second))
	a1, a2 := fake(t, storm), fake(t, storm)
	r.channel(openaiChannel(a1).at(10))
	r.channel(openaiChannel(a2))
	a := r.chat(chatBody(rsModel, false))
	openAIErr(t, a, http.StatusTooManyRequests, "")
	if l := r.expectLog(a, "rate_limited", http.StatusTooManyRequests, 0); len(l.Attempts.V) != 2 {
		t.Fatalf("attempts %s, want each channel once", attemptsOf(l))
	}
	// Both keys cool down: the next call fails at once without bothering the upstreams.
	a = r.chat(chatBody(rsModel, false, "prompt_cache_key", "storm-2"))
	if a1.Count()+a2.Count() != 2 {
		t.Fatalf("second call reached the cooling upstreams (%d requests in all)", a1.Count()+a2.Count())
	}
	openAIErr(t, a, http.StatusServiceUnavailable, "no_channel")
	r.expectLog(a, "", http.StatusServiceUnavailable, 0)
	r.checkBooks(2)
}

// A channel whose every key is revoked, with no other channel: the client gets one clear error in its
// protocol, the channel is auto-disabled, and later calls fail fast with a clear error too.
func TestFaults_EveryKeyRevokedWithNoOtherChannel(t *testing.T) {
	r := newResilient(t)
	dead := fake(t, relaytest.Fail(relaytest.InvalidKey()))
	oaID := r.channel(openaiChannel(dead, "sk-gone-1", "sk-gone-2"))
	an := openaiChannel(dead, "sk-ant-gone-1")
	an.Type, an.Models = "anthropic", []string{rsClaude}
	anID := r.channel(an)

	a := r.chat(chatBody(rsModel, false))
	openAIErr(t, a, http.StatusBadGateway, "")
	if l := r.expectLog(a, "auth", http.StatusBadGateway, 0); len(l.Attempts.V) != 2 {
		t.Fatalf("attempts %s, want each key once", attemptsOf(l))
	}
	a = r.do("/v1/messages", r.key, messagesBody(rsClaude, false))
	anthropicErr(t, a, http.StatusBadGateway, "")
	r.expectLog(a, "auth", http.StatusBadGateway, 0)
	for _, id := range []int64{oaID, anID} {
		waitUntil(t, 10*time.Second, "auto_disabled", func() bool { return r.channelStatus(id) == "auto_disabled" })
	}
	before := dead.Count()
	a = r.chat(chatBody(rsModel, false, "prompt_cache_key", "after"))
	if a.status < 400 || a.status == http.StatusOK {
		t.Fatalf("call with every channel disabled: %d %s", a.status, a.body)
	}
	openAIErr(t, a, a.status, "")
	t.Logf("with the only channel auto-disabled the client gets %d %s", a.status, a.body)
	a = r.do("/v1/messages", r.key, messagesBody(rsClaude, false))
	anthropicErr(t, a, a.status, "")
	if dead.Count() != before {
		t.Fatalf("a disabled channel received %d more requests", dead.Count()-before)
	}
	if got := r.liveBalance(r.alice.id); got != rsBalance {
		t.Fatalf("balance %d after failed calls only, want %d", got, rsBalance)
	}
}

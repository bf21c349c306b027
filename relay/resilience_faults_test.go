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

// anthropicError checks an Anthropic-shaped error with status.
func (a *rsAnswer) anthropicError(t *testing.T, status int) {
	t.Helper()
	var e struct {
		Type  string `json:"type"`
		Error *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if a.status != status || json.Unmarshal(a.body, &e) != nil || e.Type != "error" || e.Error == nil || e.Error.Message == "" || e.Error.Type == "" {
		t.Fatalf("want an Anthropic error with status %d, got %d %s", status, a.status, a.body)
	}
}

// expectLog checks a request's log row: the error class, the status the client saw, and its cost (0 means
// it must be free; -1 means it must be charged).
func (r *rig) expectLog(a *rsAnswer, class string, status int, cost int64) model.UsageLog {
	r.t.Helper()
	l := r.logOf(a)
	if l.ErrorClass != class || l.HTTPStatus != status || (cost == 0 && l.Cost != 0) || (cost < 0 && l.Cost <= 0) {
		r.t.Fatalf("log: class %q http %d cost %d attempts %s; want class %q http %d cost %s",
			l.ErrorClass, l.HTTPStatus, l.Cost, attemptsOf(l), class, status, map[bool]string{true: "0", false: "> 0"}[cost == 0])
	}
	return l
}

// A channel slower than its first-byte deadline is a timeout, retried on another channel before anything
// reached the client; the client gets its answer and pays once.
func TestFaults_SlowFirstByteFailsOver(t *testing.T) {
	r := newRig(t)
	slow, fast := rsFake(t, relaytest.WithHeaderDelay(10*time.Second)), rsFake(t)
	spec := oaChan(slow, 10)
	spec.Timeouts = &model.Timeouts{FirstByteMs: 300}
	slowID := r.addChannel(spec)
	fastID := r.addChannel(oaChan(fast, 0))
	for i, stream := range []bool{false, true} {
		a := r.chat(chatReq(stream, "prompt_cache_key", fmt.Sprintf("slow-%d", i)))
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
	r := newRig(t)
	const total = 800 * time.Millisecond
	const slack = 10 * time.Second // generous for -race on a loaded machine; the point is "not a hang"
	hung := rsFake(t, relaytest.Fail(relaytest.Hang()))
	oa := oaChan(hung, 0)
	oa.Timeouts = &model.Timeouts{TotalMs: int(total.Milliseconds())}
	r.addChannel(oa)
	an := oaChan(hung, 0)
	an.Type, an.Models, an.Timeouts = "anthropic", []string{rsClaude}, oa.Timeouts
	r.addChannel(an)

	a := r.chat(chatReq(false))
	if code := a.openAIError(t, http.StatusGatewayTimeout); code != "upstream_timeout" {
		t.Fatalf("error code %q, want upstream_timeout", code)
	}
	if a.elapsed > total+slack {
		t.Fatalf("answered after %s, deadline %s", a.elapsed, total)
	}
	r.expectLog(a, "timeout", http.StatusGatewayTimeout, 0)

	a = r.do("/v1/messages", r.key, msgReq())
	a.anthropicError(t, http.StatusGatewayTimeout)
	if a.elapsed > total+slack {
		t.Fatalf("answered after %s, deadline %s", a.elapsed, total)
	}
	r.expectLog(a, "timeout", http.StatusGatewayTimeout, 0)

	// A stream that stalls after 2 chunks: the idle deadline ends it with an error event, billed for 2 chunks.
	stall := rsFake(t, relaytest.Fail(relaytest.HangAfter(2)))
	st := oaChan(stall, 10)
	st.Timeouts = &model.Timeouts{IdleMs: 500}
	stallID := r.addChannel(st)
	a = r.chat(chatReq(true, "prompt_cache_key", "stall"))
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
	r := newRig(t)
	broken, good := rsFake(t, relaytest.Fail(relaytest.InvalidJSON())), rsFake(t)
	brokenID := r.addChannel(oaChan(broken, 10))
	goodID := r.addChannel(oaChan(good, 0))
	a := r.chat(chatReq(false))
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
	a = r.chat(chatReq(false, "prompt_cache_key", "all-broken"))
	if code := a.openAIError(t, http.StatusBadGateway); code != "upstream_bad_reply" {
		t.Fatalf("error code %q, want upstream_bad_reply", code)
	}
	r.expectLog(a, "bad_reply", http.StatusBadGateway, 0)
	r.checkBooks(2)
}

// A 429 storm on every channel ends in one clear 429 in the caller's protocol, at no cost.
func TestFaults_RateLimitStormGivesOneClear429(t *testing.T) {
	r := newRig(t)
	storm := relaytest.Fail(relaytest.RateLimited(20 * time.Second))
	a1, a2 := rsFake(t, storm), rsFake(t, storm)
	r.addChannel(oaChan(a1, 10))
	r.addChannel(oaChan(a2, 0))
	a := r.chat(chatReq(false))
	a.openAIError(t, http.StatusTooManyRequests)
	if l := r.expectLog(a, "rate_limited", http.StatusTooManyRequests, 0); len(l.Attempts.V) != 2 {
		t.Fatalf("attempts %s, want each channel once", attemptsOf(l))
	}
	// Both keys cool down: the next call fails at once without bothering the upstreams.
	a = r.chat(chatReq(false, "prompt_cache_key", "storm-2"))
	if a1.Count()+a2.Count() != 2 {
		t.Fatalf("second call reached the cooling upstreams (%d requests in all)", a1.Count()+a2.Count())
	}
	if code := a.openAIError(t, http.StatusServiceUnavailable); code != "no_channel" {
		t.Fatalf("error code %q, want no_channel", code)
	}
	r.expectLog(a, "", http.StatusServiceUnavailable, 0)
	r.checkBooks(2)
}

// A channel whose every key is revoked, with no other channel: the client gets one clear error in its
// protocol, the channel is auto-disabled, and later calls fail fast with a clear error too.
func TestFaults_EveryKeyRevokedWithNoOtherChannel(t *testing.T) {
	r := newRig(t)
	dead := rsFake(t, relaytest.Fail(relaytest.InvalidKey()))
	oaID := r.addChannel(oaChan(dead, 0, "sk-gone-1", "sk-gone-2"))
	an := oaChan(dead, 0, "sk-ant-gone-1")
	an.Type, an.Models = "anthropic", []string{rsClaude}
	anID := r.addChannel(an)

	a := r.chat(chatReq(false))
	a.openAIError(t, http.StatusBadGateway)
	if l := r.expectLog(a, "auth", http.StatusBadGateway, 0); len(l.Attempts.V) != 2 {
		t.Fatalf("attempts %s, want each key once", attemptsOf(l))
	}
	a = r.do("/v1/messages", r.key, msgReq())
	a.anthropicError(t, http.StatusBadGateway)
	r.expectLog(a, "auth", http.StatusBadGateway, 0)
	for _, id := range []int64{oaID, anID} {
		waitUntil(t, 10*time.Second, "auto_disabled", func() bool { return r.channelStatus(id) == "auto_disabled" })
	}
	before := dead.Count()
	a = r.chat(chatReq(false, "prompt_cache_key", "after"))
	if a.status < 400 || a.status == http.StatusOK {
		t.Fatalf("call with every channel disabled: %d %s", a.status, a.body)
	}
	a.openAIError(t, a.status)
	t.Logf("with the only channel auto-disabled the client gets %d %s", a.status, a.body)
	a = r.do("/v1/messages", r.key, msgReq())
	a.anthropicError(t, a.status)
	if dead.Count() != before {
		t.Fatalf("a disabled channel received %d more requests", dead.Count()-before)
	}
	if got := r.balance(r.userID); got != rsBalance {
		t.Fatalf("balance %d after failed calls only, want %d", got, rsBalance)
	}
}

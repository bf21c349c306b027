package relay_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"tollgate/relay/relaytest"
)

// keyRequests counts the relay requests (not channel-test pings) the fake received with each upstream key.
func keyRequests(up *relaytest.Upstream) map[string]int {
	out := map[string]int{}
	for _, rq := range up.Requests() {
		if rq.Get("messages.0.content").String() != "ping" {
			out[rq.Key]++
		}
	}
	return out
}

// twoKeyChannel is a channel on up with keys "<tag>-a" and "<tag>-b" used in turn (round robin), so the
// second call of a test is sure to try key a.
func twoKeyChannel(up *relaytest.Upstream, tag string) (chanSpec, string, string) {
	a, b := "sk-"+tag+"-a", "sk-"+tag+"-b"
	spec := openaiChannel(up, a, b)
	spec.KeyStrategy = "round_robin"
	return spec, a, b
}

// A 429 cools the one key down until the upstream's Retry-After; its sibling serves, the channel's breaker
// does not move, and the cooling key gets no traffic until its time is up.
func TestKeys_RateLimitCoolsOnlyTheKey(t *testing.T) {
	r := newResilient(t)
	r.stickyOff() // a session would keep its key: this is about the keys' share call by call
	up := fake(t)
	spec, keyA, keyB := twoKeyChannel(up, "rl")
	up.Set(relaytest.ForKey(keyA, relaytest.Fail(relaytest.RateLimited(30*time.Second))))
	id := r.channel(spec)

	before := time.Now()
	const n = 10
	cooled := 0
	for i := range n {
		a := r.chat(chatBody(rsModel, false))
		a.mustOK(t)
		l := r.logOf(a.reqID)
		last := l.Attempts.V[len(l.Attempts.V)-1]
		if last.KeyIndex != 1 || last.Class != "" {
			t.Fatalf("call %d: attempts %+v, want key b (index 1) to serve", i, l.Attempts.V)
		}
		if len(l.Attempts.V) == 2 {
			cooled++
			if f := l.Attempts.V[0]; f.KeyIndex != 0 || f.Class != "rate_limited" || f.Status != http.StatusTooManyRequests {
				t.Fatalf("call %d: first attempt %+v, want key a rate_limited 429", i, f)
			}
		}
	}
	if got := keyRequests(up); cooled != 1 || got[keyA] != 1 || got[keyB] != n {
		t.Fatalf("requests per key %v with %d failovers; want key a once (then cooling), key b %d", got, cooled, n)
	}
	h := r.health(id)
	if h.State != "closed" || len(h.Keys) != 2 {
		t.Fatalf("channel state %q with %d keys, want closed: one 429 must not trip the breaker", h.State, len(h.Keys))
	}
	if k := h.Keys[0]; k.State != "cooling" || k.CooldownUntil == nil ||
		k.CooldownUntil.Before(before.Add(29*time.Second)) || k.CooldownUntil.After(time.Now().Add(31*time.Second)) {
		t.Fatalf("key a = %+v, want cooling until about 30 s after its 429", k)
	}
	if h.Keys[1].State != "ok" {
		t.Fatalf("key b state %q, want ok", h.Keys[1].State)
	}
	r.checkBooks(n)
}

// A 401 disables the one key; the channel keeps serving through its other key.
func TestKeys_AuthFailureDisablesOnlyTheKey(t *testing.T) {
	r := newResilient(t)
	r.stickyOff() // a session would keep its key: this is about the keys' share call by call
	up := fake(t)
	spec, keyA, keyB := twoKeyChannel(up, "auth")
	up.Set(relaytest.ForKey(keyA, relaytest.Fail(relaytest.InvalidKey())))
	id := r.channel(spec)

	const n = 8
	for i := range n {
		a := r.chat(chatBody(rsModel, false))
		a.mustOK(t)
		l := r.logOf(a.reqID)
		if att := attemptsOf(l); att != fmt.Sprintf("%d:ok", id) && att != fmt.Sprintf("%d:auth,%d:ok", id, id) {
			t.Fatalf("call %d: attempts %s", i, att)
		}
	}
	if got := keyRequests(up); got[keyA] != 1 || got[keyB] != n {
		t.Fatalf("requests per key %v, want key a once (then disabled), key b %d", got, n)
	}
	h := r.health(id)
	if h.State != "closed" || h.Status != "enabled" || h.Keys[0].State != "disabled" || h.Keys[1].State != "ok" {
		t.Fatalf("health %+v, want an enabled closed channel with key a disabled and key b ok", h)
	}
	if st := r.channelStatus(id); st != "enabled" {
		t.Fatalf("channel status %q, want enabled while one key is left", st)
	}
	r.checkBooks(n)
}

// When every key of a channel is refused the channel becomes auto_disabled and traffic moves elsewhere.
func TestKeys_AllKeysRefusedAutoDisablesTheChannel(t *testing.T) {
	r := newResilient(t)
	dead, spare := fake(t, relaytest.Fail(relaytest.InvalidKey())), fake(t)
	deadID := r.channel(openaiChannel(dead, "sk-dead-1", "sk-dead-2").at(10))
	spareID := r.channel(openaiChannel(spare))

	a := r.chat(chatBody(rsModel, false))
	a.mustOK(t)
	l := r.logOf(a.reqID)
	if want := fmt.Sprintf("%d:auth,%d:auth,%d:ok", deadID, deadID, spareID); attemptsOf(l) != want {
		t.Fatalf("attempts %s, want %s (each key once, then the other channel)", attemptsOf(l), want)
	}
	waitUntil(t, 10*time.Second, "the channel to be auto-disabled", func() bool { return r.channelStatus(deadID) == "auto_disabled" })
	h := r.health(deadID)
	if h.State != "disabled" || h.Status != "auto_disabled" || h.Keys[0].State != "disabled" || h.Keys[1].State != "disabled" {
		t.Fatalf("health %+v, want the channel and both keys disabled", h)
	}
	for i := range 5 {
		a := r.chat(chatBody(rsModel, false, "prompt_cache_key", fmt.Sprintf("after-%d", i)))
		a.mustOK(t)
		if l := r.logOf(a.reqID); attemptsOf(l) != fmt.Sprintf("%d:ok", spareID) {
			t.Fatalf("call %d after auto-disable: attempts %s, want the other channel at once", i, attemptsOf(l))
		}
	}
	if dead.Count() != 2 {
		t.Fatalf("the refused channel got %d requests, want 2 (one per key, then none)", dead.Count())
	}
	r.checkBooks(6)
}

// The recovery schedule never hands a bad key back to traffic because its healthy sibling passed a test: a
// cooling key is left to its Retry-After, and a revoked key is probed itself (and stays disabled).
func TestKeys_ScheduledTestsDoNotReviveKeysThroughASibling(t *testing.T) {
	r := newResilient(t)
	// Key b (index 1) is the bad one in both channels: a test of key 0 passes and must not clear key b.
	cool, rev := fake(t), fake(t)
	coolSpec, _, coolB := twoKeyChannel(cool, "cool")
	revSpec, _, revB := twoKeyChannel(rev, "rev")
	cool.Set(relaytest.ForKey(coolB, relaytest.Fail(relaytest.RateLimited(time.Minute))))
	rev.Set(relaytest.ForKey(revB, relaytest.Fail(relaytest.InvalidKey())))
	revSpec.Type, revSpec.Models = "anthropic", []string{rsClaude} // its own model: each channel sees its calls
	coolID, revID := r.channel(coolSpec), r.channel(revSpec)
	for range 3 {
		r.chat(chatBody(rsModel, false)).mustOK(t)
		r.do("/v1/messages", r.key, messagesBody(rsClaude, false)).mustOK(t)
	}
	if got, got2 := keyRequests(cool), keyRequests(rev); got[coolB] != 1 || got2[revB] != 1 {
		t.Fatalf("requests per key %v and %v, want each key b tried once", got, got2)
	}
	if h := r.health(coolID); h.Keys[1].State != "cooling" {
		t.Fatalf("key b state %q, want cooling", h.Keys[1].State)
	}
	if h := r.health(revID); h.Keys[1].State != "disabled" {
		t.Fatalf("revoked key b state %q, want disabled", h.Keys[1].State)
	}

	// A channel whose only key is refused needs recovery, so its scheduled tests show when a run is over.
	broken := fake(t, relaytest.Fail(relaytest.InvalidKey()))
	brokenID := r.channel(openaiChannel(broken, "sk-broken").at(-10))
	if res := r.root.Do("POST", fmt.Sprintf("/api/admin/channels/%d/test", brokenID), nil); res.Status != http.StatusOK {
		t.Fatalf("test broken channel: %d %s", res.Status, res.Body)
	}
	r.settings(map[string]any{"channel_test_interval": 1})
	// Two scheduled tests of the broken channel: the run holding the first is then finished.
	waitUntil(t, 30*time.Second, "two scheduled runs", func() bool {
		return len(r.allLogs("channel_id = ? AND is_test = ? AND user_id = ?", brokenID, true, 0)) >= 2
	})
	r.settings(map[string]any{"channel_test_interval": 0})

	if h := r.health(coolID); h.Keys[1].State != "cooling" {
		t.Fatalf("after scheduled runs the cooling key is %q, want still cooling until its Retry-After", h.Keys[1].State)
	}
	if n := len(r.allLogs("channel_id = ? AND is_test = ?", coolID, true)); n != 0 {
		t.Fatalf("the schedule tested a channel whose only trouble is a cooling key (%d tests)", n)
	}
	if h := r.health(revID); h.Keys[1].State != "disabled" {
		t.Fatalf("after scheduled runs the revoked key is %q, want still disabled", h.Keys[1].State)
	}
	for _, l := range r.allLogs("channel_id = ? AND is_test = ?", revID, true) {
		if a := l.Attempts.V[0]; a.KeyIndex != 1 || a.Class != "auth" {
			t.Fatalf("scheduled test of the revoked channel used key %d (class %q), want the revoked key 1", a.KeyIndex, a.Class)
		}
	}
	coolBefore, revBefore := keyRequests(cool)[coolB], keyRequests(rev)[revB]
	for range 4 {
		r.chat(chatBody(rsModel, false)).mustOK(t)
		r.do("/v1/messages", r.key, messagesBody(rsClaude, false)).mustOK(t)
	}
	if keyRequests(cool)[coolB] != coolBefore || keyRequests(rev)[revB] != revBefore {
		t.Fatalf("a bad key got relay traffic again: cooling %v, revoked %v", keyRequests(cool), keyRequests(rev))
	}
}

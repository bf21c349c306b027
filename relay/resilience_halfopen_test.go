package relay_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"tollgate/relay/relaytest"
	"tollgate/service/health"
)

// slowRecovery keeps an OPEN channel open for an hour unless a test moves it: only the behaviour under test
// (tests, probes, the ramp) can bring it back during the test.
var slowRecovery = withHealth(health.Config{ConsecutiveFails: 2, BaseCooldown: time.Hour, MaxCooldown: time.Hour,
	HalfOpenProbes: 1, CloseAfter: 2})

// openByFailures makes up fail with 5xx and sends calls until the channel id is OPEN.
func (r *resilient) openByFailures(up *relaytest.Upstream, id int64) {
	r.t.Helper()
	up.Set(relaytest.Fail(relaytest.ServerError()))
	for i := 0; r.health(id).State != "open"; i++ {
		if i == 40 {
			r.t.Fatalf("channel %d never opened", id)
		}
		r.chat(chatBody(rsModel, false, "prompt_cache_key", fmt.Sprintf("open-%d-%d", id, i))).mustOK(r.t)
	}
	up.Reset()
}

func (r *resilient) passTest(id int64, key int) {
	r.t.Helper()
	if res, tr := r.testChannel(id, map[string]any{"key": key}); res.Status != http.StatusOK || !tr.OK {
		r.t.Fatalf("test of channel %d key %d: %d %s", id, key, res.Status, res.Body)
	}
}

// A passing test of an OPEN channel moves it to HALF_OPEN, not straight to full traffic: live calls probe it
// one at a time, and it closes after close_after probe successes.
func TestRecovery_PassingTestOfOpenChannelGoesHalfOpenThenProbesClose(t *testing.T) {
	r := newResilient(t, slowRecovery)
	up := fake(t)
	id := r.channel(openaiChannel(up).at(10))
	r.channel(openaiChannel(fake(t)))
	r.openByFailures(up, id)

	r.passTest(id, 0)
	if h := r.health(id); h.State != "half_open" {
		t.Fatalf("after a passing test of an OPEN channel: %+v, want half_open", h)
	}
	for i, want := range []string{"half_open", "closed"} {
		a := r.chat(chatBody(rsModel, false, "prompt_cache_key", fmt.Sprintf("probe-%d", i)))
		a.mustOK(t)
		if l := r.logOf(a.reqID); attemptsOf(l) != fmt.Sprintf("%d:ok", id) {
			t.Fatalf("probe %d: attempts %s, want the half-open channel %d", i, attemptsOf(l), id)
		}
		if got := r.health(id).State; got != want {
			t.Fatalf("after %d probe successes (close_after 2): %s, want %s", i+1, got, want)
		}
	}
}

// A passing test clears only the key it used: a sibling refused by the upstream stays refused until a test
// of its own passes.
func TestRecovery_PassingTestClearsOnlyTheTestedKey(t *testing.T) {
	r := newResilient(t)
	up, id, _ := r.revokedChannel()
	up.Reset()
	r.passTest(id, 1)
	h := r.health(id)
	if h.Keys[0].State != "disabled" || h.Keys[1].State != "ok" {
		t.Fatalf("after a pass of key 1: keys %+v, want key 0 still disabled and key 1 ok", h.Keys)
	}
	if st := r.channelStatus(id); st != "enabled" {
		t.Fatalf("status %q after a passing test, want enabled", st)
	}
	a := r.chat(chatBody(rsModel, false, "prompt_cache_key", "after-key-1"))
	a.mustOK(t)
	if last, _ := up.Last(); last.Key != "sk-rec-2" {
		t.Fatalf("live call used upstream key %q, want the cleared sk-rec-2", last.Key)
	}
	r.passTest(id, 0)
	r.expectRecovered(id)
}

// A channel back from OPEN ramps up: right after it closes its share of traffic is far below its weight
// share (10 % of its weight), and after the ramp it gets its full share. Two channels of equal weight on
// one tier; counts are binomial with ≥ 6 standard deviations of margin.
func TestRecovery_RecoveredChannelRampsBackToItsWeight(t *testing.T) {
	r := newResilient(t, slowRecovery)
	upA, upB := fake(t), fake(t)
	a := r.channel(openaiChannel(upA))
	r.channel(openaiChannel(upB))
	r.openByFailures(upA, a)
	r.settings(map[string]any{"recovery_ramp": 3600}) // the ramp barely moves while the calls below run

	// OPEN → HALF_OPEN → CLOSED by tests (a quiet channel gets no live probes); the ramp starts at the close.
	for range 3 {
		r.passTest(a, 0)
	}
	if h := r.health(a); h.State != "closed" {
		t.Fatalf("after three passing tests: %+v, want closed", h)
	}
	share := func(n int, tag string) int {
		before := len(upA.Requests())
		for i := range n {
			r.chat(chatBody(rsModel, false, "prompt_cache_key", fmt.Sprintf("%s-%d", tag, i))).mustOK(t)
		}
		return len(upA.Requests()) - before
	}
	// Weight share 1/2; ramp share 0.1/1.1 ≈ 9 %: mean 18 of 200, sd ≈ 4.
	if got := share(200, "ramp"); got == 0 || got >= 50 {
		t.Fatalf("right after recovery the channel served %d of 200 calls, want ≈ 18 (far below its half)", got)
	}
	// The ramp is over once it is shorter than the time since the close: full weight again, mean 100, sd ≈ 7.
	r.settings(map[string]any{"recovery_ramp": 1})
	time.Sleep(1100 * time.Millisecond)
	if got := share(200, "full"); got < 60 || got > 140 {
		t.Fatalf("after the ramp the channel served %d of 200 calls, want ≈ 100", got)
	}
}

// The channel test goes through the live send path: an upstream that requires a header given by the
// channel's header_override (and gets the mapped model and body override) passes both live traffic and the
// test, so scheduled recovery can bring it back.
func TestProbe_TestSendsTheChannelsOverridesLikeLiveTraffic(t *testing.T) {
	r := newResilient(t)
	h := relaytest.NewHandler()
	t.Cleanup(h.Close)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get("X-Upstream-Tenant") != "acme" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":{"message":"missing X-Upstream-Tenant","type":"invalid_request_error"}}`))
			return
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	spec := struct {
		chanSpec
		HeaderOverride map[string]string `json:"header_override"`
		BodyOverride   map[string]any    `json:"body_override"`
	}{chanSpec: chanSpec{Type: "openai", Name: "tenant", BaseURL: srv.URL, Keys: []string{"sk-tenant-0"},
		Models: []string{rsModel}, ModelMapping: map[string]string{rsModel: "gpt-4o"}},
		HeaderOverride: map[string]string{"X-Upstream-Tenant": "acme"},
		BodyOverride:   map[string]any{"set": map[string]any{"user": "tollgate-tenant"}}}
	res := r.root.Do("POST", "/api/admin/channels", spec)
	if res.Status != http.StatusCreated {
		t.Fatalf("create channel: %d %s", res.Status, res.Body)
	}
	var ch struct {
		ID int64 `json:"id"`
	}
	res.JSON(t, &ch)

	r.chat(chatBody(rsModel, false)).mustOK(t)
	live, _ := h.Last()
	res, tr := r.testChannel(ch.ID, nil)
	if res.Status != http.StatusOK || !tr.OK || tr.Status != http.StatusOK {
		t.Fatalf("test of a channel that serves live traffic: %d %s", res.Status, res.Body)
	}
	test, _ := h.Last()
	if test.Seq == live.Seq {
		t.Fatal("the test never reached the upstream")
	}
	for name, got := range map[string]relaytest.Request{"live": live, "test": test} {
		if got.Model != "gpt-4o" || got.Get("user").String() != "tollgate-tenant" || got.Header.Get("X-Upstream-Tenant") != "acme" {
			t.Fatalf("%s request: model %q user %q tenant %q, want the mapping and both overrides", name, got.Model,
				got.Get("user").String(), got.Header.Get("X-Upstream-Tenant"))
		}
	}
}

package relay_test

import (
	"fmt"
	"testing"
	"time"

	"tollgate/relay/relaytest"
	"tollgate/service/health"
)

// The channel breaker end to end: 5xx bursts open it (traffic goes elsewhere, the open channel sees none),
// the cooldown turns it half open, a failing probe reopens it for longer, and probe successes close it.
func TestBreaker_OpensHalfOpensReopensAndCloses(t *testing.T) {
	const base = 3 * time.Second
	r := newResilient(t, withHealth(health.Config{BaseCooldown: base}))
	flaky, spare := fake(t, relaytest.Fail(relaytest.ServerError())), fake(t)
	flakyID := r.channel(openaiChannel(flaky).at(10))
	spareID := r.channel(openaiChannel(spare))
	failover := fmt.Sprintf("%d:server,%d:ok", flakyID, spareID)
	direct := fmt.Sprintf("%d:ok", spareID)
	calls := 0
	call := func(want string) {
		t.Helper()
		calls++
		a := r.chat(chatBody(rsModel, false, "prompt_cache_key", fmt.Sprintf("breaker-%d", calls))) // no sticky steering
		a.mustOK(t)
		if got := attemptsOf(r.logOf(a.reqID)); got != want {
			t.Fatalf("call %d: attempts %s, want %s", calls, got, want)
		}
	}

	// CLOSED → OPEN: each failure still ends in an answer from the spare channel.
	for r.health(flakyID).State == "closed" {
		if calls == 20 {
			t.Fatalf("breaker still closed after %d consecutive 5xx", calls)
		}
		call(failover)
	}
	h := r.health(flakyID)
	if h.State != "open" || h.Trips != 1 || h.CooldownUntil == nil || time.Until(*h.CooldownUntil) > base {
		t.Fatalf("after %d failures: %+v, want open for at most %s after the first trip", calls, h, base)
	}
	if flaky.Count() != calls {
		t.Fatalf("flaky upstream saw %d requests for %d calls", flaky.Count(), calls)
	}
	call(direct)
	if flaky.Count() != calls-1 {
		t.Fatalf("an open channel received a request")
	}

	// OPEN → HALF_OPEN after the cooldown; a failing probe reopens with a doubled cooldown.
	waitUntil(t, 2*base, "half_open", func() bool { return r.health(flakyID).State == "half_open" })
	before := time.Now()
	call(failover)
	h = r.health(flakyID)
	if h.State != "open" || h.Trips != 2 || h.CooldownUntil == nil || h.CooldownUntil.Sub(before) < 2*base {
		t.Fatalf("after a failing probe: %+v, want open again with a cooldown of at least %s", h, 2*base)
	}

	// The upstream recovers. HALF_OPEN admits one probe at a time: while a slow probe is in flight, other
	// calls go elsewhere; two probe successes close the breaker.
	flaky.Reset(relaytest.WithHeaderDelay(700 * time.Millisecond))
	waitUntil(t, 3*base, "half_open again", func() bool { return r.health(flakyID).State == "half_open" })
	probeDone := make(chan *answer, 1)
	go func() {
		probeDone <- r.do("/v1/chat/completions", r.key, chatBody(rsModel, false, "prompt_cache_key", "breaker-probe"))
	}()
	waitUntil(t, 10*time.Second, "the probe to reach the upstream", func() bool { return flaky.Active() == 1 })
	call(direct)
	probe := <-probeDone
	probe.mustOK(t)
	calls++
	if got := attemptsOf(r.logOf(probe.reqID)); got != fmt.Sprintf("%d:ok", flakyID) {
		t.Fatalf("probe attempts %s, want the half-open channel", got)
	}
	if st := r.health(flakyID).State; st != "half_open" {
		t.Fatalf("after one probe success the state is %q, want half_open (two close it)", st)
	}
	flaky.Reset()
	call(fmt.Sprintf("%d:ok", flakyID))
	if h := r.health(flakyID); h.State != "closed" || h.Trips != 0 {
		t.Fatalf("after two probe successes: %+v, want closed with trips reset", h)
	}
	call(fmt.Sprintf("%d:ok", flakyID)) // closed: the higher tier serves again
	r.checkBooks(calls)
}

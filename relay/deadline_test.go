package relay_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"tollgate/model"
	"tollgate/relay/relaytest"
)

// hungChannels adds three channels of one protocol on the same tier whose first byte never comes, each
// with a long (10 s) first-byte timeout of its own: without request-wide budgets a call waits 3 × 10 s.
func (r *resilient) hungChannels(anthropic bool) []*relaytest.Upstream {
	r.t.Helper()
	ups := make([]*relaytest.Upstream, 3)
	for i := range ups {
		ups[i] = fake(r.t, relaytest.Fail(relaytest.Hang()))
		spec := openaiChannel(ups[i])
		if anthropic {
			spec = anthropicChannel(ups[i])
		}
		spec.Timeouts = &model.Timeouts{FirstByteMs: 10_000}
		r.channel(spec)
	}
	return ups
}

func upstreamCalls(ups []*relaytest.Upstream) int {
	n := 0
	for _, u := range ups {
		n += len(u.Requests())
	}
	return n
}

// The first-byte budget and the request deadline bound a caller's wait across all attempts: three channels
// that never answer, each with a 10 s first-byte timeout, answer 504 after ≈ the budget (1 s), not after
// 30 s; in the caller's protocol, with no hold left, nothing billed and the log saying timeout.
func TestDeadline_BudgetsBoundTheWaitAcrossAttempts(t *testing.T) {
	r := newResilient(t)
	oa, an := r.hungChannels(false), r.hungChannels(true)
	cases := []struct {
		name     string
		settings map[string]any
		code     string
	}{
		{"first-byte budget", map[string]any{"first_byte_budget": 1, "request_deadline": 600}, "first_byte_deadline"},
		{"request deadline", map[string]any{"first_byte_budget": 300, "request_deadline": 1}, "request_deadline"},
	}
	calls := 0
	for _, tc := range cases {
		r.settings(tc.settings)
		before := upstreamCalls(oa) + upstreamCalls(an)

		a := r.chat(chatBody(rsModel, false, "prompt_cache_key", tc.name))
		calls++
		openAIErr(t, a, http.StatusGatewayTimeout, tc.code)
		b := r.do("/v1/messages", r.key, messagesBody(rsClaude, true))
		calls++
		anthropicErr(t, b, http.StatusGatewayTimeout, "")
		for _, x := range []*answer{a, b} {
			if x.elapsed < 900*time.Millisecond || x.elapsed > 4*time.Second {
				t.Fatalf("%s: answered after %v, want ≈ the 1 s budget", tc.name, x.elapsed)
			}
			l := r.logOf(x.reqID)
			if l.Status != "error" || l.ErrorClass != "timeout" || l.HTTPStatus != http.StatusGatewayTimeout || l.Cost != 0 ||
				!strings.Contains(l.Error, "request deadline") && !strings.Contains(l.Error, "first-byte budget") {
				t.Fatalf("%s: log row %+v, want an unbilled timeout naming the budget", tc.name, l)
			}
		}
		// One attempt each: the budget was spent on it and no retry had time left.
		if got := upstreamCalls(oa) + upstreamCalls(an) - before; got != 2 {
			t.Fatalf("%s: %d upstream attempts for 2 calls, want 1 each", tc.name, got)
		}
	}
	r.checkBooks(calls) // no hold left behind: live and SQL balances untouched
	// The budget cut the attempts, not the channels' own timeouts: no channel is blamed for it.
	for id := range r.node.App.Channels.Snapshot().ByID {
		if h := r.health(id); h.State != "closed" {
			t.Fatalf("channel %d is %s after budget cuts", id, h.State)
		}
	}
}

// A stream that is already flowing when the request deadline fires ends the way the channel's own total
// timeout ends it: an error event in the caller's protocol after the delivered events, billed for what was
// delivered, logged as a timeout.
func TestDeadline_CommittedStreamEndsWithAnErrorEvent(t *testing.T) {
	r := newResilient(t)
	up := fake(t, relaytest.WithChunks(40), relaytest.WithChunkDelay(100*time.Millisecond))
	id := r.channel(openaiChannel(up))
	r.settings(map[string]any{"request_deadline": 1})
	a := r.chat(chatBody(rsModel, true))
	a.mustOK(t)
	if a.elapsed > 3*time.Second {
		t.Fatalf("stream ran %v past a 1 s deadline", a.elapsed)
	}
	last := a.events[len(a.events)-1]
	if !strings.Contains(last.data, `"error"`) || len(a.events) < 3 {
		t.Fatalf("stream of %d events ended with %q, want deltas then an error event", len(a.events), last.data)
	}
	l := r.logOf(a.reqID)
	if l.ErrorClass != "timeout" || l.Cost <= 0 || l.CompletionTokens <= 0 {
		t.Fatalf("log row %+v, want a timeout billed for the delivered part", l)
	}
	// The request's own limit cut the stream: the channel's health counts it as canceled, not as a timeout.
	h := r.root.Do("GET", fmt.Sprintf("/api/admin/channels/%d/health", id), nil)
	if c := gjson.GetBytes(h.Body, "metrics.counts.1m.by_class"); c.Get("timeout").Int() != 0 || c.Get("canceled").Int() != 1 {
		t.Fatalf("channel health counts %s, want the cut stream as canceled", c.Raw)
	}
	r.checkBooks(1)
}

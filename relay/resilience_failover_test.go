package relay_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"tollgate/relay/relaytest"
)

// A failing channel is retried on the rest of its own priority tier first: the lower tier sees nothing while
// a healthy sibling exists, and the log row tells the story attempt by attempt.
func TestFailover_TriesSameTierBeforeLowerTier(t *testing.T) {
	r := newResilient(t)
	bad, good, low := fake(t, relaytest.Fail(relaytest.ServerError())), fake(t), fake(t)
	badSpec := openaiChannel(bad).at(10)
	badSpec.Weight = 1000 // nearly always the first pick, so the failover path is what gets exercised
	badID := r.channel(badSpec)
	goodID := r.channel(openaiChannel(good).at(10))
	lowID := r.channel(openaiChannel(low))

	// A distinct session per call: no sticky binding steers the pick, the tiers alone decide.
	const n = 8
	failedOver := 0
	for i := range n {
		a := r.chat(chatBody(rsModel, false, "prompt_cache_key", fmt.Sprintf("tiers-%d", i)))
		a.mustOK(t)
		l := r.logOf(a.reqID)
		if l.ChannelID != goodID || l.Status != "success" {
			t.Fatalf("request %d: served by channel %d (%s), want the healthy same-tier channel %d", i, l.ChannelID, l.Status, goodID)
		}
		switch got := attemptsOf(l); got {
		case fmt.Sprintf("%d:ok", goodID):
		case fmt.Sprintf("%d:server,%d:ok", badID, goodID):
			failedOver++
			if l.Attempts.V[0].Status != http.StatusInternalServerError || l.Attempts.V[0].KeyIndex != 0 {
				t.Fatalf("failed attempt = %+v, want status 500 on key 0", l.Attempts.V[0])
			}
		default:
			t.Fatalf("request %d: attempts %s, want the failing channel then the healthy sibling", i, got)
		}
	}
	if low.Count() != 0 {
		t.Fatalf("lower tier received %d requests while the top tier had a healthy channel", low.Count())
	}
	if failedOver == 0 || failedOver != bad.Count() {
		t.Fatalf("%d rows show a failover, the failing upstream saw %d requests", failedOver, bad.Count())
	}
	r.checkBooks(n)

	// Only when the whole top tier fails does the lower tier answer.
	good.Set(relaytest.Fail(relaytest.ServerError()))
	a := r.chat(chatBody(rsModel, false, "prompt_cache_key", "tiers-last"))
	a.mustOK(t)
	l := r.logOf(a.reqID)
	att := attemptsOf(l)
	if l.ChannelID != lowID || !strings.Contains(att, fmt.Sprintf("%d:server", goodID)) || !strings.HasSuffix(att, fmt.Sprintf(",%d:ok", lowID)) {
		t.Fatalf("with the top tier down: channel %d, attempts %s; want the top tier's failures then %d", l.ChannelID, att, lowID)
	}
	if low.Count() != 1 {
		t.Fatalf("lower tier received %d requests, want 1", low.Count())
	}
	r.checkBooks(n + 1)
}

// Once the first event of a stream reached the client the answer is the client's: no retry on another
// channel, the stream ends with an error event in the caller's protocol, and what was delivered is billed.
func TestFailover_NoRetryAfterFirstStreamedEvent(t *testing.T) {
	cases := []struct {
		name, path, chType, model string
		body                      map[string]any
		content                   func(sseEvent) (string, bool)
		isError                   func(sseEvent) bool
	}{
		{
			name: "openai", path: "/v1/chat/completions", chType: "openai", model: rsModel, body: chatBody(rsModel, true),
			content: func(ev sseEvent) (string, bool) {
				var c struct {
					Choices []struct {
						Delta struct {
							Content *string `json:"content"`
						} `json:"delta"`
					} `json:"choices"`
				}
				if json.Unmarshal([]byte(ev.data), &c) != nil || len(c.Choices) == 0 || c.Choices[0].Delta.Content == nil {
					return "", false
				}
				return *c.Choices[0].Delta.Content, true
			},
			isError: func(ev sseEvent) bool {
				var e struct {
					Error *struct{ Message, Type string } `json:"error"`
				}
				return json.Unmarshal([]byte(ev.data), &e) == nil && e.Error != nil && e.Error.Message != "" && e.Error.Type == "server_error"
			},
		},
		{
			name: "anthropic", path: "/v1/messages", chType: "anthropic", model: rsClaude, body: messagesBody(rsClaude, true),
			content: func(ev sseEvent) (string, bool) {
				var d struct {
					Delta struct{ Text string } `json:"delta"`
				}
				if ev.name != "content_block_delta" || json.Unmarshal([]byte(ev.data), &d) != nil {
					return "", false
				}
				return d.Delta.Text, true
			},
			isError: func(ev sseEvent) bool {
				var e struct {
					Type  string                          `json:"type"`
					Error *struct{ Type, Message string } `json:"error"`
				}
				return ev.name == "error" && json.Unmarshal([]byte(ev.data), &e) == nil && e.Type == "error" && e.Error != nil && e.Error.Message != ""
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newResilient(t)
			cut, spare := fake(t, relaytest.Fail(relaytest.Reset(2))), fake(t)
			cutSpec, spareSpec := openaiChannel(cut).at(10), openaiChannel(spare)
			cutSpec.Type, spareSpec.Type = tc.chType, tc.chType
			cutSpec.Models, spareSpec.Models = []string{tc.model}, []string{tc.model}
			cutID := r.channel(cutSpec)
			r.channel(spareSpec)

			a := r.do(tc.path, r.key, tc.body)
			if a.status != http.StatusOK || len(a.events) == 0 {
				t.Fatalf("status %d with %d events (body %s), want a committed stream", a.status, len(a.events), a.body)
			}
			var text []string
			for _, ev := range a.events[:len(a.events)-1] {
				if s, ok := tc.content(ev); ok && s != "" {
					text = append(text, s)
				}
				if ev.data == "[DONE]" || ev.name == "message_stop" || tc.isError(ev) {
					t.Fatalf("unexpected %q %s before the end of a cut stream", ev.name, ev.data)
				}
			}
			if len(text) != 2 {
				t.Fatalf("client got %d content events %q, want the 2 the upstream sent", len(text), text)
			}
			if last := a.events[len(a.events)-1]; !tc.isError(last) {
				t.Fatalf("stream ended with %q %s, want a protocol error event", last.name, last.data)
			}
			if cut.Count() != 1 || spare.Count() != 0 {
				t.Fatalf("upstream requests: cut %d, spare %d; want exactly one, no retry", cut.Count(), spare.Count())
			}
			l := r.logOf(a.reqID)
			if l.ChannelID != cutID || l.ErrorClass != "reset" || l.HTTPStatus != http.StatusOK || len(l.Attempts.V) != 1 {
				t.Fatalf("log: channel %d class %q http %d attempts %s", l.ChannelID, l.ErrorClass, l.HTTPStatus, attemptsOf(l))
			}
			// Billed for the delivered part only: tokens counted locally, far fewer than a full answer.
			if l.Cost <= 0 || !l.UsageEstimated || l.CompletionTokens <= 0 || l.CompletionTokens >= relaytest.DefaultCompletionTokens {
				t.Fatalf("log: cost %d estimated %v completion %d; want a charge for the 2 delivered chunks",
					l.Cost, l.UsageEstimated, l.CompletionTokens)
			}
			r.checkBooks(1)
		})
	}
}

// Calls carrying one session id stick to the channel that first served them; when that channel starts
// failing the next call fails over and the session re-binds to the healthy channel (never glued on a bad one).
func TestSticky_SessionStaysThenRebindsOnFailure(t *testing.T) {
	r := newResilient(t)
	ups := map[int64]*relaytest.Upstream{}
	for range 3 {
		up := fake(t)
		ups[r.channel(openaiChannel(up))] = up
	}
	sess := chatBody(rsModel, false, "prompt_cache_key", "conversation-42")
	l := r.logOf(r.chat(sess).reqID)
	bound := l.ChannelID
	if l.Sticky != "miss:session" || ups[bound] == nil {
		t.Fatalf("first call: channel %d sticky %q, want a miss on the session key", bound, l.Sticky)
	}
	const calls = 10
	for i := 1; i < calls; i++ {
		a := r.chat(sess)
		a.mustOK(t)
		if l := r.logOf(a.reqID); l.ChannelID != bound || l.Sticky != "hit:session" {
			t.Fatalf("call %d: channel %d sticky %q, want %d hit:session", i, l.ChannelID, l.Sticky, bound)
		}
	}
	for id, up := range ups {
		if want := map[bool]int{true: calls, false: 0}[id == bound]; up.Count() != want {
			t.Fatalf("channel %d got %d requests, want %d", id, up.Count(), want)
		}
	}

	ups[bound].Set(relaytest.Fail(relaytest.ServerError()))
	a := r.chat(sess)
	a.mustOK(t)
	l = r.logOf(a.reqID)
	rebound := l.ChannelID
	if rebound == bound || !strings.HasPrefix(attemptsOf(l), fmt.Sprintf("%d:server,", bound)) {
		t.Fatalf("after the bound channel failed: served by %d, attempts %s", rebound, attemptsOf(l))
	}
	for i := range 5 {
		a := r.chat(sess)
		a.mustOK(t)
		l := r.logOf(a.reqID)
		if l.ChannelID != rebound || l.Sticky != "hit:session" || len(l.Attempts.V) != 1 {
			t.Fatalf("call %d after re-binding: channel %d sticky %q attempts %s, want %d hit:session first try",
				i, l.ChannelID, l.Sticky, attemptsOf(l), rebound)
		}
	}
	if ups[bound].Count() != calls+1 {
		t.Fatalf("the failing channel got %d requests, want %d (one failed try, then none)", ups[bound].Count(), calls+1)
	}
	r.checkBooks(calls + 6)
}

// Claude's metadata.user_id is a session id too.
func TestSticky_ClaudeUserIDSticks(t *testing.T) {
	r := newResilient(t)
	ups := map[int64]*relaytest.Upstream{}
	for range 3 {
		up := fake(t)
		spec := openaiChannel(up)
		spec.Type, spec.Models = "anthropic", []string{rsClaude}
		ups[r.channel(spec)] = up
	}
	body := messagesBody(rsClaude, false, "metadata", map[string]any{"user_id": "user_0a1b_account__session_77"})
	var bound int64
	for i := range 6 {
		a := r.do("/v1/messages", r.key, body)
		a.mustOK(t)
		l := r.logOf(a.reqID)
		want := "hit:session"
		if i == 0 {
			bound, want = l.ChannelID, "miss:session"
		}
		if l.ChannelID != bound || l.Sticky != want {
			t.Fatalf("call %d: channel %d sticky %q, want %d %s", i, l.ChannelID, l.Sticky, bound, want)
		}
	}
	if ups[bound].Count() != 6 {
		t.Fatalf("bound channel got %d of 6 calls", ups[bound].Count())
	}
}

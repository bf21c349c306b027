package relay_test

// Streams: every event reaches the client when the upstream sends it; a stream cut by the upstream or by the
// client is billed for what was delivered (never nothing, never the estimate); an upstream without usage is
// billed by local token count; time to first byte is logged.

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"tollgate/model"
	"tollgate/relay/relaytest"
)

// contentEvents keeps the events that carry generated text, in each protocol's shape.
func contentEvents(evs []sseEvent) []sseEvent {
	var out []sseEvent
	for _, e := range evs {
		if contentOf(e) != "" {
			out = append(out, e)
		}
	}
	return out
}

func contentOf(e sseEvent) string {
	d := gjson.Parse(e.data)
	switch d.Get("type").String() {
	case "content_block_delta":
		return d.Get("delta.text").String()
	case "response.output_text.delta":
		return d.Get("delta").String()
	}
	return d.Get("choices.0.delta.content").String()
}

// streamCase is one streaming endpoint driven with a raw client.
type streamCase struct {
	name, path string
	body       map[string]any
	full       int64 // cost of the complete answer (fake usage 10 + 20)
}

func streamCases() []streamCase {
	return []streamCase{
		{"chat", "/v1/chat/completions", chatBody("gpt-4o-mini", true), 50},
		{"responses", "/v1/responses", map[string]any{"model": "gpt-4o-mini", "input": "hi", "stream": true}, 50},
		{"messages", "/v1/messages", messagesBody("claude-sonnet-4-5", true), 330},
	}
}

// Not parallel: Go runs it before the parallel tests start, so a busy machine does not bunch the events.
func TestStream_EachEventArrivesWhenTheUpstreamSendsIt(t *testing.T) {
	const chunks, gap = 6, 50 * time.Millisecond
	s := newStandard(t, 1_000_000, relaytest.WithChunks(chunks), relaytest.WithChunkDelay(gap))
	for _, c := range streamCases() {
		res, evs, _ := s.stream(c.path, s.key.Key, c.body)
		if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("%s: %d %s", c.name, res.StatusCode, res.Header.Get("Content-Type"))
		}
		content := contentEvents(evs)
		if len(content) != chunks {
			t.Fatalf("%s: %d content events, want %d", c.name, len(content), chunks)
		}
		// A relay that buffered would hand them over together at the end. The upstream spaces them by 50 ms:
		// most gaps must show on the client, and the first must arrive long before the last.
		spaced := 0
		for i := 1; i < len(content); i++ {
			if content[i].at.Sub(content[i-1].at) >= gap/2 {
				spaced++
			}
		}
		spread := content[len(content)-1].at.Sub(content[0].at)
		if spaced < (chunks-1)/2+1 || spread < time.Duration(chunks-1)*gap*6/10 {
			t.Fatalf("%s: events bunched: %d of %d gaps ≥ %v, first-to-last %v", c.name, spaced, chunks-1, gap/2, spread)
		}
	}
}

// lastIsError checks that a cut stream ends with the protocol's error event (and no normal end).
func lastIsError(t *testing.T, name string, evs []sseEvent) {
	t.Helper()
	if len(evs) == 0 {
		t.Fatalf("%s: no events", name)
	}
	last := evs[len(evs)-1]
	d := gjson.Parse(last.data)
	switch {
	case name == "messages":
		if last.name != "error" || d.Get("type").String() != "error" || d.Get("error.type").String() == "" || d.Get("error.message").String() == "" {
			t.Fatalf("%s: last event %q %s, want an Anthropic error event", name, last.name, last.data)
		}
	default:
		if !d.Get("error").IsObject() || d.Get("error.message").String() == "" {
			t.Fatalf("%s: last event %s, want an OpenAI error object", name, last.data)
		}
	}
	for _, e := range evs {
		if e.data == "[DONE]" || e.name == "message_stop" || gjson.Get(e.data, "type").String() == "response.completed" {
			t.Fatalf("%s: a cut stream claims a normal end: %s %s", name, e.name, e.data)
		}
	}
}

func TestStream_UpstreamCutMidwayEndsWithErrorAndBillsWhatWasDelivered(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000, relaytest.WithChunks(6), relaytest.Fail(relaytest.Reset(2)))
	spent := int64(0)
	for _, c := range streamCases() {
		res, evs, id := s.stream(c.path, s.key.Key, c.body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d", c.name, res.StatusCode)
		}
		if n := len(contentEvents(evs)); n != 2 {
			t.Fatalf("%s: %d content events before the cut, want 2", c.name, n)
		}
		lastIsError(t, c.name, evs)
		l := s.logOf(id)
		if l.Status != "error" || l.ErrorClass != "reset" || !l.UsageEstimated || l.Cost <= 0 || l.Cost >= c.full || l.CompletionTokens <= 0 || l.CompletionTokens >= 20 {
			t.Fatalf("%s: log status %s class %q estimated %v cost %d (full %d) completion %d", c.name, l.Status, l.ErrorClass,
				l.UsageEstimated, l.Cost, c.full, l.CompletionTokens)
		}
		spent += l.Cost
	}
	if got := s.liveBalance(s.alice.id); got != 1_000_000-spent {
		t.Fatalf("balance %d, want %d: a hold was left or the cut was billed twice", got, 1_000_000-spent)
	}
	s.flush()
	if u := s.sqlUser(s.alice.id); u.Quota != 1_000_000-spent {
		t.Fatalf("SQL balance %d, want %d", u.Quota, 1_000_000-spent)
	}
}

func TestStream_ClientDisconnectIsBilledForWhatWasDelivered(t *testing.T) {
	t.Parallel()
	// 1,000 chunks 25 ms apart: the upstream call would run 25 s unless the relay cancels it.
	s := newStandard(t, 1_000_000, relaytest.WithChunks(1000), relaytest.WithChunkDelay(25*time.Millisecond))
	for _, c := range streamCases() {
		up := s.oa
		if c.name == "messages" {
			up = s.an
		}
		ctx, cancel := context.WithCancel(context.Background())
		req, id := s.newRequest(ctx, "POST", c.path, s.key.Key, c.body)
		res, err := httpClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		seen := 0
		_, err = readSSE(res.Body, func(ev sseEvent, _ int) bool {
			if contentOf(ev) != "" {
				seen++
			}
			return seen == 3
		})
		cancel() // the client leaves after three content events
		res.Body.Close()
		if err != nil || seen != 3 {
			t.Fatalf("%s: read %d content events, err %v", c.name, seen, err)
		}
		waitFor(t, c.name+" upstream call to be canceled", func() bool { return up.Active() == 0 })
		l := s.logOf(id)
		hold := holdOf(t, c)
		if l.ErrorClass != "canceled" || l.Cost <= 0 || l.Cost >= c.full || l.Cost >= hold || !l.UsageEstimated {
			t.Fatalf("%s: client left after 3 events: log class %q cost %d (full answer %d, hold %d) estimated %v",
				c.name, l.ErrorClass, l.Cost, c.full, hold, l.UsageEstimated)
		}
	}
	var sum int64
	for _, l := range s.logs() {
		sum += l.Cost
	}
	if got, u := s.liveBalance(s.alice.id), s.sqlUser(s.alice.id); got != 1_000_000-sum || u.Quota != 1_000_000-sum {
		t.Fatalf("balances live %d SQL %d, want %d", got, u.Quota, 1_000_000-sum)
	}
}

// holdOf is the relay's reserve for a case: body/3 + 16 prompt tokens and max_tokens (or the default cap) out.
func holdOf(t *testing.T, c streamCase) int64 {
	t.Helper()
	b, _ := json.Marshal(c.body)
	in := int64(len(b))/3 + 16
	out := int64(4096)
	if m, ok := c.body["max_tokens"].(int); ok {
		out = int64(m)
	}
	if c.name == "messages" {
		return in*3 + out*15
	}
	return in*1 + out*2
}

func TestStream_UpstreamWithoutUsageIsBilledByLocalCount(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000, relaytest.WithUsage(false))
	counter := s.node.App.Relay.Counter
	cases := []struct {
		name, path string
		body       map[string]any
		in, out    int64 // unit prices
	}{
		{"chat", "/v1/chat/completions", chatBody("gpt-4o-mini", false), 1, 2},
		{"chat stream", "/v1/chat/completions", chatBody("gpt-4o-mini", true), 1, 2},
		{"messages", "/v1/messages", messagesBody("claude-sonnet-4-5", false), 3, 15},
		{"messages stream", "/v1/messages", messagesBody("claude-sonnet-4-5", true), 3, 15},
	}
	for _, c := range cases {
		raw, _ := json.Marshal(c.body)
		var a *answer
		if c.body["stream"] == true {
			res, evs, id := s.stream(c.path, s.key.Key, raw)
			if res.StatusCode != http.StatusOK || len(contentEvents(evs)) != 5 {
				t.Fatalf("%s: %d with %d content events", c.name, res.StatusCode, len(contentEvents(evs)))
			}
			a = &answer{status: res.StatusCode, reqID: id}
		} else {
			a = s.call("POST", c.path, s.key.Key, raw)
		}
		if a.status != http.StatusOK {
			t.Fatalf("%s: %d %s", c.name, a.status, a.body)
		}
		mdl := c.body["model"].(string)
		prompt := int64(counter.OpenAIChatPrompt(mdl, raw))
		if c.path == "/v1/messages" {
			prompt = int64(counter.AnthropicPrompt(mdl, raw))
		}
		out := int64(counter.Text(mdl, fullText))
		l := s.logOf(a.reqID)
		if prompt <= 0 || out <= 0 || l.PromptTokens != prompt || l.CompletionTokens != out || !l.UsageEstimated ||
			l.Cost != prompt*c.in+out*c.out || l.Status != "success" {
			t.Fatalf("%s: log tokens %d+%d cost %d estimated %v, want local count %d+%d cost %d", c.name, l.PromptTokens,
				l.CompletionTokens, l.Cost, l.UsageEstimated, prompt, out, prompt*c.in+out*c.out)
		}
	}
}

func TestStream_TimeToFirstByteIsLogged(t *testing.T) {
	t.Parallel()
	const delay = 150 * time.Millisecond
	s := newStandard(t, 1_000_000)
	check := func(name string, l model.UsageLog) {
		t.Helper()
		if l.FirstByteMs < delay.Milliseconds() || l.FirstByteMs > l.ElapsedMs {
			t.Fatalf("%s: first_byte_ms %d, elapsed_ms %d; the upstream held its first byte %v", name, l.FirstByteMs, l.ElapsedMs, delay)
		}
	}
	// Four 60 ms gaps follow the first event; demanding only half of them after the logged first byte
	// leaves room for scheduling delays on a loaded machine (a 20 ms pacing flaked under the full suite).
	s.oa.Set(relaytest.WithFirstChunkDelay(delay), relaytest.WithChunkDelay(60*time.Millisecond))
	_, _, id := s.stream("/v1/chat/completions", s.key.Key, chatBody("gpt-4o-mini", true))
	l := s.logOf(id)
	check("stream", l)
	if l.ElapsedMs-l.FirstByteMs < 2*60 {
		t.Fatalf("stream: first byte %d ms of %d ms: TTFB must be the first event, not the end", l.FirstByteMs, l.ElapsedMs)
	}
	s.oa.Reset(relaytest.WithHeaderDelay(delay))
	a := s.call("POST", "/v1/chat/completions", s.key.Key, chatBody("gpt-4o-mini", false))
	check("non-stream", s.logOf(a.reqID))
}

// An upstream's chunked body ends a moment after its last event ([DONE], message_stop, response.completed)
// when the two travel in separate packets. The gateway passes the last event on at once and reads the body's
// end afterwards, so the upstream connection serves the next call instead of being closed and dialled again
// (a TCP and a TLS handshake per stream). Before, it closed the body at the last event: a new connection for
// every stream of this test.
func TestStream_UpstreamConnectionIsKeptAfterTheLastEvent(t *testing.T) {
	t.Parallel()
	const end, streams = 20 * time.Millisecond, 6
	s := newStandard(t, 1_000_000, relaytest.WithEndDelay(end))
	for _, c := range streamCases() {
		up := s.oa
		if c.path == "/v1/messages" {
			up = s.an
		}
		before := up.Conns()
		for range streams {
			res, evs, _ := s.stream(c.path, s.key.Key, c.body)
			if res.StatusCode != http.StatusOK || len(contentEvents(evs)) != relaytest.DefaultChunks {
				t.Fatalf("%s: %d with %d content events", c.name, res.StatusCode, len(contentEvents(evs)))
			}
			// The next call goes out once the gateway has read the body's end (it reaches it `end` after the
			// last event); a call sent before that would rightly open a second connection.
			waitFor(t, "the upstream to finish the body", func() bool { return up.Active() == 0 })
			time.Sleep(end)
		}
		got := up.Conns() - before
		t.Logf("%s: %d upstream connections for %d streams", c.name, got, streams)
		if got > streams/2 {
			t.Fatalf("%s: %d upstream connections for %d streams sent one after another, want the first kept", c.name, got, streams)
		}
	}
}

// An upstream that keeps the body open after the last event does not hold the answer, its billing or the
// gateway: the client has the whole stream at once, and the connection is closed after a bounded wait.
func TestStream_BodyHeldOpenAfterTheLastEventIsClosed(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000, relaytest.WithEndDelay(time.Hour))
	res, evs, id := s.stream("/v1/chat/completions", s.key.Key, chatBody("gpt-4o-mini", true))
	if res.StatusCode != http.StatusOK || len(contentEvents(evs)) != relaytest.DefaultChunks {
		t.Fatalf("%d with %d content events", res.StatusCode, len(contentEvents(evs)))
	}
	if s.oa.Canceled() != 0 { // a drain that held the handler would end the client's stream only after giving up
		t.Fatal("the client's stream ended only after the gateway gave up on the upstream body")
	}
	if l := s.logOf(id); l.Status != "success" || l.Cost != 50 {
		t.Fatalf("log %s cost %d, want success 50", l.Status, l.Cost)
	}
	waitFor(t, "the gateway to give up on the body's end", func() bool { return s.oa.Canceled() == 1 })
}

package relay_test

// The books invariant on every path a request can take: for each user and each limited key, the usage
// logged (Σ cost of its rows) is exactly what moved in SQL (quota, used_quota, remain_quota) and in the live
// ledger. The request id that keys the hold and the log row is the gateway's own, so a caller that reuses
// its X-Request-Id (in sequence or 20 times at once), upstream retries, client cancellations and a node
// shutting down with streams in flight cannot make a call unbilled, billed twice or logged zero times.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"tollgate/app/apptest"
	"tollgate/model"
	"tollgate/relay/relaytest"
)

// withClientID sends a relay call with the caller's own X-Request-Id.
func (w *world) withClientID(path, key string, body any, clientID string) *answer {
	w.t.Helper()
	a, err := w.tryCall(context.Background(), "POST", path, key, body, "X-Request-Id", clientID)
	if err != nil {
		w.t.Fatalf("POST %s: %v", path, err)
	}
	return a
}

// complete checks a 200 answer that reached its end (a stream's closing event included).
func complete(t testing.TB, a *answer, stream bool, proto string) {
	t.Helper()
	if a.status != http.StatusOK {
		t.Fatalf("status %d, want 200: %s", a.status, a.body)
	}
	if !stream {
		return
	}
	end := "[DONE]"
	if proto == "anthropic" {
		end = "message_stop"
	}
	if !strings.Contains(string(a.body), end) {
		t.Fatalf("stream did not reach %s: %s", end, a.body)
	}
}

func TestBooks_SameClientRequestIDTwiceIsTwoBilledRequests(t *testing.T) {
	t.Parallel()
	const start, keyQuota = 1_000_000, 50_000
	s := newStandard(t, start)
	limited := s.world.key(s.alice, map[string]any{"remain_quota": keyQuota})
	type call struct {
		path, proto string
		body        map[string]any
		stream      bool
	}
	calls := []call{
		{"/v1/chat/completions", "openai", chatBody("gpt-4o-mini", false), false},
		{"/v1/chat/completions", "openai", chatBody("gpt-4o-mini", true), true},
		{"/v1/messages", "anthropic", messagesBody("claude-sonnet-4-5", false), false},
		{"/v1/messages", "anthropic", messagesBody("claude-sonnet-4-5", true), true},
	}
	for i, c := range calls {
		cid := fmt.Sprintf("client-dup-%d", i)
		var gw []string
		for range 2 {
			a := s.withClientID(c.path, limited.Key, c.body, cid)
			complete(t, a, c.stream, c.proto)
			gw = append(gw, a.header.Get("X-Tollgate-Request-Id"))
			if got := a.header.Get("X-Request-Id"); got != cid {
				t.Fatalf("X-Request-Id echoed as %q, want %q", got, cid)
			}
		}
		if gw[0] == gw[1] || len(gw[0]) != 32 {
			t.Fatalf("gateway ids %q: want two distinct 32-digit ids", gw)
		}
		// One row per gateway id, whatever order the two settlements reached the writer in (each request's
		// finish runs after its answer, so the second's can be queued first).
		rows := s.waitLogs(2, "client_request_id = ?", cid)
		want := map[string]bool{gw[0]: true, gw[1]: true}
		for j, l := range rows {
			if !want[l.RequestID] || l.Cost <= 0 || l.Status != "success" {
				t.Fatalf("row %d of %s = id %s cost %d status %s, want one of %q, billed, success", j, cid, l.RequestID, l.Cost, l.Status, gw)
			}
			delete(want, l.RequestID)
		}
		// Both ids are searchable, by the user and by an admin.
		if p := getLogs(t, s.alice.c, "/api/logs", url.Values{"client_request_id": {cid}}); len(p.Items) != 2 {
			t.Fatalf("user search by client_request_id %s: %d items", cid, len(p.Items))
		}
		if p := getLogs(t, s.root, "/api/admin/logs", url.Values{"client_request_id": {cid}}); len(p.Items) != 2 {
			t.Fatalf("admin search by client_request_id %s: %d items", cid, len(p.Items))
		}
		if p := getLogs(t, s.alice.c, "/api/logs", url.Values{"request_id": {gw[1]}}); len(p.Items) != 1 || p.Items[0].RequestID != gw[1] {
			t.Fatalf("search by request_id %s: %+v", gw[1], p.Items)
		}
	}
	s.books(s.logs(), s.alice.id, start, map[int64]int64{limited.ID: keyQuota})
	if n := len(s.logs("user_id = ?", s.alice.id)); n != 2*len(calls) {
		t.Fatalf("%d log rows, want %d", n, 2*len(calls))
	}
}

func TestBooks_TwentyConcurrentReplaysOfOneClientIDAreEachBilled(t *testing.T) {
	t.Parallel()
	const start, keyQuota = 10_000_000, 1_000_000
	// A slow first byte keeps the 20 calls overlapping, on Redis inside the reservation that travels
	// alongside the upstream request when the balance is ample (relay/headroom.go).
	s := newStandard(t, start, relaytest.WithHeaderDelay(30*time.Millisecond))
	limited := s.world.key(s.alice, map[string]any{"remain_quota": keyQuota})
	for range 3 { // teach the node the balances (the overlapped path needs a known ample balance)
		complete(t, s.withClientID("/v1/chat/completions", limited.Key, chatBody("gpt-4o-mini", false), ""), false, "openai")
	}
	s.waitLogs(3, "user_id = ?", s.alice.id)
	time.Sleep(50 * time.Millisecond) // the balance refresh runs just after the last settlement

	before := s.oa.Count() + s.an.Count()
	const n = 20
	const cid = "replayed-client-id"
	answers := make([]*answer, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path, body := "/v1/chat/completions", chatBody("gpt-4o-mini", i%2 == 0)
			if i%4 == 3 {
				path, body = "/v1/messages", messagesBody("claude-sonnet-4-5", i%8 == 3)
			}
			a, err := s.tryCall(context.Background(), "POST", path, limited.Key, body, "X-Request-Id", cid)
			if err != nil {
				a = &answer{body: []byte(err.Error())}
			}
			answers[i] = a
		}()
	}
	wg.Wait()
	ok, firstBad := 0, ""
	for i, a := range answers {
		if a.status == http.StatusOK {
			ok++
		} else if firstBad == "" {
			firstBad = fmt.Sprintf("replay %d: %d %s", i, a.status, a.body)
		}
	}
	upstreamCalls := s.oa.Count() + s.an.Count() - before
	deadline := time.Now().Add(5 * time.Second)
	rows := s.logs("client_request_id = ?", cid)
	for len(rows) < n && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		rows = s.logs("client_request_id = ?", cid)
	}
	billed := 0
	ids := map[string]bool{}
	for _, l := range rows {
		if l.Cost > 0 && !ids[l.RequestID] {
			billed++
		}
		ids[l.RequestID] = true
	}
	if ok != n || upstreamCalls != n || billed != n {
		t.Fatalf("%d replays of one X-Request-Id: %d answered 200, %d upstream calls, %d billed log rows (%s)",
			n, ok, upstreamCalls, billed, firstBad)
	}
	s.books(s.logs(), s.alice.id, start, map[int64]int64{limited.ID: keyQuota})
}

func TestBooks_RetriesAfterUpstream500And429AddUp(t *testing.T) {
	t.Parallel()
	w := newWorld(t, tolerant)
	flaky500 := fake(t, relaytest.FailFirst(6, relaytest.ServerError()), relaytest.ForModel("gpt-4o", relaytest.Fail(relaytest.ServerError())))
	flaky429 := fake(t, relaytest.FailFirst(6, relaytest.RateLimited(20*time.Millisecond)), relaytest.ForModel("gpt-4o", relaytest.Fail(relaytest.ServerError())))
	good := fake(t, relaytest.ForModel("gpt-4o", relaytest.Fail(relaytest.ServerError())))
	over := fake(t, relaytest.FailFirst(4, relaytest.Overloaded()))
	anGood := fake(t)
	for _, c := range []struct {
		up   *relaytest.Upstream
		prio int64
	}{{flaky500, 10}, {flaky429, 10}, {good, 0}} {
		spec := openaiChannel(c.up)
		spec.Priority = c.prio
		w.channel(spec)
	}
	hi := anthropicChannel(over)
	hi.Priority = 10
	w.channel(hi)
	w.channel(anthropicChannel(anGood))
	w.prices()
	const start, keyQuota = 5_000_000, 200_000
	u := w.user("retrier", start)
	limited := w.key(u, map[string]any{"remain_quota": keyQuota})
	plain := w.key(u, nil)

	retried, failed := 0, 0
	for i := range 24 {
		k := limited.Key
		if i%3 == 0 {
			k = plain.Key
		}
		path, body, proto := "/v1/chat/completions", chatBody("gpt-4o-mini", i%2 == 0), "openai"
		switch i % 6 {
		case 4:
			path, body, proto = "/v1/messages", messagesBody("claude-sonnet-4-5", i%4 == 0), "anthropic"
		case 5: // every channel fails this model: the caller gets an error and pays nothing
			body = chatBody("gpt-4o", i%4 == 1)
		}
		a := w.withClientID(path, k, body, fmt.Sprintf("retry-%d", i))
		if i%6 == 5 {
			if a.status < 500 {
				t.Fatalf("call %d on a failing model: %d %s", i, a.status, a.body)
			}
			failed++
			continue
		}
		complete(t, a, body["stream"] == true, proto)
	}
	rows := w.waitLogs(24, "user_id = ?", u.id)
	for _, l := range rows {
		if len(l.Attempts.V) > 1 {
			retried++
		}
		if l.Status == "error" && l.Cost != 0 {
			t.Fatalf("failed call %s billed %d", l.RequestID, l.Cost)
		}
	}
	if retried < 5 || failed == 0 {
		t.Fatalf("%d calls retried and %d failed: the injected 500/429/529 did not bite", retried, failed)
	}
	w.books(rows, u.id, start, map[int64]int64{limited.ID: keyQuota})
}

func TestBooks_ClientCancellationsMidStreamAddUp(t *testing.T) {
	t.Parallel()
	const start, keyQuota = 1_000_000, 100_000
	s := newStandard(t, start, relaytest.WithChunks(30), relaytest.WithChunkDelay(15*time.Millisecond),
		relaytest.ForModel("gpt-4o", relaytest.WithHeaderDelay(time.Second)))
	limited := s.world.key(s.alice, map[string]any{"remain_quota": keyQuota})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			path, body := "/v1/chat/completions", chatBody("gpt-4o-mini", true)
			if i%2 == 1 {
				path, body = "/v1/messages", messagesBody("claude-sonnet-4-5", true)
			}
			if i == 6 { // a non-stream call given up before the upstream answers
				path, body = "/v1/chat/completions", chatBody("gpt-4o", false)
				go func() { time.Sleep(100 * time.Millisecond); cancel() }()
			}
			req, _ := s.newRequest(ctx, "POST", path, limited.Key, body, "X-Request-Id", fmt.Sprintf("cancel-%d", i))
			res, err := httpClient.Do(req)
			if err != nil {
				return // the non-stream one: cancelled before headers
			}
			defer res.Body.Close()
			_, _ = readSSE(res.Body, func(_ sseEvent, n int) bool { return n >= 3+i })
			cancel()
			_, _ = io.Copy(io.Discard, res.Body)
		}()
	}
	wg.Wait()
	rows := s.waitLogs(8, "user_id = ?", s.alice.id)
	canceled, billedPartial := 0, 0
	for _, l := range rows {
		if l.ErrorClass == "canceled" {
			canceled++
			if l.Cost > 0 {
				billedPartial++
			}
		}
	}
	if canceled != 8 || billedPartial != 7 {
		t.Fatalf("%d rows canceled, %d of them billed for what was delivered; want 8 and 7", canceled, billedPartial)
	}
	s.books(rows, s.alice.id, start, map[int64]int64{limited.ID: keyQuota})
}

func TestBooks_GracefulShutdownWithStreamsInFlight(t *testing.T) {
	t.Parallel()
	env := apptest.NewEnv(t)
	node := env.Start(t)
	w := worldOn(t, node)
	// Streams of ~1.5 s: all of them are still running when the shutdown starts, even on a busy machine.
	oa := fake(t, relaytest.WithChunks(60), relaytest.WithChunkDelay(25*time.Millisecond))
	an := fake(t, relaytest.WithChunks(60), relaytest.WithChunkDelay(25*time.Millisecond))
	w.channel(openaiChannel(oa))
	w.channel(anthropicChannel(an))
	w.prices()
	const start, keyQuota = 1_000_000, 100_000
	u := w.user("leaver", start)
	limited := w.key(u, map[string]any{"remain_quota": keyQuota})

	const n = 8
	answers := make([]*answer, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path, body := "/v1/chat/completions", chatBody("gpt-4o-mini", true)
			if i%2 == 1 {
				path, body = "/v1/messages", messagesBody("claude-sonnet-4-5", true)
			}
			a, err := w.tryCall(context.Background(), "POST", path, limited.Key, body, "X-Request-Id", "same-for-all")
			if err != nil {
				a = &answer{body: []byte(err.Error())}
			}
			answers[i] = a
		}()
	}
	waitFor(t, "every stream in flight", func() bool { return oa.Active()+an.Active() >= n })
	shutDown(t, node)
	wg.Wait()
	for i, a := range answers {
		complete(t, a, true, map[bool]string{false: "openai", true: "anthropic"}[i%2 == 1])
	}
	// A new node on the same database (and Redis) reads the books.
	next := env.Start(t)
	w2 := worldOn(t, next)
	rows := w2.logs("user_id = ?", u.id)
	if len(rows) != n {
		t.Fatalf("%d log rows after the restart, want %d", len(rows), n)
	}
	for _, l := range rows {
		if l.Cost <= 0 || l.Status != "success" || l.ClientRequestID != "same-for-all" {
			t.Fatalf("row %s: cost %d status %s client id %q", l.RequestID, l.Cost, l.Status, l.ClientRequestID)
		}
	}
	w2.books(rows, u.id, start, map[int64]int64{limited.ID: keyQuota})
}

// A request is settled after its answer ended, in a goroutine of its own: a shutdown that starts right after
// the answer still records everything of it — its log row and money, and its routing decision, whose log closes
// before the usage-log writer does (App.Close waits for the requests still settling first).
func TestBooks_ShutdownRightAfterAnAnswerKeepsItsDecisionAndRow(t *testing.T) {
	t.Parallel()
	env := apptest.NewEnv(t)
	node := env.Start(t)
	w := worldOn(t, node)
	w.channel(openaiChannel(fake(t)))
	w.prices()
	if res := w.root.Do("PUT", "/api/admin/settings", map[string]any{"routing_decision_sample": 1}); res.Status != http.StatusOK {
		t.Fatalf("settings: %d %s", res.Status, res.Body)
	}
	const start = 1_000_000
	u := w.user("quick", start)
	k := w.key(u, nil)
	a := w.call("POST", "/v1/chat/completions", k.Key, chatBody("gpt-4o-mini", false))
	if a.status != http.StatusOK {
		t.Fatalf("call: %d %s", a.status, a.body)
	}
	shutDown(t, node)
	next := env.Start(t)
	w2 := worldOn(t, next)
	rows := w2.logs("user_id = ?", u.id)
	if len(rows) != 1 || rows[0].RequestID != a.reqID {
		t.Fatalf("log rows after the restart: %+v, want the one of %s", rows, a.reqID)
	}
	if d, err := next.App.Decisions.List(t.Context(), model.DecisionFilter{RequestID: a.reqID}); err != nil || len(d) != 1 {
		t.Fatalf("decisions of %s after the restart: %d (%v), want 1", a.reqID, len(d), err)
	}
	w2.books(rows, u.id, start, nil)
}

// shutDown does what main does on SIGTERM: drain requests and streams, then close the app (settle, flush the
// logs).
func shutDown(t *testing.T, node *apptest.Node) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := node.Server.Config.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if err := node.App.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
}

package relay_test

// Money: the contract's example to the unit, group ratios, cache and per-call prices, and the books adding up
// exactly (log rows, live ledger, SQL) across 1,000 mixed concurrent requests with injected upstream failures,
// plus the overdraft race on a nearly empty key and balance.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"tollgate/model"
	"tollgate/relay/relaytest"
)

// selfQuota reads GET /api/user/self.
func selfQuota(t testing.TB, p *person) (quota, used int64) {
	t.Helper()
	r := p.c.Do("GET", "/api/user/self", nil)
	var u struct {
		Quota     int64 `json:"quota"`
		UsedQuota int64 `json:"used_quota"`
	}
	r.JSON(t, &u)
	return u.Quota, u.UsedQuota
}

// keyView reads GET /api/tokens/:id.
func keyView(t testing.TB, p *person, id int64) apiKey {
	t.Helper()
	r := p.c.Do("GET", fmt.Sprintf("/api/tokens/%d", id), nil)
	if r.Status != http.StatusOK {
		t.Fatalf("get key: %d %s", r.Status, r.Body)
	}
	var k apiKey
	r.JSON(t, &k)
	return k
}

func TestBilling_ContractExampleToTheUnit(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000)
	limited := s.world.key(s.alice, map[string]any{"remain_quota": 10_000})

	a := s.call("POST", "/v1/chat/completions", limited.Key, chatBody("gpt-4o-mini", false))
	if a.status != http.StatusOK {
		t.Fatalf("chat: %d %s", a.status, a.body)
	}
	l := s.logOf(a.reqID)
	// input 1 and output 2 USD per 1M, ratio 1, usage 10 + 20 → 10×1 + 20×2 = 50 units.
	if l.Cost != 50 || l.PromptTokens != 10 || l.CompletionTokens != 20 || l.GroupRatio != "1" || l.TokenID != limited.ID {
		t.Fatalf("log = cost %d tokens %d+%d ratio %s token %d", l.Cost, l.PromptTokens, l.CompletionTokens, l.GroupRatio, l.TokenID)
	}
	if l.Price.V.Input != "1" || l.Price.V.Output != "2" {
		t.Fatalf("log price breakdown = %+v", l.Price.V)
	}
	if q, used := selfQuota(t, s.alice); q != 1_000_000-50 || used != 50 {
		t.Fatalf("self quota = %d used %d, want %d used 50", q, used, 1_000_000-50)
	}
	if u := s.sqlUser(s.alice.id); u.Quota != 1_000_000-50 || u.UsedQuota != 50 || u.RequestCount != 1 {
		t.Fatalf("SQL user = quota %d used %d requests %d", u.Quota, u.UsedQuota, u.RequestCount)
	}
	if k := keyView(t, s.alice, limited.ID); k.RemainQuota != 10_000-50 || k.UsedQuota != 50 {
		t.Fatalf("key view = remain %d used %d", k.RemainQuota, k.UsedQuota)
	}
	if k := s.sqlToken(limited.ID); k.RemainQuota != 10_000-50 || k.UsedQuota != 50 {
		t.Fatalf("SQL key = remain %d used %d", k.RemainQuota, k.UsedQuota)
	}
}

func TestBilling_GroupRatioCacheAndPerCallPrices(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000)
	s.oa.Set(relaytest.ForModel("gpt-4o", relaytest.WithCacheTokens(4, 0)))
	s.an.Set(relaytest.WithCacheTokens(4, 2))

	cases := []struct {
		name       string
		path, mdl  string
		wantCost   int64
		wantPrompt int64
		wantCache  [2]int64
	}{
		// gpt-4o: 6 fresh × 2.5 + 4 cached × 1.25 + 20 × 10 = 15 + 5 + 200.
		{"openai cached tokens", "/v1/chat/completions", "gpt-4o", 220, 10, [2]int64{4, 0}},
		// claude: 10 × 3 + 4 × 0.3 + 2 × 3.75 + 20 × 15 = 338.7 → rounded once to 339.
		{"anthropic cache read and write", "/v1/messages", "claude-sonnet-4-5", 339, 16, [2]int64{4, 2}},
	}
	for _, c := range cases {
		body := chatBody(c.mdl, false)
		if c.path == "/v1/messages" {
			body = messagesBody(c.mdl, false)
		}
		a := s.call("POST", c.path, s.key.Key, body)
		if a.status != http.StatusOK {
			t.Fatalf("%s: %d %s", c.name, a.status, a.body)
		}
		l := s.logOf(a.reqID)
		if l.Cost != c.wantCost || l.PromptTokens != c.wantPrompt || l.CacheReadTokens != c.wantCache[0] || l.CacheWriteTokens != c.wantCache[1] {
			t.Fatalf("%s: log cost %d prompt %d cache %d/%d, want %d %d %v", c.name, l.Cost, l.PromptTokens,
				l.CacheReadTokens, l.CacheWriteTokens, c.wantCost, c.wantPrompt, c.wantCache)
		}
	}

	// Group ratio 1.5: the contract example costs 75.
	if r := s.root.Do("POST", "/api/admin/groups", map[string]any{"name": "vip", "ratio": "1.5"}); r.Status != http.StatusCreated {
		t.Fatalf("create group: %d %s", r.Status, r.Body)
	}
	if r := s.root.Do("PATCH", fmt.Sprintf("/api/admin/users/%d", s.alice.id), map[string]any{"group": "vip"}); r.Status != http.StatusOK {
		t.Fatalf("move alice to vip: %d %s", r.Status, r.Body)
	}
	s.channelGroups(s.oaID, "default", "vip")
	var a *answer
	waitFor(t, "alice's group change to reach the relay", func() bool {
		a = s.call("POST", "/v1/chat/completions", s.key.Key, chatBody("gpt-4o-mini", false))
		return a.status == http.StatusOK && s.logOf(a.reqID).GroupRatio == "1.5"
	})
	if l := s.logOf(a.reqID); l.Cost != 75 {
		t.Fatalf("ratio 1.5 log cost = %d, want 75", l.Cost)
	}

	// Per-call price replaces token prices; the group ratio still applies: 0.002 USD × 1.5 = 3000 units.
	s.prices(price{Model: "gpt-4o-mini", Input: "1", Output: "2", PerCall: "0.002"})
	waitFor(t, "the per-call price to reach the relay", func() bool {
		a = s.call("POST", "/v1/chat/completions", s.key.Key, chatBody("gpt-4o-mini", false))
		return s.logOf(a.reqID).Price.V.PerCall == "0.002"
	})
	if l := s.logOf(a.reqID); l.Cost != 3000 || l.PromptTokens != 10 {
		t.Fatalf("per-call log cost = %d (tokens %d), want 3000", l.Cost, l.PromptTokens)
	}
}

// channelGroups sets a channel's groups.
func (w *world) channelGroups(id int64, groups ...string) {
	w.t.Helper()
	if r := w.root.Do("PATCH", fmt.Sprintf("/api/admin/channels/%d", id), map[string]any{"groups": groups}); r.Status != http.StatusOK {
		w.t.Fatalf("patch channel groups: %d %s", r.Status, r.Body)
	}
}

// minWatch samples live balances while a load runs and keeps the lowest seen.
type minWatch struct {
	stop chan struct{}
	done chan struct{}
	mins []atomic.Int64
}

func watchMin(w *world, reads ...func() int64) *minWatch {
	m := &minWatch{stop: make(chan struct{}), done: make(chan struct{}), mins: make([]atomic.Int64, len(reads))}
	for i := range m.mins {
		m.mins[i].Store(1 << 62)
	}
	go func() {
		defer close(m.done)
		for {
			for i, r := range reads {
				if v := r(); v < m.mins[i].Load() {
					m.mins[i].Store(v)
				}
			}
			select {
			case <-m.stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	return m
}

func (m *minWatch) end() []int64 {
	close(m.stop)
	<-m.done
	out := make([]int64, len(m.mins))
	for i := range m.mins {
		out[i] = m.mins[i].Load()
	}
	return out
}

// ledgerRead returns a reader of a live value that never fails the test from a goroutine.
func ledgerRead(f func(context.Context, int64) (int64, error), id int64) func() int64 {
	return func() int64 {
		v, err := f(context.Background(), id)
		if err != nil {
			return 1 << 62
		}
		return v
	}
}

// sent is one request of a load and how it ended.
type sent struct {
	id     string
	key    int
	kind   string
	status int
	body   []byte
}

// books checks, after a load, that logs, live ledger and SQL agree for one user and its keys:
// one row per admitted request, Σ cost = balance moved (live and SQL), used_quota = Σ cost, a limited key
// moved by exactly its Σ cost, nothing below zero, and no hold left behind.
func (w *world) books(rows []model.UsageLog, userID int64, startBalance int64, limited map[int64]int64) {
	w.t.Helper()
	var sum int64
	perKey := map[int64]int64{}
	for _, l := range rows {
		if l.UserID != userID {
			continue
		}
		if l.Cost < 0 {
			w.t.Fatalf("negative cost on %s", l.RequestID)
		}
		sum += l.Cost
		perKey[l.TokenID] += l.Cost
	}
	live := w.liveBalance(userID)
	u := w.sqlUser(userID)
	if startBalance-live != sum || startBalance-u.Quota != sum || u.UsedQuota != sum {
		w.t.Fatalf("user %d: Σ cost %d, live moved %d, SQL moved %d, used_quota %d", userID, sum, startBalance-live, startBalance-u.Quota, u.UsedQuota)
	}
	if live < 0 || u.Quota < 0 {
		w.t.Fatalf("user %d below zero: live %d SQL %d", userID, live, u.Quota)
	}
	for id, start := range limited {
		lr := w.liveRemain(id)
		tk := w.sqlToken(id)
		if start-lr != perKey[id] || start-tk.RemainQuota != perKey[id] || tk.UsedQuota != perKey[id] {
			w.t.Fatalf("key %d: Σ cost %d, live moved %d, SQL moved %d, used %d", id, perKey[id], start-lr, start-tk.RemainQuota, tk.UsedQuota)
		}
		if lr < 0 || tk.RemainQuota < 0 {
			w.t.Fatalf("key %d below zero: live %d SQL %d", id, lr, tk.RemainQuota)
		}
	}
}

func TestBilling_ThousandMixedConcurrentRequestsAddUp(t *testing.T) {
	t.Parallel()
	w := newWorld(t, tolerant)
	good := fake(t, relaytest.WithRecording(false))
	bad := fake(t, relaytest.WithRecording(false),
		relaytest.ForKey("b-500", relaytest.Fail(relaytest.ServerError())),
		relaytest.ForKey("b-429", relaytest.FailFirst(80, relaytest.RateLimited(time.Second))),
		relaytest.ForKey("b-reset", relaytest.Fail(relaytest.Reset(2))),
		relaytest.ForKey("b-json", relaytest.Fail(relaytest.InvalidJSON())))
	claude := fake(t, relaytest.WithRecording(false), relaytest.FailFirst(25, relaytest.Overloaded()),
		relaytest.ForKey("c-cut", relaytest.Fail(relaytest.Reset(3))))
	claudeGood := fake(t, relaytest.WithRecording(false))
	w.channel(openaiChannel(good, "a-1", "a-2"))
	w.channel(openaiChannel(bad, "b-ok", "b-500", "b-429", "b-reset", "b-json"))
	w.channel(anthropicChannel(claude, "c-1", "c-cut"))
	w.channel(anthropicChannel(claudeGood, "c-good"))
	w.prices()

	const start = 2_000_000
	const limitedQuota = 8_000
	u1, u2 := w.user("payer", start), w.user("other", start)
	keys := []apiKey{w.key(u1, map[string]any{"remain_quota": limitedQuota}), w.key(u1, nil), w.key(u2, nil)}
	watch := watchMin(w, ledgerRead(w.node.App.Ledger.UserBalance, u1.id), ledgerRead(w.node.App.Ledger.TokenRemain, keys[0].ID))

	const total, workers = 1000, 32
	reqs := make([]sent, total)
	var next atomic.Int64
	var wg sync.WaitGroup
	began := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= total {
					return
				}
				reqs[i] = w.send(i, keys)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(began)
	mins := watch.end()

	admitted := map[string]*sent{}
	by := map[string]int{}
	for i := range reqs {
		r := &reqs[i]
		by[fmt.Sprintf("%s %d", r.kind, r.status)]++
		switch {
		case r.status == 0:
			t.Fatalf("request %d (%s) failed on the client: %s", i, r.kind, r.body)
		case refused(r):
			by[r.kind+" refused"]++
			if r.key != 0 {
				t.Fatalf("unexpected refusal on key %d: %s", r.key, r.body)
			}
			openAIOrAnthropicRefusal(t, r)
		case r.status == http.StatusOK || r.status == http.StatusBadGateway || r.status == http.StatusServiceUnavailable ||
			r.status == http.StatusTooManyRequests || r.status == 529:
			admitted[r.id] = r
		default:
			t.Fatalf("request %d (%s) answered %d: %s", i, r.kind, r.status, r.body)
		}
	}
	waitFor(t, "a log row for every admitted request", func() bool { return len(w.logs()) >= len(admitted) })
	rows := w.logs()
	seen := map[string]bool{}
	for _, l := range rows {
		r, ok := admitted[l.RequestID]
		if !ok || seen[l.RequestID] {
			t.Fatalf("log row %s (http %d, status %s, class %q, error %q, cost %d) is not one of the admitted requests, or is twice there",
				l.RequestID, l.HTTPStatus, l.Status, l.ErrorClass, l.Error, l.Cost)
		}
		seen[l.RequestID] = true
		checkRowCost(t, r, l)
	}
	w.books(rows, u1.id, start, map[int64]int64{keys[0].ID: limitedQuota})
	w.books(rows, u2.id, start, nil)
	if mins[0] < 0 || mins[1] < 0 {
		t.Fatalf("live balance dipped below zero during the load: user %d key %d", mins[0], mins[1])
	}
	if by["chat refused"]+by["stream refused"]+by["usage refused"]+by["embed refused"]+by["claude refused"] == 0 {
		t.Errorf("the limited key never ran out; the test did not cover refusal under load")
	}
	cut, retried := 0, 0
	for _, l := range rows {
		if l.Status == "error" && l.Cost > 0 {
			cut++
		}
		if len(l.Attempts.V) > 1 {
			retried++
		}
	}
	if cut == 0 || retried == 0 {
		t.Errorf("no stream was cut (%d) or no request retried (%d): the injected failures did not bite", cut, retried)
	}
	t.Logf("%s: %d requests by %d workers in %v (%.0f req/s); %d admitted, %d log rows, %d cut mid-stream, %d retried; outcomes %v",
		w.node.App.Store.Kind, total, workers, elapsed.Round(time.Millisecond), float64(total)/elapsed.Seconds(), len(admitted), len(rows), cut, retried, by)
}

// send issues request i of the mixed load: keys rotate, kinds rotate over chat (plain, stream, stream with
// usage), embeddings and Anthropic messages (stream every other time).
func (w *world) send(i int, keys []apiKey) sent {
	k := i % len(keys)
	var path, kind string
	var body map[string]any
	switch i % 5 {
	case 0:
		path, kind, body = "/v1/chat/completions", "chat", chatBody("gpt-4o-mini", false)
	case 1:
		path, kind, body = "/v1/chat/completions", "stream", chatBody("gpt-4o-mini", true)
	case 2:
		path, kind, body = "/v1/chat/completions", "usage", chatBody("gpt-4o-mini", true, "stream_options", map[string]any{"include_usage": true})
	case 3:
		path, kind, body = "/v1/embeddings", "embed", map[string]any{"model": "text-embedding-3-small", "input": "hello"}
	default:
		path, kind, body = "/v1/messages", "claude", messagesBody("claude-sonnet-4-5", i%2 == 0)
	}
	// Distinct first messages spread the requests over sticky buckets, so channels keep being chosen afresh.
	if _, ok := body["messages"]; ok {
		body["messages"] = []any{map[string]any{"role": "user", "content": fmt.Sprintf("hi %d", i)}}
	} else {
		body["input"] = fmt.Sprintf("hello %d", i)
	}
	a, err := w.tryCall(context.Background(), "POST", path, keys[k].Key, body)
	if err != nil {
		return sent{key: k, kind: kind, body: []byte(err.Error())}
	}
	return sent{id: a.reqID, key: k, kind: kind, status: a.status, body: a.body}
}

// refused says whether an answer is the gateway's money refusal: 402 billing_error to Anthropic callers,
// 429 insufficient_quota (code key_quota_exhausted or insufficient_quota) to OpenAI callers.
func refused(r *sent) bool {
	if r.kind == "claude" {
		return r.status == http.StatusPaymentRequired
	}
	return r.status == http.StatusTooManyRequests && gjson.GetBytes(r.body, "error.type").String() == "insufficient_quota"
}

// openAIOrAnthropicRefusal checks a refusal's shape in the caller's protocol.
func openAIOrAnthropicRefusal(t *testing.T, r *sent) {
	t.Helper()
	a := &answer{status: r.status, body: r.body}
	if r.kind == "claude" {
		anthropicErr(t, a, http.StatusPaymentRequired, "billing_error")
		return
	}
	openAIErr(t, a, http.StatusTooManyRequests, "key_quota_exhausted")
}

// checkRowCost pins each row's cost: full answers cost exactly their price, failures before any byte cost 0,
// streams cut mid-way cost something but less than a full answer.
func checkRowCost(t *testing.T, r *sent, l model.UsageLog) {
	t.Helper()
	full := map[string]int64{"chat": 50, "stream": 50, "usage": 50, "embed": 5, "claude": 330}[r.kind]
	switch {
	case r.status != http.StatusOK:
		if l.Cost != 0 || l.Status != "error" {
			t.Fatalf("%s failed with %d but its row costs %d (status %s)", r.kind, r.status, l.Cost, l.Status)
		}
	case l.Status == "success":
		if l.Cost != full || l.UsageEstimated {
			t.Fatalf("%s succeeded but its row costs %d (estimated %v), want %d", r.kind, l.Cost, l.UsageEstimated, full)
		}
	default: // committed, then cut by the upstream
		if l.Cost <= 0 || l.Cost >= full || !l.UsageEstimated || l.ErrorClass == "" {
			t.Fatalf("%s cut mid-stream: row cost %d estimated %v class %q, want 0 < cost < %d, estimated", r.kind, l.Cost, l.UsageEstimated, l.ErrorClass, full)
		}
	}
}

func TestBilling_OverdraftRaceThroughHTTP(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000)
	const keyQuota = 1_000
	limited := s.world.key(s.alice, map[string]any{"remain_quota": keyQuota})
	poor := s.world.user("poor", 300)
	poorKey := s.world.key(poor, nil)
	watch := watchMin(s.world, ledgerRead(s.node.App.Ledger.TokenRemain, limited.ID), ledgerRead(s.node.App.Ledger.UserBalance, poor.id))

	type res struct {
		a   *answer
		err error
	}
	run := func(key string) []res {
		out := make([]res, 200)
		gate := make(chan struct{})
		var wg sync.WaitGroup
		for i := range out {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-gate
				out[i].a, out[i].err = s.tryCall(context.Background(), "POST", "/v1/chat/completions", key, chatBody("gpt-4o-mini", i%2 == 0))
			}()
		}
		close(gate)
		wg.Wait()
		return out
	}
	check := func(out []res, code string) (ok int) {
		for _, r := range out {
			if r.err != nil {
				t.Fatalf("client error: %v", r.err)
			}
			switch r.a.status {
			case http.StatusOK:
				ok++
			case http.StatusTooManyRequests:
				openAIErr(t, r.a, http.StatusTooManyRequests, code)
				var e struct {
					Error struct{ Type string } `json:"error"`
				}
				_ = json.Unmarshal(r.a.body, &e)
				if e.Error.Type != "insufficient_quota" {
					t.Fatalf("refusal type = %q, want insufficient_quota: %s", e.Error.Type, r.a.body)
				}
			default:
				t.Fatalf("status %d: %s", r.a.status, r.a.body)
			}
		}
		return ok
	}
	okKey := check(run(limited.Key), "key_quota_exhausted")
	okUser := check(run(poorKey.Key), "insufficient_quota")
	mins := watch.end()

	rows := s.waitLogs(okKey + okUser)
	var keySum, poorSum int64
	for _, l := range rows {
		switch l.TokenID {
		case limited.ID:
			keySum += l.Cost
		case poorKey.ID:
			poorSum += l.Cost
		}
	}
	if okKey == 0 || okKey == 200 || okUser == 0 || okUser == 200 {
		t.Fatalf("successes: key %d, poor user %d; want some but not all", okKey, okUser)
	}
	if keySum > keyQuota || poorSum > 300 || mins[0] < 0 || mins[1] < 0 {
		t.Fatalf("overdraft: key spent %d of %d (min live %d), poor spent %d of 300 (min live %d)", keySum, keyQuota, mins[0], poorSum, mins[1])
	}
	s.books(rows, s.alice.id, 1_000_000, map[int64]int64{limited.ID: keyQuota})
	s.books(rows, poor.id, 300, nil)
	t.Logf("limited key: %d of 200 served, spent %d of %d; poor user: %d served, spent %d of 300", okKey, keySum, keyQuota, okUser, poorSum)
}

package relay_test

// Shared setup for the end-to-end relay tests: a whole node (apptest) in front of relaytest fake upstreams,
// configured only through the admin and user APIs, plus readers for the durable and live books.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"tollgate/app/apptest"
	"tollgate/model"
	"tollgate/relay/relaytest"
	"tollgate/service/health"
)

// world is one node with a root client and the fakes it relays to.
type world struct {
	t    testing.TB
	node *apptest.Node
	root *apptest.Client
}

// newWorld starts a node on this pass's shape (SQLite + memory, or MariaDB + Redis); opts adjust the env.
func newWorld(t testing.TB, opts ...func(*apptest.Env)) *world {
	t.Helper()
	e := apptest.NewEnv(t)
	for _, o := range opts {
		o(e)
	}
	return worldOn(t, e.Start(t))
}

// worldOn is a world on a node the test started itself (a second node, or one restarted on the same env).
func worldOn(t testing.TB, n *apptest.Node) *world {
	t.Helper()
	return &world{t: t, node: n, root: n.Root(t)}
}

// tolerant keeps channel breakers closed and key cooldowns short, so a load keeps meeting the injected
// failures (and the retry and partial-billing paths) instead of routing around them after a few.
func tolerant(e *apptest.Env) {
	e.Options.Health = health.Config{MinRequests: 1 << 30, ConsecutiveFails: 1 << 30,
		BaseCooldown: 20 * time.Millisecond, MaxCooldown: 50 * time.Millisecond, RateLimitCooldown: 20 * time.Millisecond}
}

// fake starts a relaytest upstream that is closed when the test ends.
func fake(t testing.TB, opts ...relaytest.Option) *relaytest.Upstream {
	t.Helper()
	up := relaytest.New(opts...)
	t.Cleanup(up.Close)
	return up
}

// chanSpec is a channel as the admin API takes it.
type chanSpec struct {
	Type         string            `json:"type"`
	Name         string            `json:"name"`
	BaseURL      string            `json:"base_url"`
	Keys         []string          `json:"keys"`
	Models       []string          `json:"models"`
	Groups       []string          `json:"groups,omitempty"`
	Priority     int64             `json:"priority"`
	Weight       int               `json:"weight,omitempty"`
	ModelMapping map[string]string `json:"model_mapping,omitempty"`
	KeyStrategy  string            `json:"key_strategy,omitempty"`
	Timeouts     *model.Timeouts   `json:"timeouts,omitempty"`
}

var chanSeq atomic.Int64

// openaiChannel is an openai channel on up serving the usual OpenAI test models.
func openaiChannel(up *relaytest.Upstream, keys ...string) chanSpec {
	if len(keys) == 0 {
		keys = []string{"sk-upstream-openai-0001"}
	}
	return chanSpec{Type: "openai", Name: fmt.Sprintf("openai-%d", chanSeq.Add(1)), BaseURL: up.URL, Keys: keys,
		Models: []string{"gpt-4o-mini", "gpt-4o", "text-embedding-3-small"}}
}

// anthropicChannel is an anthropic channel on up serving claude-sonnet-4-5.
func anthropicChannel(up *relaytest.Upstream, keys ...string) chanSpec {
	if len(keys) == 0 {
		keys = []string{"sk-ant-upstream-0001"}
	}
	return chanSpec{Type: "anthropic", Name: fmt.Sprintf("anthropic-%d", chanSeq.Add(1)), BaseURL: up.URL, Keys: keys,
		Models: []string{"claude-sonnet-4-5"}}
}

// channel creates a channel through the admin API and returns its id.
func (w *world) channel(spec chanSpec) int64 {
	w.t.Helper()
	return w.postChannel(spec)
}

// postChannel sends one POST /api/admin/channels body and returns the new channel's id.
func (w *world) postChannel(body any) int64 {
	w.t.Helper()
	r := w.root.Do("POST", "/api/admin/channels", body)
	if r.Status != http.StatusCreated {
		w.t.Fatalf("create channel: %d %s", r.Status, r.Body)
	}
	var v struct {
		ID int64 `json:"id"`
	}
	r.JSON(w.t, &v)
	return v.ID
}

// price is a PUT /api/admin/pricing row.
type price struct {
	Model      string `json:"model"`
	Input      string `json:"input"`
	Output     string `json:"output"`
	CacheRead  string `json:"cache_read"`
	CacheWrite string `json:"cache_write"`
	PerCall    string `json:"per_call"`
}

// defaultPrices are the contract's example prices (USD per 1M tokens = units per token).
var defaultPrices = []price{
	{Model: "gpt-4o-mini", Input: "1", Output: "2"},
	{Model: "gpt-4o", Input: "2.5", Output: "10", CacheRead: "1.25"},
	{Model: "text-embedding-3-small", Input: "0.5"},
	{Model: "claude-sonnet-4-5", Input: "3", Output: "15", CacheRead: "0.3", CacheWrite: "3.75"},
}

// prices replaces the price table.
func (w *world) prices(rows ...price) {
	w.t.Helper()
	if len(rows) == 0 {
		rows = defaultPrices
	}
	r := w.root.Do("PUT", "/api/admin/pricing", rows)
	if r.Status != http.StatusOK {
		w.t.Fatalf("put pricing: %d %s", r.Status, r.Body)
	}
}

// person is a signed-up user with a console client.
type person struct {
	name string
	id   int64
	c    *apptest.Client
}

// user signs a user up and tops the balance up to quota units.
func (w *world) user(name string, quota int64) *person {
	w.t.Helper()
	c := w.node.SignUp(w.t, name, "relay-Passw0rd-9")
	u, err := w.node.App.Store.UserByUsername(context.Background(), name)
	if err != nil {
		w.t.Fatalf("user %s: %v", name, err)
	}
	p := &person{name: name, id: u.ID, c: c}
	w.topUp(p.id, quota-w.liveBalance(p.id))
	if got := w.liveBalance(p.id); got != quota {
		w.t.Fatalf("%s balance after top-up = %d, want %d", name, got, quota)
	}
	return p
}

// topUp moves a user's balance by delta through the admin API.
func (w *world) topUp(userID, delta int64) {
	w.t.Helper()
	if delta == 0 {
		return
	}
	r := w.root.Do("POST", fmt.Sprintf("/api/admin/users/%d/quota", userID), map[string]any{"delta": delta, "reason": "test top-up"})
	if r.Status != http.StatusOK {
		w.t.Fatalf("top up %d: %d %s", userID, r.Status, r.Body)
	}
}

// apiKey is a created sk- key.
type apiKey struct {
	ID          int64  `json:"id"`
	Key         string `json:"key"`
	RemainQuota int64  `json:"remain_quota"`
	UsedQuota   int64  `json:"used_quota"`
	Unlimited   bool   `json:"unlimited"`
	// Spend limits and what the key spent this UTC day and month.
	DailyBudget   int64 `json:"daily_budget"`
	MonthlyBudget int64 `json:"monthly_budget"`
	TPM           int64 `json:"tpm"`
	SpentToday    int64 `json:"spent_today"`
	SpentMonth    int64 `json:"spent_month"`
}

// key creates an sk- key for p; body adds fields to {"name": ...}.
func (w *world) key(p *person, body map[string]any) apiKey {
	w.t.Helper()
	in := map[string]any{"name": fmt.Sprintf("key-%d", chanSeq.Add(1))}
	for k, v := range body {
		in[k] = v
	}
	r := p.c.Do("POST", "/api/tokens", in)
	if r.Status != http.StatusCreated {
		w.t.Fatalf("create key: %d %s", r.Status, r.Body)
	}
	var k apiKey
	r.JSON(w.t, &k)
	if !strings.HasPrefix(k.Key, "sk-") {
		w.t.Fatalf("created key = %q", k.Key)
	}
	return k
}

// standard builds the usual world: one OpenAI fake + channel, one Anthropic fake + channel, default prices,
// and a user "alice" with balance and an unlimited key.
type standard struct {
	*world
	oa, an     *relaytest.Upstream
	oaID, anID int64
	alice      *person
	key        apiKey
}

func newStandard(t testing.TB, balance int64, opts ...relaytest.Option) *standard {
	t.Helper()
	return newStandardWith(t, balance, nil, opts...)
}

// newStandardWith is newStandard on a node whose env the env funcs adjust (a clock, trusted proxies).
func newStandardWith(t testing.TB, balance int64, env []func(*apptest.Env), opts ...relaytest.Option) *standard {
	t.Helper()
	w := newWorld(t, env...)
	s := &standard{world: w, oa: fake(t, opts...), an: fake(t, opts...)}
	s.oaID = w.channel(openaiChannel(s.oa))
	s.anID = w.channel(anthropicChannel(s.an))
	w.prices()
	s.alice = w.user("alice", balance)
	s.key = w.key(s.alice, nil)
	return s
}

// ---- the books ----

// liveBalance is the user's balance in the live ledger (cache).
func (w *world) liveBalance(userID int64) int64 {
	w.t.Helper()
	b, err := w.node.App.Ledger.UserBalance(context.Background(), userID)
	if err != nil {
		w.t.Fatalf("live balance %d: %v", userID, err)
	}
	return b
}

// liveRemain is a limited key's remaining quota in the live ledger.
func (w *world) liveRemain(tokenID int64) int64 {
	w.t.Helper()
	r, err := w.node.App.Ledger.TokenRemain(context.Background(), tokenID)
	if err != nil {
		w.t.Fatalf("live remain %d: %v", tokenID, err)
	}
	return r
}

// sqlUser reads the durable user row.
func (w *world) sqlUser(id int64) *model.User {
	w.t.Helper()
	u, err := w.node.App.Store.UserByID(context.Background(), id)
	if err != nil {
		w.t.Fatalf("user %d: %v", id, err)
	}
	return u
}

// sqlToken reads the durable key row.
func (w *world) sqlToken(id int64) *model.Token {
	w.t.Helper()
	tk, err := w.node.App.Store.TokenByID(context.Background(), id)
	if err != nil {
		w.t.Fatalf("token %d: %v", id, err)
	}
	return tk
}

// flush commits every queued usage log, including the rows of requests whose answers were read (a request
// announces its row before its answer goes out: writeJSON, serve).
func (w *world) flush() {
	w.node.App.Logs.Flush()
}

// logs flushes and returns the usage logs of relayed requests matching where (all when empty), oldest first.
// Rows of the admin's channel tests and health probes (is_test) are not relayed requests and are left out.
func (w *world) logs(where ...any) []model.UsageLog {
	w.t.Helper()
	return w.logRows(false, where...)
}

// allLogs is logs with the rows of channel tests and health probes too.
func (w *world) allLogs(where ...any) []model.UsageLog {
	w.t.Helper()
	return w.logRows(true, where...)
}

func (w *world) logRows(withTests bool, where ...any) []model.UsageLog {
	w.t.Helper()
	w.flush()
	q := w.node.App.Store.DB.Model(&model.UsageLog{})
	if !withTests {
		q = q.Where("is_test = ?", false)
	}
	if len(where) > 0 {
		q = q.Where(where[0], where[1:]...)
	}
	var out []model.UsageLog
	if err := q.Order("id").Find(&out).Error; err != nil {
		w.t.Fatalf("read logs: %v", err)
	}
	return out
}

// waitLogs waits until n logs match where. The relay queues a log after the client has its answer (a stream's
// last event reaches the client before settlement), so tests wait on the condition, never on a sleep.
func (w *world) waitLogs(n int, where ...any) []model.UsageLog {
	w.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		ls := w.logs(where...)
		if len(ls) >= n || time.Now().After(deadline) {
			if len(ls) != n {
				w.t.Fatalf("usage logs matching %v = %d, want %d", where, len(ls), n)
			}
			return ls
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// logOf waits for the one log row of a request id: the gateway's own (X-Tollgate-Request-Id) or the unique
// X-Request-Id a test sent.
func (w *world) logOf(reqID string) model.UsageLog {
	w.t.Helper()
	return w.waitLogs(1, "request_id = ? OR client_request_id = ?", reqID, reqID)[0]
}

// ---- raw relay calls ----

var httpClient = &http.Client{Transport: &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: 512, DisableCompression: true}}

// reqSeq makes unique client request ids (sent as X-Request-Id, which the node keeps as client_request_id).
var reqSeq atomic.Int64

func newReqID(tag string) string {
	return fmt.Sprintf("t-%s-%06d-%d", tag, reqSeq.Add(1), time.Now().UnixNano()%1e6)
}

// answer is a finished raw relay call.
type answer struct {
	status  int
	body    []byte
	header  http.Header
	reqID   string
	elapsed time.Duration // from sending the request to the end of the body
	events  []sseEvent    // a stream's events, when read by do
}

// M decodes the body as a JSON object.
func (a *answer) M(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(a.body, &m); err != nil {
		t.Fatalf("decode %d %s: %v", a.status, a.body, err)
	}
	return m
}

// call sends a relay request; hdr holds extra headers ("Authorization" is set from key unless hdr sets auth).
func (w *world) call(method, path, key string, body any, hdr ...string) *answer {
	w.t.Helper()
	a, err := w.tryCall(context.Background(), method, path, key, body, hdr...)
	if err != nil {
		w.t.Fatalf("%s %s: %v", method, path, err)
	}
	return a
}

func (w *world) newRequest(ctx context.Context, method, path, key string, body any, hdr ...string) (*http.Request, string) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
	case io.Reader:
		rd = b
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(ctx, method, w.node.URL+path, rd)
	if err != nil {
		w.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	id := newReqID("r")
	req.Header.Set("X-Request-Id", id)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return req, req.Header.Get("X-Request-Id")
}

func (w *world) tryCall(ctx context.Context, method, path, key string, body any, hdr ...string) (*answer, error) {
	req, id := w.newRequest(ctx, method, path, key, body, hdr...)
	start := time.Now()
	res, err := httpClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	if gw := res.Header.Get("X-Tollgate-Request-Id"); gw != "" {
		id = gw // the node's own id keys the log row; the one sent is only its client_request_id
	}
	return &answer{status: res.StatusCode, body: b, header: res.Header, reqID: id, elapsed: time.Since(start)}, nil
}

// chatBody is a small chat request.
func chatBody(model string, stream bool, extra ...any) map[string]any {
	b := map[string]any{"model": model, "messages": []any{map[string]any{"role": "user", "content": "hi"}}, "max_tokens": 50}
	if stream {
		b["stream"] = true
	}
	for i := 0; i+1 < len(extra); i += 2 {
		b[extra[i].(string)] = extra[i+1]
	}
	return b
}

// messagesBody is a small Anthropic Messages request; extra is field, value pairs.
func messagesBody(model string, stream bool, extra ...any) map[string]any {
	b := map[string]any{"model": model, "max_tokens": 50, "messages": []any{map[string]any{"role": "user", "content": "hi"}}}
	if stream {
		b["stream"] = true
	}
	for i := 0; i+1 < len(extra); i += 2 {
		b[extra[i].(string)] = extra[i+1]
	}
	return b
}

// sseEvent is one server-sent event as the client received it.
type sseEvent struct {
	name string
	data string
	at   time.Time
}

// readSSE reads events from r until EOF or error, stamping each with its arrival time; stop (when non-nil)
// is called after each event and ends reading when it returns true.
func readSSE(r io.Reader, stop func(ev sseEvent, n int) bool) ([]sseEvent, error) {
	br := bufio.NewReader(r)
	var out []sseEvent
	var cur sseEvent
	for {
		line, err := br.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		if err != nil {
			return out, err
		}
		switch {
		case line == "":
			if cur.data != "" || cur.name != "" {
				cur.at = time.Now()
				out = append(out, cur)
				if stop != nil && stop(cur, len(out)) {
					return out, nil
				}
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event:"):
			cur.name = strings.TrimSpace(line[6:])
		case strings.HasPrefix(line, "data:"):
			d := strings.TrimPrefix(line[5:], " ")
			if cur.data != "" {
				cur.data += "\n" + d
			} else {
				cur.data = d
			}
		}
	}
}

// stream sends a streaming request and reads every event.
func (w *world) stream(path, key string, body any, hdr ...string) (*http.Response, []sseEvent, string) {
	w.t.Helper()
	req, id := w.newRequest(context.Background(), "POST", path, key, body, hdr...)
	res, err := httpClient.Do(req)
	if err != nil {
		w.t.Fatalf("stream %s: %v", path, err)
	}
	defer res.Body.Close()
	evs, err := readSSE(res.Body, nil)
	if err != nil && err != io.EOF {
		w.t.Fatalf("read stream: %v", err)
	}
	return res, evs, id
}

// ---- error shapes ----

// openAIErr checks an OpenAI-shaped error {"error":{"message","type","code"}} with status and code.
func openAIErr(t testing.TB, a *answer, status int, code string) string {
	t.Helper()
	if a.status != status {
		t.Fatalf("status = %d, want %d (body %s)", a.status, status, a.body)
	}
	var e struct {
		Error *struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(a.body, &e); err != nil || e.Error == nil {
		t.Fatalf("not an OpenAI error body: %s", a.body)
	}
	if e.Error.Message == "" || e.Error.Type == "" {
		t.Fatalf("OpenAI error without message or type: %s", a.body)
	}
	if code != "" && e.Error.Code != code {
		t.Fatalf("error code = %v, want %q (body %s)", e.Error.Code, code, a.body)
	}
	return e.Error.Message
}

// anthropicErr checks an Anthropic-shaped error {"type":"error","error":{"type","message"}} with status.
func anthropicErr(t testing.TB, a *answer, status int, typ string) string {
	t.Helper()
	if a.status != status {
		t.Fatalf("status = %d, want %d (body %s)", a.status, status, a.body)
	}
	var e struct {
		Type  string `json:"type"`
		Error *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(a.body, &e); err != nil || e.Type != "error" || e.Error == nil {
		t.Fatalf("not an Anthropic error body: %s", a.body)
	}
	if e.Error.Message == "" || e.Error.Type == "" || (typ != "" && e.Error.Type != typ) {
		t.Fatalf("Anthropic error type = %q, want %q (body %s)", e.Error.Type, typ, a.body)
	}
	return e.Error.Message
}

// waitFor polls cond until it holds or 10 s pass.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	waitUntil(t, 10*time.Second, what, cond)
}

// waitUntil polls cond until it holds or the timeout passes.
func waitUntil(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

package relay_test

// Setup for the resilience tests: a whole node (apptest) in front of relaytest fakes, configured only through
// the admin and user APIs, with readers for channel health, usage logs and the books. Names carry an rs/rig
// prefix so they never collide with the other end-to-end helpers of this package.

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

// rsBalance is every rig user's starting balance in quota units (1 USD).
const rsBalance = 1_000_000

const rsModel = "gpt-4o-mini"
const rsClaude = "claude-sonnet-4-5"

// rig is one node with a root client and a user "alice" holding an unlimited sk- key.
type rig struct {
	t      *testing.T
	env    *apptest.Env
	node   *apptest.Node
	root   *apptest.Client
	user   *apptest.Client
	userID int64
	key    string
}

// rigOpt adjusts the env before the node starts.
type rigOpt func(*apptest.Env)

// withHealth sets the node's breaker configuration (small cooldowns for the breaker tests).
func withHealth(c health.Config) rigOpt { return func(e *apptest.Env) { e.Options.Health = c } }

// withMetricsToken guards /metrics with tok.
func withMetricsToken(tok string) rigOpt { return func(e *apptest.Env) { e.Cfg.MetricsToken = tok } }

func newRig(t *testing.T, opts ...rigOpt) *rig {
	t.Helper()
	env := apptest.NewEnv(t)
	for _, o := range opts {
		o(env)
	}
	n := env.Start(t)
	r := &rig{t: t, env: env, node: n, root: n.Root(t)}
	res := r.root.Do("PUT", "/api/admin/pricing", []map[string]string{
		{"model": rsModel, "input": "1", "output": "2"},
		{"model": rsClaude, "input": "3", "output": "15"},
	})
	if res.Status != http.StatusOK {
		t.Fatalf("put pricing: %d %s", res.Status, res.Body)
	}
	// The recovery schedule is off unless a test turns it on: it must not probe behind a test's back.
	r.settings(map[string]any{"channel_test_interval": 0})
	r.user, r.userID = r.newUser("alice", rsBalance)
	r.key = r.newKey(r.user)
	return r
}

// newUser signs a user up and sets the balance to quota.
func (r *rig) newUser(name string, quota int64) (*apptest.Client, int64) {
	r.t.Helper()
	c := r.node.SignUp(r.t, name, "password1-"+name)
	u, err := r.node.App.Store.UserByUsername(context.Background(), name)
	if err != nil {
		r.t.Fatalf("user %s: %v", name, err)
	}
	r.topUp(u.ID, quota-r.balance(u.ID))
	return c, u.ID
}

func (r *rig) topUp(userID, delta int64) {
	r.t.Helper()
	if delta == 0 {
		return
	}
	res := r.root.Do("POST", fmt.Sprintf("/api/admin/users/%d/quota", userID), map[string]any{"delta": delta, "reason": "test top-up"})
	if res.Status != http.StatusOK {
		r.t.Fatalf("top up %d: %d %s", userID, res.Status, res.Body)
	}
}

// newKey creates an unlimited sk- key for the client's user.
func (r *rig) newKey(c *apptest.Client) string {
	r.t.Helper()
	res := c.Do("POST", "/api/tokens", map[string]any{"name": fmt.Sprintf("rs-key-%d", rsSeq.Add(1))})
	if res.Status != http.StatusCreated {
		r.t.Fatalf("create key: %d %s", res.Status, res.Body)
	}
	var k struct {
		Key string `json:"key"`
	}
	res.JSON(r.t, &k)
	return k.Key
}

var rsSeq atomic.Int64

// rsFake starts a fake upstream closed when the test ends.
func rsFake(t *testing.T, opts ...relaytest.Option) *relaytest.Upstream {
	t.Helper()
	up := relaytest.New(opts...)
	t.Cleanup(up.Close)
	return up
}

// rsChan is a channel as POST /api/admin/channels takes it.
type rsChan struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	BaseURL     string          `json:"base_url"`
	Keys        []string        `json:"keys"`
	KeyStrategy string          `json:"key_strategy,omitempty"`
	Models      []string        `json:"models"`
	Priority    int64           `json:"priority"`
	Weight      int             `json:"weight,omitempty"`
	Timeouts    *model.Timeouts `json:"timeouts,omitempty"`
}

// oaChan is an OpenAI channel on up serving rsModel; with no keys it gets one unique key.
func oaChan(up *relaytest.Upstream, priority int64, keys ...string) rsChan {
	n := rsSeq.Add(1)
	if len(keys) == 0 {
		keys = []string{fmt.Sprintf("sk-up-%d", n)}
	}
	return rsChan{Type: "openai", Name: fmt.Sprintf("rs-openai-%d", n), BaseURL: up.URL, Keys: keys,
		Models: []string{rsModel}, Priority: priority}
}

// addChannel creates the channel and returns its id.
func (r *rig) addChannel(c rsChan) int64 {
	r.t.Helper()
	res := r.root.Do("POST", "/api/admin/channels", c)
	if res.Status != http.StatusCreated {
		r.t.Fatalf("create channel: %d %s", res.Status, res.Body)
	}
	var v struct {
		ID int64 `json:"id"`
	}
	res.JSON(r.t, &v)
	return v.ID
}

// settings applies a partial settings object.
func (r *rig) settings(patch map[string]any) {
	r.t.Helper()
	if res := r.root.Do("PUT", "/api/admin/settings", patch); res.Status != http.StatusOK {
		r.t.Fatalf("put settings %v: %d %s", patch, res.Status, res.Body)
	}
}

// ---- relay calls ----

var rsHTTP = &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}

// rsAnswer is a finished relay call; reqID is the X-Tollgate-Request-Id the node returned.
type rsAnswer struct {
	status  int
	body    []byte
	header  http.Header
	reqID   string
	elapsed time.Duration
	events  []rsEvent // for streams
}

// rsEvent is one server-sent event as the client received it.
type rsEvent struct{ name, data string }

// do sends a relay request with key; hdr is name, value pairs. Streams (text/event-stream) are read as events.
func (r *rig) do(path, key string, body any, hdr ...string) *rsAnswer {
	r.t.Helper()
	b, _ := json.Marshal(body)
	req, err := http.NewRequest("POST", r.node.URL+path, bytes.NewReader(b))
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	start := time.Now()
	res, err := rsHTTP.Do(req)
	if err != nil {
		r.t.Fatalf("POST %s: %v", path, err)
	}
	defer res.Body.Close()
	a := &rsAnswer{status: res.StatusCode, header: res.Header, reqID: res.Header.Get("X-Tollgate-Request-Id")}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		a.events, err = readEvents(res.Body)
	} else {
		a.body, err = io.ReadAll(res.Body)
	}
	a.elapsed = time.Since(start)
	if err != nil && err != io.EOF {
		r.t.Fatalf("read %s: %v", path, err)
	}
	return a
}

// chat sends a chat completion with the rig user's key.
func (r *rig) chat(body map[string]any, hdr ...string) *rsAnswer {
	r.t.Helper()
	return r.do("/v1/chat/completions", r.key, body, hdr...)
}

// chatReq is a small chat request; extra is field, value pairs.
func chatReq(stream bool, extra ...any) map[string]any {
	b := map[string]any{"model": rsModel, "messages": []any{map[string]any{"role": "user", "content": "hi"}}, "max_tokens": 50}
	if stream {
		b["stream"] = true
	}
	for i := 0; i+1 < len(extra); i += 2 {
		b[extra[i].(string)] = extra[i+1]
	}
	return b
}

// msgReq is a small Anthropic Messages request; extra is field, value pairs.
func msgReq(extra ...any) map[string]any {
	b := map[string]any{"model": rsClaude, "max_tokens": 50, "messages": []any{map[string]any{"role": "user", "content": "hi"}}}
	for i := 0; i+1 < len(extra); i += 2 {
		b[extra[i].(string)] = extra[i+1]
	}
	return b
}

func readEvents(rd io.Reader) ([]rsEvent, error) {
	br := bufio.NewReader(rd)
	var out []rsEvent
	var cur rsEvent
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return out, err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if cur.name != "" || cur.data != "" {
				out = append(out, cur)
			}
			cur = rsEvent{}
		case strings.HasPrefix(line, "event:"):
			cur.name = strings.TrimSpace(line[6:])
		case strings.HasPrefix(line, "data:"):
			cur.data += strings.TrimPrefix(line[5:], " ")
		}
	}
}

// mustOK fails unless the answer is a 200.
func (a *rsAnswer) mustOK(t *testing.T) {
	t.Helper()
	if a.status != http.StatusOK {
		t.Fatalf("status = %d, want 200 (body %s)", a.status, a.body)
	}
}

// openAIError checks an OpenAI-shaped error with status and returns its code.
func (a *rsAnswer) openAIError(t *testing.T, status int) string {
	t.Helper()
	var e struct {
		Error *struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    string `json:"code"`
		} `json:"error"`
	}
	if a.status != status || json.Unmarshal(a.body, &e) != nil || e.Error == nil || e.Error.Message == "" || e.Error.Type == "" {
		t.Fatalf("want an OpenAI error with status %d, got %d %s", status, a.status, a.body)
	}
	return e.Error.Code
}

// ---- health and status ----

// rsHealth is GET /api/admin/channels/:id/health.
type rsHealth struct {
	State         string     `json:"state"`
	Status        string     `json:"status"`
	CooldownUntil *time.Time `json:"cooldown_until"`
	Trips         int        `json:"trips"`
	Keys          []struct {
		Index         int        `json:"index"`
		State         string     `json:"state"`
		CooldownUntil *time.Time `json:"cooldown_until"`
	} `json:"keys"`
}

func (r *rig) health(id int64) rsHealth {
	r.t.Helper()
	res := r.root.Do("GET", fmt.Sprintf("/api/admin/channels/%d/health", id), nil)
	if res.Status != http.StatusOK {
		r.t.Fatalf("health %d: %d %s", id, res.Status, res.Body)
	}
	var h rsHealth
	res.JSON(r.t, &h)
	return h
}

// channelStatus is the channel's status from GET /api/admin/channels/:id.
func (r *rig) channelStatus(id int64) string {
	r.t.Helper()
	res := r.root.Do("GET", fmt.Sprintf("/api/admin/channels/%d", id), nil)
	if res.Status != http.StatusOK {
		r.t.Fatalf("channel %d: %d %s", id, res.Status, res.Body)
	}
	return res.M(r.t)["status"].(string)
}

// ---- logs and books ----

// logs flushes and returns the usage logs matching where (all when empty), oldest first.
func (r *rig) logs(where ...any) []model.UsageLog {
	r.t.Helper()
	r.node.App.Logs.Flush()
	q := r.node.App.Store.DB.Model(&model.UsageLog{})
	if len(where) > 0 {
		q = q.Where(where[0], where[1:]...)
	}
	var out []model.UsageLog
	if err := q.Order("id").Find(&out).Error; err != nil {
		r.t.Fatalf("read logs: %v", err)
	}
	return out
}

// waitLogs waits until exactly n logs match where (the relay queues a row after the client has its answer).
func (r *rig) waitLogs(n int, where ...any) []model.UsageLog {
	r.t.Helper()
	var ls []model.UsageLog
	waitUntil(r.t, 15*time.Second, fmt.Sprintf("%d usage logs matching %v", n, where), func() bool {
		ls = r.logs(where...)
		return len(ls) >= n
	})
	if len(ls) != n {
		r.t.Fatalf("usage logs matching %v = %d, want %d", where, len(ls), n)
	}
	return ls
}

// logOf waits for the one log row of a request.
func (r *rig) logOf(a *rsAnswer) model.UsageLog {
	r.t.Helper()
	if a.reqID == "" {
		r.t.Fatalf("answer without X-Tollgate-Request-Id")
	}
	return r.waitLogs(1, "request_id = ?", a.reqID)[0]
}

// balance is the user's live balance.
func (r *rig) balance(userID int64) int64 {
	r.t.Helper()
	b, err := r.node.App.Ledger.UserBalance(context.Background(), userID)
	if err != nil {
		r.t.Fatalf("balance %d: %v", userID, err)
	}
	return b
}

// checkBooks asserts that the user's n relay calls each left exactly one non-test log row and that the live
// balance, the SQL balance and used quota all equal the start minus the logged costs. It returns the total.
func (r *rig) checkBooks(n int) int64 {
	r.t.Helper()
	ls := r.waitLogs(n, "user_id = ? AND is_test = ?", r.userID, false)
	var sum int64
	seen := map[string]bool{}
	for _, l := range ls {
		if seen[l.RequestID] {
			r.t.Fatalf("two log rows for request %s", l.RequestID)
		}
		seen[l.RequestID] = true
		if l.HTTPStatus != http.StatusOK && l.Cost != 0 {
			r.t.Fatalf("request %s delivered nothing (HTTP %d) but cost %d", l.RequestID, l.HTTPStatus, l.Cost)
		}
		sum += l.Cost
	}
	if got := r.balance(r.userID); got != rsBalance-sum {
		r.t.Fatalf("live balance = %d, want %d - %d", got, rsBalance, sum)
	}
	u, err := r.node.App.Store.UserByID(context.Background(), r.userID)
	if err != nil {
		r.t.Fatal(err)
	}
	if u.Quota != rsBalance-sum || u.UsedQuota != sum {
		r.t.Fatalf("SQL quota/used = %d/%d, want %d/%d", u.Quota, u.UsedQuota, rsBalance-sum, sum)
	}
	return sum
}

// attemptsOf renders a log row's attempts as "channel:class" ("ok" for a success), for compact assertions.
func attemptsOf(l model.UsageLog) string {
	parts := make([]string, 0, len(l.Attempts.V))
	for _, a := range l.Attempts.V {
		c := a.Class
		if c == "" {
			c = "ok"
		}
		parts = append(parts, fmt.Sprintf("%d:%s", a.ChannelID, c))
	}
	return strings.Join(parts, ",")
}

// waitUntil polls cond every 20 ms until it holds or the timeout passes.
func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

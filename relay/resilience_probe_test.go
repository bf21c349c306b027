package relay_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"tollgate/app/apptest"
	"tollgate/relay/relaytest"
)

// rsTestResult is one channel test as the admin API reports it.
type rsTestResult struct {
	ChannelID   int64  `json:"channel_id"`
	OK          bool   `json:"ok"`
	Model       string `json:"model"`
	KeyIndex    int    `json:"key_index"`
	Status      int    `json:"status"`
	LatencyMs   *int64 `json:"latency_ms"`
	FirstByteMs *int64 `json:"first_byte_ms"`
	ErrorClass  string `json:"error_class"`
}

func (r *resilient) testChannel(id int64, body any) (*apptest.Resp, rsTestResult) {
	r.t.Helper()
	res := r.root.Do("POST", fmt.Sprintf("/api/admin/channels/%d/test", id), body)
	var tr rsTestResult
	if res.Status == http.StatusOK {
		res.JSON(r.t, &tr)
		if tr.LatencyMs == nil || tr.FirstByteMs == nil || *tr.FirstByteMs < 0 || *tr.FirstByteMs > *tr.LatencyMs {
			r.t.Fatalf("test result timings: %s", res.Body)
		}
	}
	return res, tr
}

// Channel tests one by one and as a job with progress, the health state in the channel list, and /metrics
// behind its token.
func TestProbe_ChannelTestsListHealthAndMetrics(t *testing.T) {
	const token = "metrics-token-0123456789"
	r := newResilient(t, withMetricsToken(token))
	good, bad := fake(t), fake(t, relaytest.Fail(relaytest.ServerError()))
	goodID := r.channel(openaiChannel(good, "sk-good-0", "sk-good-1"))
	badID := r.channel(openaiChannel(bad).at(10))
	an := openaiChannel(good)
	an.Type, an.Models = "anthropic", []string{rsClaude}
	anID := r.channel(an)

	res, tr := r.testChannel(goodID, map[string]any{"key": 1})
	if res.Status != http.StatusOK || !tr.OK || tr.ChannelID != goodID || tr.Model != rsModel || tr.KeyIndex != 1 ||
		tr.Status != http.StatusOK || tr.ErrorClass != "" {
		t.Fatalf("test of a healthy channel: %d %s", res.Status, res.Body)
	}
	if last, _ := good.Last(); last.Key != "sk-good-1" {
		t.Fatalf("the test used key %q, want the asked-for key 1", last.Key)
	}
	res, tr = r.testChannel(badID, nil)
	if res.Status != http.StatusOK || tr.OK || tr.Status != http.StatusInternalServerError || tr.ErrorClass != "server" || tr.KeyIndex != 0 {
		t.Fatalf("test of a failing channel: %d %s", res.Status, res.Body)
	}
	if res, _ := r.testChannel(goodID, map[string]any{"key": 7}); res.Status != http.StatusBadRequest {
		t.Fatalf("test with a key index out of range: %d %s", res.Status, res.Body)
	}
	if res, _ := r.testChannel(99999, nil); res.Status != http.StatusNotFound {
		t.Fatalf("test of an unknown channel: %d %s", res.Status, res.Body)
	}

	// Test them all as a job and follow its progress until done == total.
	res = r.root.Do("POST", "/api/admin/channels/test", nil)
	var job struct {
		ID      string         `json:"id"`
		Total   int            `json:"total"`
		Done    int            `json:"done"`
		Results []rsTestResult `json:"results"`
		Ended   *time.Time     `json:"ended_at"`
	}
	res.JSON(t, &job)
	if res.Status != http.StatusAccepted || job.ID == "" || job.Total != 3 || job.Done > job.Total {
		t.Fatalf("start test job: %d %s", res.Status, res.Body)
	}
	waitUntil(t, 30*time.Second, "the test job to finish", func() bool {
		res := r.root.Do("GET", "/api/admin/channels/test/"+job.ID, nil)
		if res.Status != http.StatusOK {
			t.Fatalf("job progress: %d %s", res.Status, res.Body)
		}
		prev := job.Done
		res.JSON(t, &job)
		if job.Done < prev || job.Done > job.Total || len(job.Results) != job.Done {
			t.Fatalf("job progress went from %d to %+v", prev, job)
		}
		return job.Done == job.Total && job.Ended != nil
	})
	okBy := map[int64]bool{}
	for _, tr := range job.Results {
		okBy[tr.ChannelID] = tr.OK
	}
	if len(okBy) != 3 || !okBy[goodID] || okBy[badID] || !okBy[anID] {
		t.Fatalf("job results %+v, want each channel once, only the failing one not ok", job.Results)
	}
	if res := r.root.Do("GET", "/api/admin/channels/test/no-such-job", nil); res.Status != http.StatusNotFound {
		t.Fatalf("unknown job: %d %s", res.Status, res.Body)
	}

	// Relay traffic trips the failing channel; the list shows each channel's state and live numbers.
	for i := 0; r.health(badID).State != "open"; i++ {
		if i == 10 {
			t.Fatalf("failing channel never opened")
		}
		r.chat(chatBody(rsModel, false, "prompt_cache_key", fmt.Sprintf("probe-%d", i))).mustOK(t)
	}
	res = r.root.Do("GET", "/api/admin/channels", nil)
	var list struct {
		Items []struct {
			ID     int64 `json:"id"`
			Health *struct {
				State       string   `json:"state"`
				SuccessRate *float64 `json:"success_rate"`
				LatencyMs   *float64 `json:"latency_ms"`
				Requests1h  int64    `json:"requests_1h"`
				LastTest    *struct {
					OK         bool   `json:"ok"`
					ErrorClass string `json:"error_class"`
				} `json:"last_test"`
			} `json:"health"`
		} `json:"items"`
	}
	res.JSON(t, &list)
	states := map[int64]string{}
	for _, it := range list.Items {
		if it.Health == nil || it.Health.SuccessRate == nil || it.Health.LatencyMs == nil {
			t.Fatalf("channel %d listed without health: %s", it.ID, res.Body)
		}
		// Each row carries its latest test (the job's) and how many calls the hour saw.
		if lt := it.Health.LastTest; lt == nil || lt.OK != (it.ID != badID) || (it.ID == badID && lt.ErrorClass != "server") {
			t.Fatalf("channel %d last test = %+v: %s", it.ID, lt, res.Body)
		}
		if it.ID == badID && it.Health.Requests1h == 0 {
			t.Fatalf("the failing channel's calls are not counted: %s", res.Body)
		}
		states[it.ID] = it.Health.State
	}
	if states[goodID] != "closed" || states[badID] != "open" || states[anID] != "closed" {
		t.Fatalf("listed states %v, want the failing channel open and the others closed", states)
	}

	// /metrics answers only to its token.
	for _, tok := range []string{"", "wrong-token"} {
		c := &apptest.Client{T: t, Base: r.node.URL, Token: tok}
		if res := c.Do("GET", "/metrics", nil); res.Status != http.StatusUnauthorized {
			t.Fatalf("/metrics with token %q: %d", tok, res.Status)
		}
	}
	r.node.App.Logs.Flush()
	res = (&apptest.Client{T: t, Base: r.node.URL, Token: token}).Do("GET", "/metrics", nil)
	body := string(res.Body)
	for _, want := range []string{
		fmt.Sprintf(`tollgate_requests_total{channel="%d",class="",model="%s",status="200"}`, goodID, rsModel),
		fmt.Sprintf(`tollgate_channel_state{channel="%d"} 2`, badID),
		fmt.Sprintf(`tollgate_channel_state{channel="%d"} 0`, goodID),
		fmt.Sprintf(`tollgate_upstream_attempts_total{channel="%d",class="server"}`, badID),
	} {
		if res.Status != http.StatusOK || !strings.Contains(body, want) {
			t.Fatalf("/metrics %d lacks %s:\n%s", res.Status, want, grepLines(body, "tollgate_"))
		}
	}
}

// grepLines keeps the lines of s that start with prefix.
func grepLines(s, prefix string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// Route headers go only to admins who ask; every relay response carries its request id, which names its log row.
func TestProbe_RouteDebugHeadersAndRequestIDs(t *testing.T) {
	r := newResilient(t)
	up := fake(t)
	id := r.channel(openaiChannel(up))
	root := &person{name: "root", id: r.rootID(), c: r.root}
	rootKey := r.world.key(root, nil).Key
	r.topUp(root.id, rsBalance)

	a := r.do("/v1/chat/completions", rootKey, chatBody(rsModel, false), "X-Tollgate-Debug", "1")
	a.mustOK(t)
	if a.header.Get("X-Tollgate-Channel") != fmt.Sprint(id) || a.header.Get("X-Tollgate-Attempt") != "1" {
		t.Fatalf("admin debug headers: channel %q attempt %q", a.header.Get("X-Tollgate-Channel"), a.header.Get("X-Tollgate-Attempt"))
	}
	a = r.do("/v1/chat/completions", rootKey, chatBody(rsModel, false))
	if a.header.Get("X-Tollgate-Channel") != "" {
		t.Fatalf("route headers without X-Tollgate-Debug")
	}
	a = r.chat(chatBody(rsModel, false), "X-Tollgate-Debug", "1")
	a.mustOK(t)
	for _, h := range []string{"X-Tollgate-Channel", "X-Tollgate-Attempt", "X-Tollgate-Sticky"} {
		if _, ok := a.header[h]; ok {
			t.Fatalf("a normal user got %s: %q", h, a.header.Get(h))
		}
	}

	// Every relay response carries X-Tollgate-Request-Id: answers, streams, upstream failures and refusals.
	cases := []struct {
		name   string
		path   string
		key    string
		body   any
		status int
		logged bool
	}{
		{"answer", "/v1/chat/completions", r.key, chatBody(rsModel, false), http.StatusOK, true},
		{"stream", "/v1/chat/completions", r.key, chatBody(rsModel, true), http.StatusOK, true},
		{"messages", "/v1/messages", r.key, messagesBody(rsClaude, false), http.StatusNotFound, false}, // no channel serves claude here
		{"bad key", "/v1/chat/completions", "sk-not-a-key", chatBody(rsModel, false), http.StatusUnauthorized, false},
		{"no model", "/v1/chat/completions", r.key, map[string]any{"messages": []any{}}, http.StatusBadRequest, false},
		{"upstream down", "/v1/chat/completions", r.key, chatBody(rsModel, false, "prompt_cache_key", "down"), http.StatusBadGateway, true},
	}
	for _, tc := range cases {
		if tc.name == "upstream down" {
			up.Set(relaytest.Fail(relaytest.ServerError()))
		}
		a := r.do(tc.path, tc.key, tc.body)
		if a.status != tc.status || len(a.reqID) < 8 {
			t.Fatalf("%s: status %d request id %q, want %d with an id", tc.name, a.status, a.reqID, tc.status)
		}
		if tc.logged {
			if l := r.logOf(a.reqID); l.RequestID != a.reqID {
				t.Fatalf("%s: log row %q for request id %q", tc.name, l.RequestID, a.reqID)
			}
		}
	}
}

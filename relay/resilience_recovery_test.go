package relay_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"tollgate/model"
	"tollgate/relay/relaytest"
)

// revokedChannel builds a top-tier channel whose two keys are refused plus a lower spare, drives one call
// through them until the top channel is auto_disabled, and returns the fake and both ids.
func (r *resilient) revokedChannel() (up *relaytest.Upstream, id, spareID int64) {
	r.t.Helper()
	up = fake(r.t, relaytest.Fail(relaytest.InvalidKey()))
	id = r.channel(openaiChannel(up, "sk-rec-1", "sk-rec-2").at(10))
	spareID = r.channel(openaiChannel(fake(r.t)))
	a := r.chat(chatBody(rsModel, false, "prompt_cache_key", "revoke"))
	a.mustOK(r.t)
	if l := r.logOf(a.reqID); l.ChannelID != spareID {
		r.t.Fatalf("call served by %d, want the spare %d", l.ChannelID, spareID)
	}
	waitUntil(r.t, 10*time.Second, "auto_disabled", func() bool { return r.channelStatus(id) == "auto_disabled" })
	return up, id, spareID
}

// rootID is root's user id.
func (r *resilient) rootID() int64 {
	r.t.Helper()
	u, err := r.node.App.Store.UserByUsername(context.Background(), "root")
	if err != nil {
		r.t.Fatal(err)
	}
	return u.ID
}

// adminLogs lists GET /api/admin/logs?channel_id=id, channel tests included (type=all).
func (r *resilient) adminLogs(channelID int64) []model.UsageLog {
	r.t.Helper()
	r.node.App.Logs.Flush()
	res := r.root.Do("GET", fmt.Sprintf("/api/admin/logs?channel_id=%d&limit=200&type=all", channelID), nil)
	if res.Status != http.StatusOK {
		r.t.Fatalf("admin logs: %d %s", res.Status, res.Body)
	}
	var v struct {
		Items []model.UsageLog `json:"items"`
	}
	res.JSON(r.t, &v)
	return v.Items
}

// expectRecovered checks that the channel is enabled and closed with every key ok, and serves again.
func (r *resilient) expectRecovered(id int64) {
	r.t.Helper()
	h := r.health(id)
	if h.State != "closed" || h.Status != "enabled" {
		r.t.Fatalf("recovered channel health %+v, want enabled and closed", h)
	}
	for _, k := range h.Keys {
		if k.State != "ok" {
			r.t.Fatalf("key %d still %q after recovery", k.Index, k.State)
		}
	}
	waitUntil(r.t, 5*time.Second, "routing to the recovered channel", func() bool {
		return r.node.App.Channels.Snapshot().ByID[id].Status == model.StatusEnabled
	})
	a := r.chat(chatBody(rsModel, false, "prompt_cache_key", "after-recovery"))
	a.mustOK(r.t)
	if l := r.logOf(a.reqID); attemptsOf(l) != fmt.Sprintf("%d:ok", id) {
		r.t.Fatalf("after recovery: attempts %s, want the recovered top-tier channel", attemptsOf(l))
	}
}

// An auto-disabled channel whose upstream is fixed comes back through the scheduled recovery test; the tests
// are logged as tests and bill nobody.
func TestRecovery_ScheduledTestReenablesFixedChannel(t *testing.T) {
	r := newResilient(t)
	up, id, _ := r.revokedChannel()
	rootID := r.rootID()
	rootBefore := r.liveBalance(rootID)

	up.Reset()
	r.settings(map[string]any{"channel_test_interval": 1})
	// Each scheduled run tests the first key that needs it, and a pass clears only that key: the second
	// refused key comes back on the next run.
	waitUntil(t, 30*time.Second, "the scheduled tests to re-enable the channel and both keys", func() bool {
		h := r.health(id)
		return r.channelStatus(id) == "enabled" && h.State == "closed" && h.Keys[0].State == "ok" && h.Keys[1].State == "ok"
	})
	r.settings(map[string]any{"channel_test_interval": 0})
	r.expectRecovered(id)

	var passed int
	for _, l := range r.adminLogs(id) {
		if l.Endpoint != "test" {
			continue
		}
		if !l.IsTest || l.UserID != 0 || l.Cost != 0 {
			t.Fatalf("scheduled test row %+v, want is_test by nobody at no cost", l)
		}
		if l.Status == "success" {
			passed++
		}
	}
	if passed == 0 {
		t.Fatalf("no passing scheduled test in the admin logs")
	}
	r.checkBooks(2) // alice's two calls, nothing for the tests
	if got := r.liveBalance(rootID); got != rootBefore {
		t.Fatalf("root balance %d → %d across tests", rootBefore, got)
	}
}

// The admin's test button re-enables a fixed channel at once, and is logged under the admin, unbilled.
func TestRecovery_ManualTestReenablesAtOnce(t *testing.T) {
	r := newResilient(t)
	up, id, _ := r.revokedChannel()
	rootID := r.rootID()
	rootBefore := r.liveBalance(rootID)

	// Still broken: the test reports the refusal and changes nothing.
	res := r.root.Do("POST", fmt.Sprintf("/api/admin/channels/%d/test", id), map[string]any{"key": 1})
	var tr struct {
		OK          bool   `json:"ok"`
		Status      int    `json:"status"`
		KeyIndex    int    `json:"key_index"`
		ErrorClass  string `json:"error_class"`
		LatencyMs   *int64 `json:"latency_ms"`
		FirstByteMs *int64 `json:"first_byte_ms"`
	}
	res.JSON(t, &tr)
	if res.Status != http.StatusOK || tr.OK || tr.Status != http.StatusUnauthorized || tr.ErrorClass != "auth" || tr.KeyIndex != 1 {
		t.Fatalf("test of a refused key: %d %s", res.Status, res.Body)
	}
	if st := r.channelStatus(id); st != "auto_disabled" {
		t.Fatalf("a failing test changed the status to %q", st)
	}

	up.Reset()
	res = r.root.Do("POST", fmt.Sprintf("/api/admin/channels/%d/test", id), nil)
	tr.ErrorClass = ""
	res.JSON(t, &tr)
	if !tr.OK || tr.Status != http.StatusOK || tr.ErrorClass != "" || tr.LatencyMs == nil || tr.FirstByteMs == nil ||
		*tr.FirstByteMs > *tr.LatencyMs {
		t.Fatalf("test of the fixed channel: %d %s", res.Status, res.Body)
	}
	if st := r.channelStatus(id); st != "enabled" {
		t.Fatalf("status right after a passing test = %q, want enabled", st)
	}
	// The pass cleared key 0 only; key 1 comes back with a pass of its own.
	if k := r.health(id).Keys; k[0].State != "ok" || k[1].State != "disabled" {
		t.Fatalf("keys after a pass of key 0: %+v", k)
	}
	r.passTest(id, 1)
	r.expectRecovered(id)

	tests := 0
	for _, l := range r.adminLogs(id) {
		if l.Endpoint == "test" {
			tests++
			if !l.IsTest || l.UserID != rootID || l.Cost != 0 {
				t.Fatalf("manual test row %+v, want is_test by root at no cost", l)
			}
		}
	}
	if tests != 3 {
		t.Fatalf("%d test rows in the admin logs, want 3", tests)
	}
	r.checkBooks(2)
	if got := r.liveBalance(rootID); got != rootBefore {
		t.Fatalf("root balance %d → %d across tests", rootBefore, got)
	}
}

package relay_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"tollgate/app/apptest"
)

// fleetNumbers is the part of the fleet stats the test reads.
type fleetNumbers struct {
	ChannelID int64            `json:"channel_id"`
	Requests  int64            `json:"requests"`
	Attempts  int64            `json:"attempts"`
	Classes   map[string]int64 `json:"classes"`
}

// Traffic through two nodes: the fleet's request count is what was sent to both, whichever node is asked, and
// it is still there for a node started afterwards; the health view shows the fleet's totals.
func TestFleet_TwoNodesCountEveryRequestAndSurviveARestart(t *testing.T) {
	env := apptest.NewEnv(t)
	a := env.Start(t)
	wa := worldOn(t, a)
	wa.prices(price{Model: rsModel, Input: "1", Output: "2"})
	up := fake(t)
	id := wa.channel(openaiChannel(up))
	alice := wa.user("alice", rsBalance)
	key := wa.key(alice, nil).Key
	b := env.Start(t) // starts after the channel exists: it loads it from SQL on either shape
	wb := worldOn(t, b)
	const onA, onB = 30, 20
	for i := range onA + onB {
		w := wa
		if i >= onA {
			w = wb
		}
		w.call("POST", "/v1/chat/completions", key, chatBody(rsModel, false)).mustOK(t)
	}
	for _, n := range []*apptest.Node{a, b} {
		n.App.Logs.Flush()
		if err := n.App.Fleet.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	read := func(w *world) fleetNumbers {
		t.Helper()
		r := w.root.Do("GET", "/api/admin/fleet?window=5m", nil)
		var out struct{ Items []fleetNumbers }
		if r.Status != http.StatusOK || json.Unmarshal(r.Body, &out) != nil {
			t.Fatalf("fleet: %d %s", r.Status, r.Body)
		}
		for _, it := range out.Items {
			if it.ChannelID == id {
				return it
			}
		}
		return fleetNumbers{}
	}
	for name, w := range map[string]*world{"A": wa, "B": wb} {
		if got := read(w); got.Requests != onA+onB || got.Classes[""] != onA+onB {
			t.Fatalf("node %s reads %+v, want %d requests, all successes", name, got, onA+onB)
		}
	}
	c := worldOn(t, env.Start(t)) // a node started afterwards reads the same numbers
	if got := read(c); got.Requests != onA+onB {
		t.Fatalf("a fresh node reads %+v", got)
	}
	r := c.root.Do("GET", fmt.Sprintf("/api/admin/channels/%d/health", id), nil)
	var h struct {
		Fleet map[string]fleetNumbers `json:"fleet"`
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &h) != nil || h.Fleet["5m"].Requests != onA+onB || h.Fleet["24h"].Requests != onA+onB {
		t.Fatalf("health view fleet: %d %s", r.Status, r.Body)
	}
}

package relay_test

// Channel tests are the admin's, not customers' traffic: the dashboards' sums, the log lists, their totals
// and the CSV export leave them out by default, list them with type=test, and say so (is_test) wherever
// they are shown. Root's own dashboard must show what root's keys did, not the tests root ran.

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

type logsPage struct {
	Items []struct {
		ID        int64  `json:"id"`
		UserID    int64  `json:"user_id"`
		Endpoint  string `json:"endpoint"`
		IsTest    bool   `json:"is_test"`
		RequestID string `json:"request_id"`
	} `json:"items"`
}

type logsTotals struct {
	Requests         int64 `json:"requests"`
	Cost             int64 `json:"cost"`
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
}

func TestChannelTests_KeptApartFromCustomerTraffic(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 5_000_000)
	for range 2 {
		if a := s.call("POST", "/v1/chat/completions", s.key.Key, chatBody("gpt-4o", false)); a.status != http.StatusOK {
			t.Fatalf("relayed call: %d %s", a.status, a.body)
		}
	}
	s.waitLogs(2, "user_id = ?", s.alice.id)
	for _, id := range []int64{s.oaID, s.anID} {
		if r := s.root.Do("POST", fmt.Sprintf("/api/admin/channels/%d/test", id), nil); r.Status != http.StatusOK {
			t.Fatalf("channel test: %d %s", r.Status, r.Body)
		}
	}
	if tests := s.allLogs("is_test = ?", true); len(tests) != 2 {
		t.Fatalf("channel test rows = %d, want 2", len(tests))
	}
	paid := s.logs()
	var cost, prompt, completion int64
	for _, l := range paid {
		cost, prompt, completion = cost+l.Cost, prompt+l.PromptTokens, completion+l.CompletionTokens
	}
	if cost == 0 || prompt == 0 {
		t.Fatalf("paid calls cost nothing: %+v", paid)
	}

	// Root's own dashboard: root made no paid call; the two tests root ran are not root's traffic.
	var own struct {
		Totals logsTotals `json:"totals"`
		Days   []struct {
			Requests int64 `json:"requests"`
		} `json:"days"`
	}
	s.root.Do("GET", "/api/logs/stats", nil).JSON(t, &own)
	if own.Totals.Requests != 0 || len(own.Days) != 0 {
		t.Fatalf("root's own stats count the channel tests: %+v", own)
	}
	var ownTests struct {
		Totals logsTotals `json:"totals"`
	}
	s.root.Do("GET", "/api/logs/stats?type=test", nil).JSON(t, &ownTests)
	if ownTests.Totals.Requests != 2 || ownTests.Totals.Cost != 0 {
		t.Fatalf("root's channel tests, asked for: %+v", ownTests.Totals)
	}

	// Site-wide sums (daily tables for today, and raw rows when a status filter forces them): paid calls only.
	for _, q := range []string{"", "?status=success"} {
		var all struct {
			Totals logsTotals `json:"totals"`
		}
		s.root.Do("GET", "/api/admin/logs/stats"+q, nil).JSON(t, &all)
		if all.Totals.Requests != 2 || all.Totals.Cost != cost || all.Totals.PromptTokens != prompt {
			t.Fatalf("admin stats%s = %+v, want 2 requests costing %d with %d prompt tokens", q, all.Totals, cost, prompt)
		}
		var tot logsTotals
		s.root.Do("GET", "/api/admin/logs/totals"+q, nil).JSON(t, &tot)
		if tot != (logsTotals{2, cost, prompt, completion}) {
			t.Fatalf("admin totals%s = %+v, want {2 %d %d %d}", q, tot, cost, prompt, completion)
		}
	}
	var testTot logsTotals
	s.root.Do("GET", "/api/admin/logs/totals?type=test", nil).JSON(t, &testTot)
	if testTot.Requests != 2 || testTot.Cost != 0 {
		t.Fatalf("admin totals of tests = %+v", testTot)
	}
	var users struct {
		Items []struct {
			UserID   int64 `json:"user_id"`
			Requests int64 `json:"requests"`
		} `json:"items"`
	}
	s.root.Do("GET", "/api/admin/stats/users", nil).JSON(t, &users)
	if len(users.Items) != 1 || users.Items[0].UserID != s.alice.id || users.Items[0].Requests != 2 {
		t.Fatalf("top users = %+v, want alice alone with 2", users.Items)
	}

	// Lists: paid calls by default, tests apart and marked.
	list := func(q string) logsPage {
		var p logsPage
		r := s.root.Do("GET", "/api/admin/logs"+q, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("admin logs%s: %d %s", q, r.Status, r.Body)
		}
		r.JSON(t, &p)
		return p
	}
	if p := list(""); len(p.Items) != 2 || p.Items[0].IsTest || p.Items[1].IsTest {
		t.Fatalf("default admin list: %+v", p.Items)
	}
	if p := list("?type=test"); len(p.Items) != 2 || !p.Items[0].IsTest || p.Items[0].Endpoint != "test" {
		t.Fatalf("type=test admin list: %+v", p.Items)
	}
	if p := list("?type=all"); len(p.Items) != 4 {
		t.Fatalf("type=all admin list: %+v", p.Items)
	}
	var rootOwn logsPage
	s.root.Do("GET", "/api/logs?type=test", nil).JSON(t, &rootOwn)
	if len(rootOwn.Items) != 2 || rootOwn.Items[0].Endpoint != "test" {
		t.Fatalf("root's own list of tests: %+v", rootOwn.Items)
	}
	r := s.root.Do("GET", "/api/admin/logs?type=bogus", nil)
	if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), `"type"`) {
		t.Fatalf("type=bogus: %d %s", r.Status, r.Body)
	}

	// The export follows the same filter: paid calls by default, tests with type=test, a type column.
	rows := func(q string) [][]string {
		r := s.root.Do("GET", "/api/admin/logs/export"+q, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("export%s: %d %s", q, r.Status, r.Body)
		}
		recs, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
		if err != nil {
			t.Fatalf("export%s is not CSV: %v\n%s", q, err, r.Body)
		}
		return recs
	}
	col := func(h []string, name string) int {
		for i, c := range h {
			if c == name {
				return i
			}
		}
		t.Fatalf("no column %q in %v", name, h)
		return -1
	}
	paidCSV := rows("")
	if len(paidCSV) != 3 || paidCSV[1][col(paidCSV[0], "type")] != "usage" {
		t.Fatalf("export of paid calls: %v", paidCSV)
	}
	var csvCost int64
	for _, rec := range paidCSV[1:] {
		n, _ := strconv.ParseInt(rec[col(paidCSV[0], "cost_units")], 10, 64)
		csvCost += n
	}
	if csvCost != cost {
		t.Fatalf("export cost = %d, want %d", csvCost, cost)
	}
	if testCSV := rows("?type=test"); len(testCSV) != 3 || testCSV[1][col(testCSV[0], "type")] != "test" {
		t.Fatalf("export of tests: %v", testCSV)
	}
}

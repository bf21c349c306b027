package app_test

import (
	"bufio"
	"context"
	"encoding/csv"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"tollgate/app/apptest"
	"tollgate/model"
)

// seedLogs writes n usage rows for user (and their daily sums) in transactions of 2,000, with text in every
// column an export writes, so a row costs what a real one does.
func seedLogs(t testing.TB, n *apptest.Node, user int64, rows int) {
	t.Helper()
	st := n.App.Store
	start := time.Now().UTC().Add(-time.Duration(rows) * time.Second)
	batch := make([]model.UsageLog, 0, 2000)
	for i := 0; i < rows; {
		batch = batch[:0]
		for ; i < rows && len(batch) < cap(batch); i++ {
			l := model.UsageLog{RequestID: "seed-" + strconv.Itoa(i), CreatedAt: start.Add(time.Duration(i) * time.Second),
				UserID: user, TokenID: 1, ChannelID: 1, Model: "gpt-4o", UpstreamModel: "gpt-4o-2024-08-06", Endpoint: "chat",
				PromptTokens: 1200, CompletionTokens: 340, Cost: 4321, UpstreamCost: 3000, GroupRatio: "1", Status: "success",
				HTTPStatus: 200, ElapsedMs: 812, FirstByteMs: 300, ClientIP: "203.0.113.7", Username: "alice",
				TokenName: "production key", ChannelName: "openai-main", ClientProtocol: "openai", UpstreamProtocol: "openai"}
			l.Price.V = model.PriceBreakdown{Input: "2.5", Output: "10", CacheRead: "1.25", CacheWrite: "0", PerCall: "0"}
			l.Attempts.V = []model.Attempt{{ChannelID: 1, Status: 200, LatencyMs: 812}}
			batch = append(batch, l)
		}
		if err := st.AddLogs(context.Background(), batch); err != nil {
			t.Fatalf("seed logs: %v", err)
		}
	}
}

// A CSV export streams from the database by keyset pages: 100,000 rows raise the process's RSS by at most
// 20 MB (an export that loaded every row would need well over 100 MB for them).
func TestLogExport_100kRowsRaiseRSSByAtMost20MB(t *testing.T) {
	apptest.SkipUnlessMemoryPass(t)
	const rows = 100_000
	n := apptest.New(t)
	root := n.Root(t)
	seeded := time.Now()
	seedLogs(t, n, userID(t, n, "root"), rows)
	t.Logf("seeded %d rows in %s", rows, time.Since(seeded).Round(time.Millisecond))

	base, rise := apptest.RSSRise(t)
	req, _ := http.NewRequest("GET", n.URL+"/api/admin/logs/export?model=gpt-4o", nil)
	req.Header.Set("Authorization", "Bearer "+root.Token)
	began := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") ||
		!strings.Contains(res.Header.Get("Content-Disposition"), "attachment; filename=") {
		t.Fatalf("export: %d %v", res.StatusCode, res.Header)
	}
	// Read it as a spreadsheet would, row by row, without keeping it.
	cr := csv.NewReader(bufio.NewReader(res.Body))
	cr.ReuseRecord = true
	lines := 0
	var bytesCost int64
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("row %d: %v", lines, err)
		}
		if lines > 0 && rec[3] != "usage" {
			t.Fatalf("row %d type %q", lines, rec[3])
		}
		lines++
		bytesCost += int64(len(rec))
	}
	grew := rise() << 10
	if lines != rows+1 {
		t.Fatalf("exported %d lines, want %d rows + header", lines, rows)
	}
	t.Logf("exported %d rows in %s; RSS %d MB before, peak %.1f MB above", rows, time.Since(began).Round(time.Millisecond),
		base>>10, float64(grew)/(1<<20))
	if grew > 20<<20 {
		t.Fatalf("RSS grew by %.1f MB during the export, want ≤ 20 MB", float64(grew)/(1<<20))
	}
}

func TestLogExport_EscapesCellsAndShowsUsersOnlyTheirOwn(t *testing.T) {
	n := apptest.New(t)
	root := n.Root(t)
	alice := n.SignUp(t, "alice", "Maple-River-31")
	aliceID, rootID := userID(t, n, "alice"), userID(t, n, "root")
	st := n.App.Store
	now := time.Now().UTC()
	logs := []model.UsageLog{
		{RequestID: "r-1", CreatedAt: now.Add(-3 * time.Second), UserID: aliceID, Model: "gpt-4o", Status: "success", Cost: 1500000,
			TokenName: "=HYPERLINK(\"http://evil\")", ClientRequestID: "+cmd|' /C calc'!A0", Username: "alice", ChannelName: "secret-chan"},
		{RequestID: "r-2", CreatedAt: now.Add(-2 * time.Second), UserID: aliceID, Model: "gpt-4o", Status: "error", ErrorCode: "upstream_error",
			ErrorClass: "server", Error: "@SUM(1,2)\nline \"two\", comma", Username: "alice", TokenName: "-2+3"},
		{RequestID: "r-3", CreatedAt: now.Add(-1 * time.Second), UserID: rootID, Model: "gpt-4o", Status: "success", Username: "root"},
	}
	if err := st.AddLogs(context.Background(), logs); err != nil {
		t.Fatal(err)
	}
	r := alice.Do("GET", "/api/logs/export", nil)
	wantStatus(t, r, http.StatusOK)
	if cd := r.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, `attachment; filename="tollgate-logs-`) || !strings.HasSuffix(cd, `.csv"`) {
		t.Fatalf("Content-Disposition %q", cd)
	}
	recs, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
	if err != nil {
		t.Fatalf("not CSV: %v\n%s", err, r.Body)
	}
	if len(recs) != 3 {
		t.Fatalf("alice's export has %d lines, want header + her 2 rows:\n%s", len(recs), r.Body)
	}
	body := string(r.Body)
	for _, bad := range []string{"r-3", "secret-chan", "@SUM"} {
		if strings.Contains(body, bad) && !strings.Contains(body, "'"+bad) {
			t.Fatalf("alice's export holds %q:\n%s", bad, body)
		}
	}
	if strings.Contains(body, "r-3") || strings.Contains(body, "secret-chan") {
		t.Fatalf("alice sees another user's row or the hidden channel:\n%s", body)
	}
	h := map[string]int{}
	for i, c := range recs[0] {
		h[c] = i
	}
	newest, oldest := recs[1], recs[2]
	if oldest[h["token_name"]] != `'=HYPERLINK("http://evil")` || oldest[h["client_request_id"]] != `'+cmd|' /C calc'!A0` ||
		newest[h["token_name"]] != "'-2+3" || oldest[h["cost_usd"]] != "1.5" || oldest[h["cost_units"]] != "1500000" {
		t.Fatalf("cells not guarded: %q", recs)
	}
	if newest[h["error"]] == "" || strings.Contains(newest[h["error"]], "SUM") {
		t.Fatalf("the user's error cell is the upstream text, not the gateway's message: %q", newest[h["error"]])
	}
	// The admin export keeps the upstream text (guarded, quoted across its line break) and every user.
	r = root.Do("GET", "/api/admin/logs/export?status=error", nil)
	recs, err = csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
	if err != nil || len(recs) != 2 {
		t.Fatalf("admin export status=error: %v %q", err, recs)
	}
	for i, c := range recs[0] {
		h[c] = i
	}
	if recs[1][h["error"]] != "'@SUM(1,2)\nline \"two\", comma" {
		t.Fatalf("admin error cell %q", recs[1][h["error"]])
	}
	wantField(t, alice.Do("GET", "/api/logs/export?from=yesterday", nil), "from")
	wantStatus(t, alice.Do("GET", "/api/admin/logs/export", nil), http.StatusForbidden)
}

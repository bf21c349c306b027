package app_test

// Redemption codes through a whole node: batches, the CSV export, redeeming once under any concurrency, the
// answers for every wrong code, and the guess limits per user and per client network.

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"tollgate/app/apptest"
	"tollgate/model"
)

// batchAnswer is POST /api/admin/redemptions's answer.
type batchAnswer struct {
	Batch     string     `json:"batch"`
	Name      string     `json:"name"`
	Count     int        `json:"count"`
	Quota     int64      `json:"quota"`
	ExpiresAt *time.Time `json:"expires_at"`
	Codes     []string   `json:"codes"`
}

// codeView is one item of GET /api/admin/redemptions.
type codeView struct {
	ID         int64      `json:"id"`
	Batch      string     `json:"batch"`
	BatchName  string     `json:"batch_name"`
	Hint       string     `json:"hint"`
	Quota      int64      `json:"quota"`
	Status     string     `json:"status"`
	ExpiresAt  *time.Time `json:"expires_at"`
	UsedBy     int64      `json:"used_by"`
	UsedByName string     `json:"used_by_name"`
	UsedAt     *time.Time `json:"used_at"`
	UsedIP     string     `json:"used_ip"`
}

// newBatch creates a batch through the admin API.
func newBatch(t testing.TB, root *apptest.Client, count int, quota int64, expires *time.Time) batchAnswer {
	t.Helper()
	body := map[string]any{"name": fmt.Sprintf("batch of %d", count), "count": count, "quota": quota}
	if expires != nil {
		body["expires_at"] = expires.Format(time.RFC3339Nano)
	}
	r := root.Do("POST", "/api/admin/redemptions", body)
	wantStatus(t, r, http.StatusCreated)
	var b batchAnswer
	r.JSON(t, &b)
	if len(b.Codes) != count || b.Count != count || b.Quota != quota || b.Batch == "" {
		t.Fatalf("batch answer: %s", r.Body)
	}
	return b
}

// withIP sends c's request as if from client address ip (the node must trust the test client as a proxy).
func withIP(t testing.TB, c *apptest.Client, ip, method, path string, body any) *apptest.Resp {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, c.Base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.Token)
	if c.Lang != "" {
		req.Header.Set("Accept-Language", c.Lang)
	}
	if ip != "" {
		req.Header.Set("X-Forwarded-For", ip)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", method, path, err)
		return &apptest.Resp{}
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return &apptest.Resp{Status: res.StatusCode, Body: out, Header: res.Header}
}

// redeem posts a code as c from ip ("" = the test client's own address).
func redeem(t testing.TB, c *apptest.Client, ip string, code any) *apptest.Resp {
	t.Helper()
	return withIP(t, c, ip, "POST", "/api/user/redeem", map[string]any{"code": code})
}

// redeemed checks a 200 answer and returns it.
func redeemed(t testing.TB, r *apptest.Resp, quota int64) (added, balance int64) {
	t.Helper()
	wantStatus(t, r, http.StatusOK)
	var out struct {
		QuotaAdded *int64 `json:"quota_added"`
		Quota      *int64 `json:"quota"`
	}
	r.JSON(t, &out)
	if out.QuotaAdded == nil || out.Quota == nil || *out.QuotaAdded != quota {
		t.Fatalf("redeem answer %s, want quota_added %d", r.Body, quota)
	}
	return *out.QuotaAdded, *out.Quota
}

// balances reads a user's balance from SQL and from the live ledger.
func balances(t testing.TB, n *apptest.Node, id int64) (sql, live int64) {
	t.Helper()
	u, err := n.App.Store.UserByID(context.Background(), id)
	if err != nil {
		t.Fatalf("user %d: %v", id, err)
	}
	b, err := n.App.Ledger.UserBalance(context.Background(), id)
	if err != nil {
		t.Fatalf("live balance %d: %v", id, err)
	}
	return u.Quota, b
}

// gift turns the new-user gift on, so the books hold two kinds of credit.
func gift(t testing.TB, root *apptest.Client, units int64) {
	t.Helper()
	wantStatus(t, root.Do("PUT", "/api/admin/settings", map[string]any{"new_user_quota": units}), http.StatusOK)
}

func TestRedeem_FortyConcurrentRedemptionsOfOneCodeByFiveUsersMoveMoneyOnce(t *testing.T) {
	t.Parallel()
	env := apptest.NewEnv(t)
	behindProxy(env)
	n := env.Start(t)
	root := n.Root(t)
	gift(t, root, 5_000)
	const quota = 1_234_567
	code := newBatch(t, root, 1, quota, nil).Codes[0]

	type person struct {
		c  *apptest.Client
		id int64
		ip string
	}
	var people []person
	for i := range 5 {
		name := fmt.Sprintf("racer%d", i)
		// Five users are five clients: each speaks from its own address, with 8 attempts (below both guess limits,
		// whose reservations would otherwise turn some of these 409s into 429s).
		people = append(people, person{n.SignUp(t, name, "Sprint-Passw0rd-1"), userID(t, n, name), fmt.Sprintf("198.51.100.%d", 10+i)})
	}
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		mu    sync.Mutex
		codes = map[int]int{}
		wins  []int
		resps []*apptest.Resp
	)
	for i := range 40 {
		p := people[i%5]
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r := redeem(t, p.c, p.ip, code)
			mu.Lock()
			defer mu.Unlock()
			codes[r.Status]++
			resps = append(resps, r)
			if r.Status == http.StatusOK {
				wins = append(wins, i%5)
			}
		}()
	}
	close(start)
	wg.Wait()
	if codes[http.StatusOK] != 1 || codes[http.StatusConflict] != 39 {
		t.Fatalf("answers by status %v, want one 200 and 39 409", codes)
	}
	for _, r := range resps {
		if r.Status == http.StatusConflict {
			wantError(t, r, http.StatusConflict, "code_used")
		}
	}
	winner := people[wins[0]]
	for i, p := range people {
		sql, live := balances(t, n, p.id)
		want := int64(5_000)
		if i == wins[0] {
			want += quota
		}
		if sql != want || live != want {
			t.Fatalf("%d: balance SQL %d live %d, want %d", i, sql, live, want)
		}
		wantBooks(t, n, p.id, want)
	}
	if got := count(t, n, &model.AuditLog{}, "action = ?", "redemption.redeem"); got != 1 {
		t.Fatalf("%d audit rows for the redeem, want 1", got)
	}
	var a model.AuditLog
	if err := n.App.Store.DB.Where("action = ?", "redemption.redeem").Take(&a).Error; err != nil {
		t.Fatal(err)
	}
	if a.ActorID != winner.id || a.IP != winner.ip || !strings.Contains(a.Detail, fmt.Sprint(quota)) {
		t.Fatalf("audit row %+v, want actor %d from %s", a, winner.id, winner.ip)
	}
	if got := count(t, n, &model.Credit{}, "source = ?", model.CreditRedeem); got != 1 {
		t.Fatalf("%d redeem credits, want 1", got)
	}
	var items struct{ Items []codeView }
	root.Do("GET", "/api/admin/redemptions", nil).JSON(t, &items)
	if len(items.Items) != 1 {
		t.Fatalf("list: %+v", items)
	}
	if c := items.Items[0]; c.Status != "used" || c.UsedBy != winner.id || c.UsedIP != winner.ip || c.UsedAt == nil ||
		c.UsedByName != fmt.Sprintf("racer%d", wins[0]) {
		t.Fatalf("the code after the race: %+v", c)
	}
}

func TestRedeem_OneUserTwentyConcurrentRedeemsOfOneCodeCreditOnce(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	root := n.Root(t)
	const quota = 777_000
	code := newBatch(t, root, 1, quota, nil).Codes[0]
	u := n.SignUp(t, "hasty", "Quick-Passw0rd-1")
	id := userID(t, n, "hasty")
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		mu    sync.Mutex
		resps []*apptest.Resp
	)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r := redeem(t, u, "", code)
			mu.Lock()
			resps = append(resps, r)
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	ok := 0
	for _, r := range resps {
		switch r.Status {
		case http.StatusOK:
			ok++
			if _, bal := redeemed(t, r, quota); bal != quota {
				t.Fatalf("balance after = %d, want %d", bal, quota)
			}
		case http.StatusConflict:
			wantError(t, r, http.StatusConflict, "code_used")
		default:
			// More attempts in flight at once than the user's guess allowance: refused before the lookup.
			wantError(t, r, http.StatusTooManyRequests, "too_many_attempts")
			retryAfter(t, r)
		}
	}
	if ok != 1 {
		t.Fatalf("%d answers were 200, want exactly 1", ok)
	}
	if sql, live := balances(t, n, id); sql != quota || live != quota {
		t.Fatalf("balance SQL %d live %d, want %d", sql, live, quota)
	}
	wantBooks(t, n, id, quota)
	if got := count(t, n, &model.Credit{}, "user_id = ? AND source = ?", id, model.CreditRedeem); got != 1 {
		t.Fatalf("%d credits, want 1", got)
	}
	if got := count(t, n, &model.AuditLog{}, "action = ?", "redemption.redeem"); got != 1 {
		t.Fatalf("%d audit rows, want 1", got)
	}
}

// exportCSV downloads a batch's CSV and parses it.
func exportCSV(t testing.TB, root *apptest.Client, batch string) (*apptest.Resp, [][]string) {
	t.Helper()
	r := root.Do("GET", "/api/admin/redemptions/export?batch="+batch, nil)
	wantStatus(t, r, http.StatusOK)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
		t.Fatalf("Content-Type %q", ct)
	}
	if cd := r.Header.Get("Content-Disposition"); cd != `attachment; filename="redemptions-`+batch+`.csv"` {
		t.Fatalf("Content-Disposition %q", cd)
	}
	recs, err := csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
	if err != nil {
		t.Fatalf("CSV: %v\n%s", err, r.Body)
	}
	return r, recs
}

func TestRedemptionBatch_ExportsOneCSVLinePerCodeAndTheCodesRedeem(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	root := n.Root(t)
	const quota = 2_500_000
	b := newBatch(t, root, 100, quota, nil)
	other := newBatch(t, root, 3, 9, nil) // another batch, which must stay out of this export

	r, recs := exportCSV(t, root, b.Batch)
	if lines := strings.Count(string(r.Body), "\n"); lines != 101 || len(recs) != 101 {
		t.Fatalf("CSV has %d lines (%d records), want 101", lines, len(recs))
	}
	if got := strings.Join(recs[0], ","); got != "code,quota,status,expires_at,used_by,used_by_name,used_at" {
		t.Fatalf("header %q", got)
	}
	issued := map[string]bool{}
	for _, c := range b.Codes {
		issued[c] = true
	}
	for _, c := range other.Codes {
		if strings.Contains(string(r.Body), c) {
			t.Fatalf("another batch's code %s is in the export", c)
		}
	}
	var fromCSV []string
	for _, rec := range recs[1:] {
		if !issued[rec[0]] || rec[1] != fmt.Sprint(quota) || rec[2] != "unused" || rec[3] != "" || rec[4] != "" || rec[6] != "" {
			t.Fatalf("CSV line %q", rec)
		}
		delete(issued, rec[0])
		fromCSV = append(fromCSV, rec[0])
	}
	if len(issued) != 0 {
		t.Fatalf("%d issued codes missing from the CSV", len(issued))
	}

	// Codes taken from the CSV redeem.
	u := n.SignUp(t, "csvuser", "Sheet-Passw0rd-1")
	id := userID(t, n, "csvuser")
	for i, c := range fromCSV[:3] {
		if _, bal := redeemed(t, redeem(t, u, "", c), quota); bal != int64(i+1)*quota {
			t.Fatalf("balance after %d codes = %d", i+1, bal)
		}
	}
	wantBooks(t, n, id, 3*quota)

	// The export now says who used them; the list never shows a code, only its hint.
	_, recs = exportCSV(t, root, b.Batch)
	for _, rec := range recs[1:4] {
		if rec[2] != "used" || rec[4] != fmt.Sprint(id) || rec[5] != "csvuser" || rec[6] == "" {
			t.Fatalf("used code's CSV line %q", rec)
		}
	}
	list := root.Do("GET", "/api/admin/redemptions?size=100&batch="+b.Batch, nil)
	wantStatus(t, list, http.StatusOK)
	for _, c := range b.Codes {
		if bytes.Contains(list.Body, []byte(c[3:])) || bytes.Contains(list.Body, []byte(c[10:30])) {
			t.Fatalf("the list shows a code: %s", c)
		}
	}
	var page struct {
		Items []codeView
		Total int64
	}
	list.JSON(t, &page)
	if page.Total != 100 || len(page.Items) != 100 {
		t.Fatalf("list total %d, %d items", page.Total, len(page.Items))
	}
	for _, it := range page.Items {
		if !strings.HasPrefix(it.Hint, "TG-") || !strings.Contains(it.Hint, "…") || it.Batch != b.Batch || it.BatchName != b.Name {
			t.Fatalf("list item %+v", it)
		}
	}
	for status, want := range map[string]int64{"used": 3, "unused": 97, "expired": 0, "disabled": 0} {
		var p struct{ Total int64 }
		root.Do("GET", "/api/admin/redemptions?status="+status+"&batch="+b.Batch, nil).JSON(t, &p)
		if p.Total != want {
			t.Fatalf("status=%s: total %d, want %d", status, p.Total, want)
		}
	}
	var batches struct {
		Items []struct {
			Batch                                string
			Name                                 string
			Quota, Count, Unused, Used, Disabled int64
		}
		Total int64
	}
	root.Do("GET", "/api/admin/redemptions/batches", nil).JSON(t, &batches)
	if batches.Total != 2 || len(batches.Items) != 2 || batches.Items[1].Batch != b.Batch {
		t.Fatalf("batches %+v", batches)
	}
	if got := batches.Items[1]; got.Count != 100 || got.Used != 3 || got.Unused != 97 || got.Quota != quota || got.Name != b.Name {
		t.Fatalf("batch summary %+v", got)
	}
	if got := count(t, n, &model.AuditLog{}, "action = ? AND actor_name = ?", "redemption.export", "root"); got != 2 {
		t.Fatalf("%d export audit rows, want 2", got)
	}
}

// A batch larger than one INSERT chunk (500 rows) is stored whole, every code distinct. (The full 10,000 is
// refused only above it, in the bad-input test: 10,000 rows through the pure-Go SQLite under -race take a minute.)
func TestRedemptionBatch_SeveralInsertChunksInOneBatch(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	root := n.Root(t)
	const size = 1_001
	b := newBatch(t, root, size, 1, nil)
	seen := make(map[string]bool, len(b.Codes))
	for _, c := range b.Codes {
		if len(c) != 35 || !strings.HasPrefix(c, "TG-") || seen[c] {
			t.Fatalf("code %q (seen before: %v)", c, seen[c])
		}
		seen[c] = true
	}
	var p struct{ Total int64 }
	root.Do("GET", "/api/admin/redemptions?batch="+b.Batch, nil).JSON(t, &p)
	if p.Total != size {
		t.Fatalf("stored %d codes, want %d", p.Total, size)
	}
	u := n.SignUp(t, "lastone", "Final-Passw0rd-1")
	redeemed(t, redeem(t, u, "", b.Codes[size-1]), 1)
}

package relay_test

import (
	"context"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tollgate/app/apptest"
	"tollgate/model"
	"tollgate/model/modeltest"
)

// TestLogDB_OutageUnderLoadNoRelayErrorEveryRowArrives: LOG_SQL_DSN on a second MariaDB database, reached
// through a TCP proxy the test cuts while ~200 requests/s go through the relay (LOG_DB_OUTAGE, default 4s;
// the check is 30s). No request fails; after the proxy is back the spool drains and the log database
// holds exactly one row per request, the main database none, and Σ logged cost = the user's spend. MySQL
// only (LOG_SQL_DSN is MySQL only).
func TestLogDB_OutageUnderLoadNoRelayErrorEveryRowArrives(t *testing.T) {
	base := os.Getenv(modeltest.EnvDSN)
	if base == "" {
		t.Skip("LOG_SQL_DSN is MySQL only: MariaDB pass")
	}
	outage := 4 * time.Second
	if v, err := time.ParseDuration(os.Getenv("LOG_DB_OUTAGE")); err == nil {
		outage = v
	}
	proxy := modeltest.NewProxy(t, modeltest.TargetOf(base))
	logDSN := proxy.DSN(modeltest.FreshMySQL(t, "tg_logdb"))
	s := newStandardWith(t, 1_000_000_000, []func(*apptest.Env){func(e *apptest.Env) { e.Cfg.LogSQLDSN = logDSN }})
	app := s.node.App
	ls := app.Store.LogStore()
	if !app.Store.SeparateLogs() {
		t.Fatal("LOG_SQL_DSN did not attach a log database")
	}

	var sent, failed atomic.Int64
	var mu sync.Mutex
	var firstErr string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 { // 8 clients × one call per 40 ms ≈ 200 requests/s
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(40 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				a, err := s.tryCall(context.Background(), "POST", "/v1/chat/completions", s.key.Key, chatBody("gpt-4o-mini", false))
				sent.Add(1)
				if err != nil || a.status != http.StatusOK {
					failed.Add(1)
					mu.Lock()
					if firstErr == "" {
						if err != nil {
							firstErr = err.Error()
						} else {
							firstErr = string(a.body)
						}
					}
					mu.Unlock()
				}
			}
		}()
	}
	time.Sleep(time.Second)
	proxy.Down()
	time.Sleep(outage)
	spooled := app.Logs.Spool().Len()
	proxy.Up(t)
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()
	if failed.Load() != 0 {
		t.Fatalf("%d of %d requests failed during the log database outage; first: %s", failed.Load(), sent.Load(), firstErr)
	}
	if spooled == 0 {
		t.Fatal("nothing was spooled while the log database was down")
	}
	waitUntil(t, 60*time.Second, "spool drained", func() bool {
		app.Logs.Flush()
		return app.Logs.Spool().Len() == 0
	})
	var rows, mainRows, logged int64
	ls.DB.Model(&model.UsageLog{}).Where("is_test = ?", false).Count(&rows)
	app.Store.DB.Model(&model.UsageLog{}).Count(&mainRows)
	ls.DB.Model(&model.UsageLog{}).Where("user_id = ?", s.alice.id).Select("COALESCE(SUM(cost),0)").Scan(&logged)
	if rows != sent.Load() || mainRows != 0 {
		t.Fatalf("log rows %d for %d requests (spooled %d batches); main database rows %d", rows, sent.Load(), spooled, mainRows)
	}
	// The fleet rollups live in the log database too.
	if err := app.Fleet.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	var fleetRows, mainFleet int64
	ls.DB.Model(&model.FleetBucket{}).Count(&fleetRows)
	app.Store.DB.Model(&model.FleetBucket{}).Count(&mainFleet)
	if fleetRows == 0 || mainFleet != 0 {
		t.Fatalf("fleet rows: %d in the log database, %d in the main one", fleetRows, mainFleet)
	}
	if u := s.sqlUser(s.alice.id); u.UsedQuota != logged || logged == 0 {
		t.Fatalf("used_quota %d, Σ logged cost %d", u.UsedQuota, logged)
	}
	// The user's own log page and stats read the log database.
	r := s.alice.c.Do("GET", "/api/logs?limit=5", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("logs page: %d %s", r.Status, r.Body)
	}
	var page struct{ Items []model.UsageLog }
	r.JSON(t, &page)
	if len(page.Items) != 5 {
		t.Fatalf("logs page items = %d", len(page.Items))
	}
	var st struct {
		Totals struct{ Requests int64 }
	}
	r = s.alice.c.Do("GET", "/api/logs/stats", nil)
	r.JSON(t, &st)
	if st.Totals.Requests != rows {
		t.Fatalf("stats requests %d, rows %d", st.Totals.Requests, rows)
	}
	// So do the admin's channel reports (issue 12 item 1), read from the log database.
	var rep struct {
		Items []struct{ Requests int64 }
	}
	r = s.root.Do("GET", "/api/admin/stats/channels", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("channel stats: %d %s", r.Status, r.Body)
	}
	r.JSON(t, &rep)
	var reported int64
	for _, it := range rep.Items {
		reported += it.Requests
	}
	if reported != rows {
		t.Fatalf("channel stats count %d requests, the log database %d", reported, rows)
	}
	t.Logf("%d requests at ~200/s, log database down %s, %d batches spooled, 0 relay errors, %d rows", sent.Load(), outage, spooled, rows)
}

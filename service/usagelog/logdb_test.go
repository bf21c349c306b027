package usagelog_test

import (
	"context"
	"os"
	"testing"
	"time"

	"tollgate/model"
	"tollgate/model/modeltest"
	"tollgate/service/usagelog"
)

// TestWriter_SeparateLogDatabaseDownSpoolsThenDrainsEveryRow: LOG_SQL_DSN is MySQL only, so this runs on the
// MariaDB pass. The log database sits behind a TCP proxy that the test cuts for a few seconds while entries
// keep coming: the money moves in the main database at once, the rows wait in the spool, and after the proxy
// is back every row is in the log database exactly once, the daily sums equal the rows, and the main
// database has no usage_logs row.
func TestWriter_SeparateLogDatabaseDownSpoolsThenDrainsEveryRow(t *testing.T) {
	base := os.Getenv(modeltest.EnvDSN)
	if base == "" {
		t.Skip("LOG_SQL_DSN is MySQL only: MariaDB pass")
	}
	ctx := context.Background()
	main := openStore(t)
	proxy := modeltest.NewProxy(t, modeltest.TargetOf(base))
	logDSN := modeltest.FreshMySQL(t, "tg_logdb")
	ls, err := model.OpenLogs(proxy.DSN(logDSN))
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	if err := ls.MigrateLogs(ctx); err != nil {
		t.Fatal(err)
	}
	main.AttachLogs(ls)
	for id := int64(1); id <= 3; id++ {
		if err := main.DB.Create(&model.User{ID: id, Username: "u" + string(rune('0'+id)), UsernameLower: "u" + string(rune('0'+id)), PasswordHash: "x", Quota: 1_000_000_000}).Error; err != nil {
			t.Fatal(err)
		}
	}
	sp, err := usagelog.OpenSpool(t.TempDir(), 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	w := usagelog.NewWriter(main, 4096, 100, 20*time.Millisecond, usagelog.WithSpool(sp))
	defer w.Close(ctx)

	es := entries(1500, 2, "o")
	var want int64
	for _, e := range es {
		want += e.Log.Cost
	}
	write(w, es[:500])
	proxy.Down()
	for _, e := range es[500:1000] { // trickled in while the database is away
		w.Write(e)
		time.Sleep(2 * time.Millisecond)
	}
	w.Flush()
	if sp.Len() == 0 {
		t.Fatal("nothing spooled while the log database was down")
	}
	// The money did not wait for the log database.
	var used int64
	main.DB.Model(&model.User{}).Select("COALESCE(SUM(used_quota),0)").Scan(&used)
	var sofar int64
	for _, e := range es[:1000] {
		sofar += e.Log.Cost
	}
	if used != sofar {
		t.Fatalf("used_quota %d while the log database is down, want %d", used, sofar)
	}
	time.Sleep(2 * time.Second)
	proxy.Up(t)
	write(w, es[1000:])
	deadline := time.Now().Add(30 * time.Second)
	for sp.Len() > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		w.Flush()
	}
	var rows, mainRows int64
	ls.DB.Model(&model.UsageLog{}).Count(&rows)
	main.DB.Model(&model.UsageLog{}).Count(&mainRows)
	var logged, daily int64
	ls.DB.Model(&model.UsageLog{}).Select("COALESCE(SUM(cost),0)").Scan(&logged)
	ls.DB.Model(&model.UsageDailyKey{}).Select("COALESCE(SUM(cost),0)").Scan(&daily)
	main.DB.Model(&model.User{}).Select("COALESCE(SUM(used_quota),0)").Scan(&used)
	if rows != 1500 || mainRows != 0 || sp.Len() != 0 {
		t.Fatalf("log rows %d (want 1500), main rows %d (want 0), spool %d", rows, mainRows, sp.Len())
	}
	if logged != want || daily != want || used != want {
		t.Fatalf("Σ logged cost %d, Σ daily %d, Σ used_quota %d, want %d each", logged, daily, used, want)
	}
	if w.LogFailures.Load() == 0 || w.Lost.Load() != 0 {
		t.Fatalf("log failures %d (want > 0), lost %d", w.LogFailures.Load(), w.Lost.Load())
	}
}

// Command logs fills a MariaDB log database with realistic usage log rows and measures the log pages, the
// dashboard stats and retention on it (issue 12, logs at scale). From the repository root:
//
//	go run ./bench/logs seed -n 10000000          # make seed-logs N=10000000
//	go run ./bench/logs measure                    # make measure-logs (retention deletes: seed again after)
//
// LOGS_DSN names the server and database (default root:@tcp(127.0.0.1:3306)/tollgate_logbench); seed drops
// and recreates the database. Rows: 2,000 users (a few heavy ones, Zipf), 3 keys each, 24 models (each key
// uses a few), 12 channels, statuses 93 % success / 5 % upstream error / 2 % refused, 0.5 % channel tests (the
// admin's, never revenue), upstream cost two thirds of the price, spread over the last 60 days in time order (ids grow with time, as the writer inserts them). The daily sums are filled from the same
// rows, as the writer keeps them. Measured through the code the API uses (usagelog.Reader, usagelog.Retention),
// without HTTP.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"tollgate/model"
	"tollgate/service/cache"
	"tollgate/service/usagelog"
)

const (
	users      = 2000
	keysPer    = 3
	modelCount = 24
	channels   = 12
	days       = 60
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: logs seed -n N | logs measure")
		os.Exit(2)
	}
	dsn := os.Getenv("LOGS_DSN")
	if dsn == "" {
		dsn = "root:@tcp(127.0.0.1:3306)/tollgate_logbench"
	}
	var err error
	switch os.Args[1] {
	case "seed":
		fs := flag.NewFlagSet("seed", flag.ExitOnError)
		n := fs.Int("n", 1_000_000, "rows to generate")
		workers := fs.Int("workers", 2, "parallel inserters")
		_ = fs.Parse(os.Args[2:])
		err = seed(dsn, *n, *workers)
	case "measure":
		fs := flag.NewFlagSet("measure", flag.ExitOnError)
		skipRetention := fs.Bool("no-retention", false, "skip the (destructive) retention run")
		chunk := fs.Int("chunk", 5000, "most ids per retention DELETE")
		budget := fs.Duration("budget", 100*time.Millisecond, "time one retention chunk should take (0: fixed -chunk)")
		pages := fs.Bool("pages", true, "measure log pages, stats and reports before retention (false: retention only)")
		limit := fs.Duration("retention-for", 0, "stop the retention run after this long (0: run to the end)")
		days := fs.Int("retention-days", 30, "retention setting for the run: rows older than this many days go")
		raw := fs.Bool("raw", false, "also time the admin per-model sum over raw rows (minutes at 10M rows)")
		_ = fs.Parse(os.Args[2:])
		err = measure(dsn, *pages, !*skipRetention, *chunk, *budget, *limit, *raw, *days)
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func modelName(i int) string { return fmt.Sprintf("model-%02d", i) }

// split returns the server DSN (no database) and the database name.
func split(dsn string) (string, string) {
	i := strings.LastIndex(dsn, "/")
	name := dsn[i+1:]
	if q := strings.Index(name, "?"); q >= 0 {
		name = name[:q]
	}
	return dsn[:i+1], name
}

func seed(dsn string, n, workers int) error {
	server, name := split(dsn)
	admin, err := gorm.Open(mysql.Open(server), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		return err
	}
	if err := admin.Exec("DROP DATABASE IF EXISTS " + name).Error; err != nil {
		return err
	}
	if err := admin.Exec("CREATE DATABASE " + name + " CHARACTER SET utf8mb4").Error; err != nil {
		return err
	}
	st, err := model.OpenLogs(dsn)
	if err != nil {
		return err
	}
	ctx := context.Background()
	if err := st.MigrateLogs(ctx); err != nil {
		return err
	}
	// The users the rows name (the top-users report reads their names from the users table).
	if err := st.DB.AutoMigrate(&model.User{}); err != nil {
		return err
	}
	us := make([]model.User, users)
	for i := range us {
		us[i] = model.User{ID: int64(i + 1), Username: fmt.Sprintf("user%04d", i+1), PasswordHash: "-"}
	}
	if err := st.DB.CreateInBatches(us, 500).Error; err != nil {
		return err
	}
	start := time.Now()
	end := time.Now().UTC()
	from := end.Add(-days * 24 * time.Hour)
	step := float64(end.Sub(from)) / float64(n)
	zipf := rand.NewZipf(rand.New(rand.NewPCG(1, 2)), 1.1, 8, users-1)
	// Each key uses three models of its own; most traffic goes to the first.
	keyModels := make([][3]int, users*keysPer)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range keyModels {
		keyModels[i] = [3]int{r.IntN(modelCount), r.IntN(modelCount), r.IntN(modelCount)}
	}
	type row struct {
		at                           time.Time
		user, key, ch, model         int
		prompt, completion, cost, ms int64
		upstream                     int64
		status                       string
		http                         int
		test                         bool
	}
	const perStmt = 1000
	batches := make(chan []row, workers*2)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	cols := "request_id, created_at, user_id, token_id, channel_id, model, upstream_model, endpoint, stream, prompt_tokens, completion_tokens, cost, upstream_cost, is_test, price, group_ratio, status, http_status, error_class, elapsed_ms, first_byte_ms, attempts, username, token_name, channel_name, client_protocol, upstream_protocol"
	var seq int64
	var seqMu sync.Mutex
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, _ := st.DB.DB()
			var sb strings.Builder
			args := make([]any, 0, perStmt*25)
			for b := range batches {
				seqMu.Lock()
				base := seq
				seq += int64(len(b))
				seqMu.Unlock()
				sb.Reset()
				args = args[:0]
				sb.WriteString("INSERT INTO usage_logs (" + cols + ") VALUES ")
				for i, x := range b {
					if i > 0 {
						sb.WriteString(",")
					}
					sb.WriteString("(?,?,?,?,?,?,?,'chat',?,?,?,?,?,?,'{\"input\":\"2.5\",\"output\":\"10\"}','1',?,?,?,?,?,'[]',?,?,?,'openai','openai')")
					errClass := ""
					if x.status != "success" {
						errClass = "upstream_5xx"
					}
					m := modelName(x.model)
					args = append(args, fmt.Sprintf("bench-%012d", base+int64(i)), x.at, x.user+1, x.key+1, x.ch+1, m, m,
						x.ms%3 == 0, x.prompt, x.completion, x.cost, x.upstream, x.test, x.status, x.http, errClass, x.ms, x.ms/4,
						fmt.Sprintf("user%04d", x.user+1), fmt.Sprintf("key-%d", x.key+1), fmt.Sprintf("channel-%d", x.ch+1))
				}
				if _, err := db.ExecContext(ctx, sb.String(), args...); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	type dk struct {
		day         string
		user, token int64
		model       string
	}
	type dc struct {
		day   string
		ch    int64
		model string
	}
	dkeys, dchans := map[dk]*model.DailySums{}, map[dc]*model.DailySums{}
	addSum := func(m *model.DailySums, x *row) {
		m.Add(&model.UsageLog{Cost: x.cost, UpstreamCost: x.upstream, PromptTokens: x.prompt,
			CompletionTokens: x.completion, Status: x.status, IsTest: x.test})
	}
	batch := make([]row, 0, perStmt)
	for i := 0; i < n; i++ {
		u := int(zipf.Uint64())
		k := u*keysPer + r.IntN(keysPer)
		mi := keyModels[k][0]
		if p := r.IntN(10); p >= 6 {
			mi = keyModels[k][1+p%2]
		}
		x := row{at: from.Add(time.Duration(float64(i) * step)).Truncate(time.Microsecond), user: u, key: k, ch: (mi + r.IntN(2)) % channels,
			model: mi, prompt: int64(200 + r.IntN(4000)), completion: int64(r.IntN(1500)), ms: int64(300 + r.IntN(9000)), status: "success", http: 200}
		switch p := r.IntN(100); {
		case p < 5:
			x.status, x.http, x.completion = "error", 502, 0
		case p < 7:
			x.status, x.http, x.prompt, x.completion = "refused", 429, 0, 0
		}
		x.cost = x.prompt*25/10 + x.completion*10
		x.upstream = x.cost * 2 / 3
		if r.IntN(200) == 0 { // a channel test: the admin (user 1, no key), no revenue
			x.test, x.user, x.key, x.cost = true, 0, -1, 0
		}
		day := x.at.Format(time.DateOnly)
		kk := dk{day, int64(x.user + 1), int64(x.key + 1), modelName(x.model)}
		if dkeys[kk] == nil {
			dkeys[kk] = &model.DailySums{}
		}
		addSum(dkeys[kk], &x)
		cc := dc{day, int64(x.ch + 1), modelName(x.model)}
		if dchans[cc] == nil {
			dchans[cc] = &model.DailySums{}
		}
		addSum(dchans[cc], &x)
		batch = append(batch, x)
		if len(batch) == perStmt {
			batches <- batch
			batch = make([]row, 0, perStmt)
		}
		if (i+1)%1_000_000 == 0 {
			fmt.Printf("  %d rows queued, %s\n", i+1, time.Since(start).Round(time.Second))
		}
	}
	if len(batch) > 0 {
		batches <- batch
	}
	close(batches)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	loaded := time.Since(start)
	var keyRows []model.UsageDailyKey
	for k, v := range dkeys {
		keyRows = append(keyRows, model.UsageDailyKey{Day: k.day, UserID: k.user, TokenID: k.token, Model: k.model, DailySums: *v})
	}
	var chRows []model.UsageDailyChannel
	for k, v := range dchans {
		chRows = append(chRows, model.UsageDailyChannel{Day: k.day, ChannelID: k.ch, Model: k.model, DailySums: *v})
	}
	if err := st.DB.CreateInBatches(keyRows, 2000).Error; err != nil {
		return err
	}
	if err := st.DB.CreateInBatches(chRows, 2000).Error; err != nil {
		return err
	}
	if err := st.DB.Exec("ANALYZE TABLE usage_logs, usage_daily_keys, usage_daily_channels").Error; err != nil {
		return err
	}
	fmt.Printf("seeded %d rows in %s (%.0f rows/s), %d daily key sums, %d daily channel sums, total %s\n", n,
		loaded.Round(time.Second), float64(n)/loaded.Seconds(), len(keyRows), len(chRows), time.Since(start).Round(time.Second))
	return nil
}

func p95(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)*95+99)/100-1]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func measure(dsn string, pages, retention bool, chunk int, budget, limit time.Duration, raw bool, days int) error {
	st, err := model.OpenLogs(dsn)
	if err != nil {
		return err
	}
	ctx := context.Background()
	var total int64
	if err := st.DB.Model(&model.UsageLog{}).Count(&total).Error; err != nil {
		return err
	}
	fmt.Printf("usage_logs rows: %d\n", total)
	main := &model.Store{DB: st.DB, Kind: st.Kind}
	if pages {
		if err := measurePages(ctx, st, main, raw); err != nil {
			return err
		}
	}
	if !retention {
		return nil
	}
	ret := usagelog.NewRetention(main, cache.NewMemory(), func() int { return days })
	ret.Pause, ret.Chunk, ret.Budget = 20*time.Millisecond, chunk, budget
	var took []time.Duration
	ret.OnChunk = func(d time.Duration, _ int64) { took = append(took, d) }
	rctx := ctx
	if limit > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	var old int64 // ids grow with time: the rows before the first id newer than the cutoff
	var edge struct{ ID int64 }
	st.DB.Model(&model.UsageLog{}).Select("MIN(id) AS id").Where("created_at >= ?", time.Now().UTC().AddDate(0, 0, -days)).Scan(&edge)
	st.DB.Model(&model.UsageLog{}).Where("id < ?", edge.ID).Count(&old)
	res, err := ret.Run(rctx)
	stopped := ""
	if err != nil {
		if rctx.Err() == nil {
			return err
		}
		stopped = fmt.Sprintf(" (stopped after %s by -retention-for: %.0f%% of the %d rows older than %d days)", limit,
			100*float64(res.Deleted)/float64(max(old, 1)), old, days)
	}
	fmt.Printf("retention %d days: deleted %d rows in %d chunks of %d–%d ids (budget %s), longest statement %s, total %s, %.0f rows/s%s\n",
		days, res.Deleted, res.Chunks, res.MinChunk, res.MaxChunk, budget, ms(res.MaxStatement), res.Elapsed.Round(time.Second),
		float64(res.Deleted)/res.Elapsed.Seconds(), stopped)
	slices.Sort(took)
	over := len(took) - sort.Search(len(took), func(i int) bool { return took[i] > time.Second })
	if n := len(took); n > 0 {
		fmt.Printf("  chunk statements: p50 %s, p99 %s, p99.9 %s, max %s; %d of %d over 1 s\n", ms(took[n/2]), ms(took[n*99/100]),
			ms(took[n*999/1000]), ms(took[n-1]), over, n)
	}
	return nil
}

// measurePages times the user logs pages by cursor, the 30-day dashboard stats and the admin's business reports.
func measurePages(ctx context.Context, st *model.Store, main *model.Store, raw bool) error {
	r := usagelog.NewReader(main)
	// The 20 busiest users, each with the model they use most: the deepest pages there are.
	var pairs []struct {
		UserID int64
		Model  string
	}
	if err := st.DB.Raw(`SELECT user_id, model FROM usage_daily_keys GROUP BY user_id, model ORDER BY SUM(requests) DESC LIMIT 20`).Scan(&pairs).Error; err != nil {
		return err
	}
	var first, fifty []time.Duration
	for _, p := range pairs {
		f := model.LogFilter{UserID: p.UserID, Model: p.Model}
		t0 := time.Now()
		_, next, err := r.List(ctx, f, 0, 50)
		if err != nil {
			return err
		}
		first = append(first, time.Since(t0))
		for page := 2; page <= 50 && next != nil; page++ {
			t0 = time.Now()
			_, next, err = r.List(ctx, f, *next, 50)
			if err != nil {
				return err
			}
			if page == 50 {
				fifty = append(fifty, time.Since(t0))
			}
		}
	}
	fmt.Printf("user logs page, model filter, 50 rows, %d users: first page p95 %s, page 50 (by cursor) p95 %s (%d users reach page 50)\n",
		len(first), ms(p95(first)), ms(p95(fifty)), len(fifty))
	var userStats, adminStats []time.Duration
	for i, p := range pairs {
		t0 := time.Now()
		if _, err := r.Stats(ctx, model.LogFilter{UserID: p.UserID}); err != nil {
			return err
		}
		userStats = append(userStats, time.Since(t0))
		if i < 10 {
			t0 = time.Now()
			if _, err := r.Stats(ctx, model.LogFilter{}); err != nil {
				return err
			}
			adminStats = append(adminStats, time.Since(t0))
		}
	}
	fmt.Printf("30-day dashboard stats: user p95 %s (%d users), admin (all users) p95 %s\n", ms(p95(userStats)), len(userStats), ms(p95(adminStats)))
	// The admin's business reports (GET /api/admin/stats/{channels,models,days,users}) over the last 30 days: whole
	// days from the daily sums, the partial days at both ends from raw rows.
	now := time.Now().UTC()
	for _, g := range []struct {
		name string
		by   model.StatsBy
	}{{"channels", model.StatsByChannel}, {"models", model.StatsByModel}, {"days", model.StatsByDay}, {"users", model.StatsByUser}} {
		var ts []time.Duration
		for range 5 {
			t0 := time.Now()
			if _, err := main.UsageStats(ctx, g.by, now.AddDate(0, 0, -30), now, 0); err != nil {
				return err
			}
			ts = append(ts, time.Since(t0))
		}
		fmt.Printf("30-day business report per %s: first %s, p95 of 5 %s\n", g.name, ms(ts[0]), ms(p95(ts)))
	}
	// For contrast: the same admin question over raw rows.
	t0 := time.Now()
	if !raw {
		t0 = time.Time{}
	} else if _, err := st.LogStatsByModel(ctx, model.LogFilter{From: time.Now().UTC().AddDate(0, 0, -30)}); err != nil {
		return err
	}
	if raw {
		fmt.Printf("  (the admin per-model sum over raw rows instead: %s)\n", ms(time.Since(t0)))
	}
	return nil
}

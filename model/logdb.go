package model

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// OpenLogs connects to the separate log database (LOG_SQL_DSN, MySQL only). It does not ping: a log database
// that is down at start is retried by the writer (which spools meanwhile) instead of stopping the node.
func OpenLogs(dsn string) (*Store, error) {
	cfg := &gorm.Config{TranslateError: true, Logger: logger.Discard, DisableAutomaticPing: true,
		NowFunc: func() time.Time { return time.Now().UTC() }}
	db, err := gorm.Open(mysql.Open(withMySQLDefaults(dsn)), cfg)
	if err != nil {
		return nil, fmt.Errorf("open log database: %w", err)
	}
	sqlDB, _ := db.DB()
	sqlDB.SetMaxOpenConns(32)
	sqlDB.SetMaxIdleConns(16)
	sqlDB.SetConnMaxLifetime(30 * time.Minute)
	return &Store{DB: db, Kind: "mysql", stmts: newStmtCache(db)}, nil
}

// AttachLogs makes l the home of usage logs and their daily sums: every log read and write of s goes there,
// while balances stay in s.
func (s *Store) AttachLogs(l *Store) { s.logs = l }

// LogStore is the store that holds usage logs: the attached log database, else s itself.
func (s *Store) LogStore() *Store {
	if s.logs != nil {
		return s.logs
	}
	return s
}

// SeparateLogs reports whether logs live in their own database.
func (s *Store) SeparateLogs() bool { return s.logs != nil && s.logs != s }

// logModels are the tables of a log database: usage logs, their daily sums and the fleet rollups.
func logModels() []any {
	return []any{&UsageLog{}, &UsageDailyKey{}, &UsageDailyChannel{}, &FleetBucket{}, &RoutingDecision{}}
}

// MigrateLogs creates or updates the log tables of a separate log database (a named lock makes nodes take
// turns), and fills the daily sums from the rows already there when those tables are new.
func (s *Store) MigrateLogs(ctx context.Context) error {
	return s.DB.WithContext(ctx).Connection(func(tx *gorm.DB) error {
		var got int
		if err := tx.Raw("SELECT GET_LOCK('tollgate_migrate_logs', 120)").Scan(&got).Error; err != nil {
			return fmt.Errorf("log migration lock: %w", err)
		}
		if got != 1 {
			return errors.New("log migration lock: timed out waiting for another node")
		}
		defer tx.Exec("SELECT RELEASE_LOCK('tollgate_migrate_logs')")
		return migrateLogTables(tx.Set("gorm:table_options", "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"))
	})
}

// migrateLogTables runs AutoMigrate on the log tables and backfills the daily sums of a database made before
// they existed.
func migrateLogTables(db *gorm.DB) error {
	hadDaily := db.Migrator().HasTable(&UsageDailyKey{})
	if err := db.AutoMigrate(logModels()...); err != nil {
		return err
	}
	if hadDaily {
		return nil
	}
	return backfillDaily(db)
}

// dayExpr is the SQL that turns created_at into the UTC day string of the daily sums.
func dayExpr(kind string) string {
	if kind == "sqlite" {
		return "substr(created_at, 1, 10)"
	}
	return "DATE_FORMAT(created_at, '%Y-%m-%d')"
}

func backfillDaily(db *gorm.DB) error {
	day := dayExpr(db.Dialector.Name())
	test := "CASE WHEN is_test THEN 1 ELSE 0 END"
	sums := "COUNT(*), COALESCE(SUM(cost),0), COALESCE(SUM(prompt_tokens),0), COALESCE(SUM(completion_tokens),0), " +
		"COALESCE(SUM(CASE WHEN status = 'success' AND NOT is_test THEN 1 ELSE 0 END),0), COALESCE(SUM(upstream_cost),0), " +
		"COALESCE(SUM(" + test + "),0), COALESCE(SUM(" + test + " * prompt_tokens),0), COALESCE(SUM(" + test + " * completion_tokens),0)"
	cols := strings.Join(dailyColumns, ", ")
	if err := db.Exec(`INSERT INTO usage_daily_keys (day, user_id, token_id, model, ` + cols + `)
		SELECT ` + day + `, user_id, token_id, model, ` + sums + ` FROM usage_logs GROUP BY ` + day + `, user_id, token_id, model`).Error; err != nil {
		return fmt.Errorf("backfill usage_daily_keys: %w", err)
	}
	if err := db.Exec(`INSERT INTO usage_daily_channels (day, channel_id, model, ` + cols + `)
		SELECT ` + day + `, channel_id, model, ` + sums + ` FROM usage_logs GROUP BY ` + day + `, channel_id, model`).Error; err != nil {
		return fmt.Errorf("backfill usage_daily_channels: %w", err)
	}
	return nil
}

// DailySums are the counters both daily tables keep.
type DailySums struct {
	Requests         int64 `gorm:"not null;default:0"`
	Cost             int64 `gorm:"not null;default:0"`
	PromptTokens     int64 `gorm:"not null;default:0"`
	CompletionTokens int64 `gorm:"not null;default:0"`
	// For the admin's business reports (model/stats.go), which leave channel tests out: successful relayed
	// requests, Σ upstream_cost, and the test rows' share of the counters above.
	Successes            int64 `gorm:"not null;default:0"`
	UpstreamCost         int64 `gorm:"not null;default:0"`
	TestRequests         int64 `gorm:"not null;default:0"`
	TestPromptTokens     int64 `gorm:"not null;default:0"`
	TestCompletionTokens int64 `gorm:"not null;default:0"`
}

// dailyColumns are DailySums' columns in the order dailyValues gives them.
var dailyColumns = []string{"requests", "cost", "prompt_tokens", "completion_tokens", "successes", "upstream_cost",
	"test_requests", "test_prompt_tokens", "test_completion_tokens"}

func (d *DailySums) values() []any {
	return []any{d.Requests, d.Cost, d.PromptTokens, d.CompletionTokens, d.Successes, d.UpstreamCost,
		d.TestRequests, d.TestPromptTokens, d.TestCompletionTokens}
}

// Add counts one log row (the writer, the backfill and the log seeder in bench/logs).
func (d *DailySums) Add(l *UsageLog) {
	d.Requests++
	d.Cost += l.Cost
	d.PromptTokens += l.PromptTokens
	d.CompletionTokens += l.CompletionTokens
	d.UpstreamCost += l.UpstreamCost
	switch {
	case l.IsTest:
		d.TestRequests++
		d.TestPromptTokens += l.PromptTokens
		d.TestCompletionTokens += l.CompletionTokens
	case l.Status == "success":
		d.Successes++
	}
}

// UsageDailyKey sums usage logs per UTC day, key (and so user) and model: what a user's or a key's dashboard
// reads for whole days.
type UsageDailyKey struct {
	Day     string `gorm:"type:varchar(10);primaryKey;index:idx_daily_user,priority:2;index:idx_daily_token,priority:2"`
	UserID  int64  `gorm:"primaryKey;autoIncrement:false;index:idx_daily_user,priority:1"`
	TokenID int64  `gorm:"primaryKey;autoIncrement:false;index:idx_daily_token,priority:1"`
	Model   string `gorm:"type:varchar(128);primaryKey"`
	DailySums
}

// UsageDailyChannel sums usage logs per UTC day, channel and model: what the admin dashboard reads.
type UsageDailyChannel struct {
	Day       string `gorm:"type:varchar(10);primaryKey;index:idx_daily_channel,priority:2"`
	ChannelID int64  `gorm:"primaryKey;autoIncrement:false;index:idx_daily_channel,priority:1"`
	Model     string `gorm:"type:varchar(128);primaryKey"`
	DailySums
}

// AddLogs writes rows not stored yet, with their daily sums, in one transaction on LogStore() (the separate log
// database's writer, the seeders and tests; the writer of one database moves money in the same transaction
// through WriteLogs).
func (s *Store) AddLogs(ctx context.Context, logs []UsageLog) error {
	return s.LogStore().Transact(ctx, func(tx *gorm.DB) error {
		_, err := s.WriteLogs(ctx, tx, logs)
		return err
	})
}

// WriteLogs inserts the batch's rows whose request id is not stored yet into tx, which must be a transaction
// on LogStore(), adds exactly those rows to the daily sums, and reports which of logs it wrote (written[i]), so
// a replayed batch (a spool drained twice, a commit retried after it went through) changes nothing and its
// caller moves no money twice.
//
// A batch is nearly always new: one INSERT … IGNORE per chunk of rows, whose count of inserted rows equals the
// batch, says so without reading first. When it does not, the batch is rolled back to a savepoint and written
// row by row, each row's own count saying whether it was new; a row another node inserts meanwhile waits on its
// unique key and then counts as stored (or, when the rollback to the savepoint meets it, the two transactions
// may deadlock: the whole transaction then fails and its caller runs it again).
func (s *Store) WriteLogs(ctx context.Context, tx *gorm.DB, logs []UsageLog) (written []bool, err error) {
	written = make([]bool, len(logs))
	if len(logs) == 0 {
		return written, nil
	}
	ls := s.LogStore()
	conn := tx.WithContext(ctx).Statement.ConnPool
	if _, ok := conn.(gorm.TxCommitter); !ok {
		// Outside a transaction the savepoint would open one of its own on SQLite (never ended) or land on
		// another pooled connection than the inserts on MySQL.
		return nil, errors.New("usage logs: WriteLogs needs a transaction")
	}
	if _, err := conn.ExecContext(ctx, "SAVEPOINT tollgate_logs"); err != nil {
		return nil, fmt.Errorf("usage log savepoint: %w", err)
	}
	n, err := ls.insertLogs(ctx, tx, logs)
	if err != nil {
		return nil, err
	}
	if n == int64(len(logs)) {
		for i := range written {
			written[i] = true
		}
		return written, ls.addDaily(ctx, tx, logs)
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK TO SAVEPOINT tollgate_logs"); err != nil {
		return nil, fmt.Errorf("usage log savepoint rollback: %w", err)
	}
	fresh := make([]UsageLog, 0, len(logs))
	for i := range logs {
		k, err := ls.insertLogs(ctx, tx, logs[i:i+1])
		if err != nil {
			return nil, err
		}
		if k == 1 {
			written[i] = true
			fresh = append(fresh, logs[i])
		}
	}
	return written, ls.addDaily(ctx, tx, fresh)
}

type keyDay struct {
	day             string
	user, token     int64
	model           string
	channel         int64
	channelGrouping bool
}

// addDaily adds rows to both daily tables with one upsert each, in primary-key order (so two nodes adding to
// the same sums lock them in the same order).
func (s *Store) addDaily(ctx context.Context, tx *gorm.DB, logs []UsageLog) error {
	if len(logs) == 0 {
		return nil
	}
	keys := map[keyDay]*DailySums{}
	add := func(k keyDay, l *UsageLog) {
		d := keys[k]
		if d == nil {
			d = &DailySums{}
			keys[k] = d
		}
		d.Add(l)
	}
	for i := range logs {
		l := &logs[i]
		day := l.CreatedAt.UTC().Format("2006-01-02")
		add(keyDay{day: day, user: l.UserID, token: l.TokenID, model: l.Model}, l)
		add(keyDay{day: day, channel: l.ChannelID, model: l.Model, channelGrouping: true}, l)
	}
	var byKey, byChannel []keyDay
	for k := range keys {
		if k.channelGrouping {
			byChannel = append(byChannel, k)
		} else {
			byKey = append(byKey, k)
		}
	}
	less := func(a, b keyDay) bool {
		if a.day != b.day {
			return a.day < b.day
		}
		if a.user != b.user {
			return a.user < b.user
		}
		if a.token != b.token {
			return a.token < b.token
		}
		if a.channel != b.channel {
			return a.channel < b.channel
		}
		return a.model < b.model
	}
	sort.Slice(byKey, func(i, j int) bool { return less(byKey[i], byKey[j]) })
	sort.Slice(byChannel, func(i, j int) bool { return less(byChannel[i], byChannel[j]) })
	conn := tx.WithContext(ctx).Statement.ConnPool
	upsert := func(table string, pk []string, rows []keyDay, vals func(k keyDay) []any) error {
		for start := 0; start < len(rows); {
			end := start + dailyChunk(len(rows)-start)
			cols := append(append([]string{}, pk...), dailyColumns...)
			one := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
			args := make([]any, 0, (end-start)*len(cols))
			for _, k := range rows[start:end] {
				args = append(append(args, vals(k)...), keys[k].values()...)
			}
			q := "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES " +
				strings.TrimSuffix(strings.Repeat(one+", ", end-start), ", ")
			sets := make([]string, len(dailyColumns))
			for i, c := range dailyColumns {
				if s.Kind == "sqlite" {
					sets[i] = c + " = " + c + " + excluded." + c
				} else {
					sets[i] = c + " = " + c + " + VALUES(" + c + ")"
				}
			}
			if s.Kind == "sqlite" {
				q += " ON CONFLICT(" + strings.Join(pk, ", ") + ") DO UPDATE SET " + strings.Join(sets, ", ")
			} else {
				q += " ON DUPLICATE KEY UPDATE " + strings.Join(sets, ", ")
			}
			if _, err := s.stmts.exec(ctx, conn, q, args...); err != nil {
				return fmt.Errorf("add to %s: %w", table, err)
			}
			start = end
		}
		return nil
	}
	if err := upsert("usage_daily_keys", []string{"day", "user_id", "token_id", "model"}, byKey,
		func(k keyDay) []any { return []any{k.day, k.user, k.token, k.model} }); err != nil {
		return err
	}
	return upsert("usage_daily_channels", []string{"day", "channel_id", "model"}, byChannel,
		func(k keyDay) []any { return []any{k.day, k.channel, k.model} })
}

// dailyChunk is how many of the remaining rows the next daily-sum upsert carries: 64, 8 or 1, so that only
// three statement texts per table occur and each is prepared once (stmtCache), where a text for every row
// count was parsed again for almost every batch.
func dailyChunk(remaining int) int {
	for _, n := range []int{64, 8} {
		if remaining >= n {
			return n
		}
	}
	return 1
}

// DailyServes reports whether the daily sums can answer stats under f (they keep no status, request id, or
// key × channel split).
func (f LogFilter) DailyServes() bool {
	return f.Status == "" && f.RequestID == "" && f.ClientRequestID == "" &&
		!(f.ChannelID != 0 && (f.UserID != 0 || f.TokenID != 0))
}

// DailyStats sums the daily tables over the UTC days [fromDay, toDay) (as "2006-01-02") under f (which must
// satisfy DailyServes; its From/To are ignored): one row per day (Key = the day) and one per model.
func (s *Store) DailyStats(ctx context.Context, f LogFilter, fromDay, toDay string) (days, models []LogRow, err error) {
	ls := s.LogStore()
	var q *gorm.DB
	if f.UserID != 0 || f.TokenID != 0 {
		q = ls.DB.WithContext(ctx).Model(&UsageDailyKey{})
		if f.UserID != 0 {
			q = q.Where("user_id = ?", f.UserID)
		}
		if f.TokenID != 0 {
			q = q.Where("token_id = ?", f.TokenID)
		}
	} else {
		q = ls.DB.WithContext(ctx).Model(&UsageDailyChannel{})
		if f.ChannelID != 0 {
			q = q.Where("channel_id = ?", f.ChannelID)
		}
	}
	if f.Model != "" {
		q = q.Where("model = ?", f.Model)
	}
	q = q.Where("day >= ? AND day < ?", fromDay, toDay)
	// The sums keep channel tests' requests and tokens apart (test_*; tests cost nothing), so each kind of
	// row is a difference or a column of the same rows.
	sums := "COALESCE(SUM(requests - test_requests),0) AS requests, COALESCE(SUM(cost),0) AS cost, " +
		"COALESCE(SUM(prompt_tokens - test_prompt_tokens),0) AS prompt_tokens, COALESCE(SUM(completion_tokens - test_completion_tokens),0) AS completion_tokens"
	switch f.Kind {
	case LogsTest:
		sums = "COALESCE(SUM(test_requests),0) AS requests, 0 AS cost, COALESCE(SUM(test_prompt_tokens),0) AS prompt_tokens, COALESCE(SUM(test_completion_tokens),0) AS completion_tokens"
	case LogsAll:
		sums = "COALESCE(SUM(requests),0) AS requests, COALESCE(SUM(cost),0) AS cost, COALESCE(SUM(prompt_tokens),0) AS prompt_tokens, COALESCE(SUM(completion_tokens),0) AS completion_tokens"
	}
	// One pass over the sums, grouped by (day, model); the per-day and per-model totals are added up here.
	var rows []struct {
		Day   string
		Model string
		DailySums
	}
	if err := q.Session(&gorm.Session{}).Select("day, model, " + sums).Group("day, model").Scan(&rows).Error; err != nil {
		return nil, nil, fmt.Errorf("daily stats: %w", err)
	}
	byDay, byModel := map[string]*LogRow{}, map[string]*LogRow{}
	for _, r := range rows {
		if r.Requests == 0 && r.Cost == 0 { // only rows of the other kind that day
			continue
		}
		for _, m := range []struct {
			to  map[string]*LogRow
			key string
		}{{byDay, r.Day}, {byModel, r.Model}} {
			row := m.to[m.key]
			if row == nil {
				row = &LogRow{Key: m.key}
				m.to[m.key] = row
			}
			row.Requests += r.Requests
			row.Cost += r.Cost
			row.PromptTokens += r.PromptTokens
			row.CompletionTokens += r.CompletionTokens
		}
	}
	for _, r := range byDay {
		days = append(days, *r)
	}
	for _, r := range byModel {
		models = append(models, *r)
	}
	return days, models, nil
}

// PurgeChunk deletes the logs created before cutoff among ids [fromID, fromID+size) (fromID 0: from the
// oldest row) in one short statement. next is where the following chunk starts; more says whether a row at
// or after next is older than cutoff too (ids grow with time, so the walk stops at the first newer row).
func (s *Store) PurgeChunk(ctx context.Context, cutoff time.Time, fromID int64, size int) (next, deleted int64, more bool, err error) {
	db := s.LogStore().DB.WithContext(ctx)
	if fromID == 0 {
		var first struct{ ID int64 }
		if err := db.Model(&UsageLog{}).Select("id").Order("id").Limit(1).Scan(&first).Error; err != nil {
			return 0, 0, false, fmt.Errorf("oldest log: %w", err)
		}
		if first.ID == 0 {
			return 0, 0, false, nil
		}
		fromID = first.ID
	}
	next = fromID + int64(size)
	res := db.Exec("DELETE FROM usage_logs WHERE id >= ? AND id < ? AND created_at < ?", fromID, next, cutoff.UTC())
	if res.Error != nil {
		return fromID, 0, true, fmt.Errorf("purge logs %d-%d: %w", fromID, next, res.Error)
	}
	var after struct {
		ID        int64
		CreatedAt time.Time
	}
	if err := db.Model(&UsageLog{}).Select("id, created_at").Where("id >= ?", next).Order("id").Limit(1).Scan(&after).Error; err != nil {
		return next, res.RowsAffected, true, fmt.Errorf("next log after %d: %w", next, err)
	}
	if after.ID == 0 {
		return next, res.RowsAffected, false, nil
	}
	// Jump over an id gap instead of walking it in empty chunks.
	return after.ID, res.RowsAffected, after.CreatedAt.Before(cutoff), nil
}

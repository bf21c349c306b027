package model

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"
)

// StatsBy is what UsageStats groups usage logs by.
type StatsBy int

// The groupings of the admin stats.
const (
	StatsByChannel StatsBy = iota // the channel that served (rows no channel served are left out)
	StatsByModel                  // the public model name
	StatsByDay                    // the UTC day of created_at, "2006-01-02"
	StatsByUser                   // the user
)

// StatsRow is one group of relayed requests (channel tests and probes are left out) in [from, to).
type StatsRow struct {
	Key              string // channel id, model, day or user id
	Name             string // the channel's or user's name as logged (the latest spelling is not known here)
	Requests         int64
	Successes        int64
	PromptTokens     int64
	CompletionTokens int64
	Revenue          int64 // Σ cost
	UpstreamCost     int64 // Σ upstream_cost
	// Latency percentiles (nearest rank) over successful requests, first byte over requests that got one;
	// 0 when there are none.
	P50Ms, P95Ms, FirstByteP50Ms int64
}

// statsKey is the SQL expression a grouping keys on, the name shown next to it, and its extra condition.
func (s *Store) statsKey(by StatsBy) (key, name, cond string) {
	switch by {
	case StatsByChannel:
		return "channel_id", "MAX(channel_name)", "channel_id <> 0"
	case StatsByModel:
		return "model", "''", ""
	case StatsByDay:
		// DATE() would come back from MySQL as a time (parseTime): format it (as LogStatsByDay does).
		if s.LogStore().Kind == "sqlite" {
			return "substr(created_at, 1, 10)", "''", ""
		}
		return "DATE_FORMAT(created_at, '%Y-%m-%d')", "''", ""
	default:
		return "user_id", "MAX(username)", ""
	}
}

// WholeDays is the span of whole UTC days inside [from, to) (first == last: none).
func WholeDays(from, to time.Time) (first, last time.Time) {
	first = from.UTC().Truncate(24 * time.Hour)
	if first.Before(from.UTC()) {
		first = first.Add(24 * time.Hour)
	}
	last = to.UTC().Truncate(24 * time.Hour)
	if !first.Before(last) {
		return first, first
	}
	return first, last
}

// UsageStats sums the relayed requests of [from, to) per channel, model, UTC day or user. The whole UTC days
// inside the window are read from the daily sums (usage_daily_channels, usage_daily_keys: no raw row is read
// for them, so 30 days cost as much on 10M rows as on 10k) and only the partial days at either end from the
// raw rows. Latency percentiles need raw rows: a window without whole days gets them (see rawStats); one with
// whole days leaves them 0 for the caller to take from the fleet rollups (service/stats). limit > 0 keeps the
// limit groups with the most revenue (top users); by day rows come oldest first, others by revenue.
func (s *Store) UsageStats(ctx context.Context, by StatsBy, from, to time.Time, limit int) ([]StatsRow, error) {
	first, last := WholeDays(from, to)
	if first.Equal(last) {
		return s.rawStats(ctx, by, from, to, limit, true)
	}
	rows, err := s.dailyUsageStats(ctx, by, first, last)
	if err != nil {
		return nil, err
	}
	for _, edge := range [][2]time.Time{{from, first}, {last, to}} {
		if !edge[0].Before(edge[1]) {
			continue
		}
		part, err := s.rawStats(ctx, by, edge[0], edge[1], 0, false)
		if err != nil {
			return nil, err
		}
		rows = append(rows, part...)
	}
	out := mergeStats(rows)
	sort.Slice(out, func(i, j int) bool {
		if by != StatsByDay && out[i].Revenue != out[j].Revenue {
			return out[i].Revenue > out[j].Revenue
		}
		return out[i].Key < out[j].Key
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	if by == StatsByUser {
		if err := s.nameUsers(ctx, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// dailyUsageStats sums the daily tables over the UTC days [first, last), channel tests left out.
func (s *Store) dailyUsageStats(ctx context.Context, by StatsBy, first, last time.Time) ([]StatsRow, error) {
	table, key, cond := "usage_daily_channels", "channel_id", "channel_id <> 0"
	switch by {
	case StatsByModel:
		key, cond = "model", ""
	case StatsByDay:
		key, cond = "day", ""
	case StatsByUser:
		table, key, cond = "usage_daily_keys", "user_id", ""
	}
	where := "day >= ? AND day < ?"
	if cond != "" {
		where += " AND " + cond
	}
	q := fmt.Sprintf("SELECT %[1]s AS k, COALESCE(SUM(requests - test_requests),0) AS requests, "+
		"COALESCE(SUM(successes),0) AS successes, COALESCE(SUM(prompt_tokens - test_prompt_tokens),0) AS prompt_tokens, "+
		"COALESCE(SUM(completion_tokens - test_completion_tokens),0) AS completion_tokens, "+
		"COALESCE(SUM(cost),0) AS revenue, COALESCE(SUM(upstream_cost),0) AS upstream_cost "+
		"FROM %[2]s WHERE %[3]s GROUP BY %[1]s", key, table, where)
	var sums []struct {
		K                                                                          string
		Requests, Successes, PromptTokens, CompletionTokens, Revenue, UpstreamCost int64
	}
	if err := s.LogStore().DB.WithContext(ctx).Raw(q, first.Format(time.DateOnly), last.Format(time.DateOnly)).Scan(&sums).Error; err != nil {
		return nil, fmt.Errorf("daily usage stats: %w", err)
	}
	out := make([]StatsRow, 0, len(sums))
	for _, r := range sums {
		if r.Requests == 0 && r.Revenue == 0 && r.UpstreamCost == 0 { // only channel tests that day
			continue
		}
		out = append(out, StatsRow{Key: r.K, Requests: r.Requests, Successes: r.Successes, PromptTokens: r.PromptTokens,
			CompletionTokens: r.CompletionTokens, Revenue: r.Revenue, UpstreamCost: r.UpstreamCost})
	}
	return out, nil
}

// mergeStats adds rows with the same key (the sums; a name seen wins over none).
func mergeStats(rows []StatsRow) []StatsRow {
	at := map[string]int{}
	var out []StatsRow
	for _, r := range rows {
		i, ok := at[r.Key]
		if !ok {
			at[r.Key] = len(out)
			r.P50Ms, r.P95Ms, r.FirstByteP50Ms = 0, 0, 0
			out = append(out, r)
			continue
		}
		o := &out[i]
		o.Requests += r.Requests
		o.Successes += r.Successes
		o.PromptTokens += r.PromptTokens
		o.CompletionTokens += r.CompletionTokens
		o.Revenue += r.Revenue
		o.UpstreamCost += r.UpstreamCost
		if o.Name == "" {
			o.Name = r.Name
		}
	}
	return out
}

// nameUsers fills the usernames of user rows from the users table (the daily sums keep only ids).
func (s *Store) nameUsers(ctx context.Context, rows []StatsRow) error {
	ids := make([]int64, 0, len(rows))
	for _, r := range rows {
		if id, err := strconv.ParseInt(r.Key, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	var us []struct {
		ID       int64
		Username string
	}
	if err := s.DB.WithContext(ctx).Model(&User{}).Where("id IN ?", ids).Select("id, username").Scan(&us).Error; err != nil {
		return fmt.Errorf("usage stats users: %w", err)
	}
	names := make(map[string]string, len(us))
	for _, u := range us {
		names[strconv.FormatInt(u.ID, 10)] = u.Username
	}
	for i := range rows {
		if n, ok := names[rows[i].Key]; ok {
			rows[i].Name = n
		}
	}
	return nil
}

// rawStats sums the raw rows of [from, to): counts, tokens, revenue and upstream cost in one grouped query,
// then (pct) the latency percentiles in SQL with window functions (ROW_NUMBER and COUNT over each group,
// nearest rank by integer comparison, so MariaDB ≥ 10.2 and SQLite ≥ 3.25 agree), which sort every matching
// row inside the database: for partial days only.
// rawLogsTable names usage_logs for a report over a time range of at most a day or so: read through the
// created_at index. Left to itself MariaDB picks the (channel_id, created_at) or (model, created_at) index to
// avoid sorting the groups, then walks every row of the table (measured: over 400 s at 10 M rows, against
// well under a second through created_at).
func (s *Store) rawLogsTable() string {
	if s.Kind == "mysql" {
		return "usage_logs FORCE INDEX (idx_usage_logs_created_at)"
	}
	return "usage_logs INDEXED BY idx_usage_logs_created_at"
}

func (s *Store) rawStats(ctx context.Context, by StatsBy, from, to time.Time, limit int, pct bool) ([]StatsRow, error) {
	key, name, cond := s.statsKey(by)
	where := "is_test = ? AND created_at >= ? AND created_at < ?"
	if cond != "" {
		where += " AND " + cond
	}
	order := "revenue DESC, k"
	if by == StatsByDay {
		order = "k"
	}
	logs := s.LogStore().rawLogsTable()
	q := fmt.Sprintf("SELECT %[1]s AS k, %[2]s AS name, COUNT(*) AS requests, "+
		"COALESCE(SUM(CASE WHEN status = 'success' THEN 1 ELSE 0 END),0) AS successes, "+
		"COALESCE(SUM(prompt_tokens),0) AS prompt_tokens, COALESCE(SUM(completion_tokens),0) AS completion_tokens, "+
		"COALESCE(SUM(cost),0) AS revenue, COALESCE(SUM(upstream_cost),0) AS upstream_cost "+
		"FROM %[5]s WHERE %[3]s GROUP BY %[1]s ORDER BY %[4]s", key, name, where, order, logs)
	args := []any{false, from.UTC(), to.UTC()}
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	var sums []struct {
		K, Name                                                                    string
		Requests, Successes, PromptTokens, CompletionTokens, Revenue, UpstreamCost int64
	}
	if err := s.LogStore().DB.WithContext(ctx).Raw(q, args...).Scan(&sums).Error; err != nil {
		return nil, fmt.Errorf("usage stats: %w", err)
	}
	out := make([]StatsRow, len(sums))
	at := make(map[string]int, len(sums))
	for i, r := range sums {
		out[i] = StatsRow{Key: r.K, Name: r.Name, Requests: r.Requests, Successes: r.Successes, PromptTokens: r.PromptTokens,
			CompletionTokens: r.CompletionTokens, Revenue: r.Revenue, UpstreamCost: r.UpstreamCost}
		at[r.K] = i
	}
	if len(out) == 0 || !pct {
		return out, nil
	}
	// With a limit, percentiles are only needed for the groups kept: the key set goes in as a condition.
	pctWhere, pctArgs := where, args
	if limit > 0 {
		keys := make([]any, len(out))
		for i := range out {
			keys[i] = out[i].Key
			if by == StatsByUser || by == StatsByChannel { // compare ids as numbers on both databases
				id, err := strconv.ParseInt(out[i].Key, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("usage stats: key %q: %w", out[i].Key, err)
				}
				keys[i] = id
			}
		}
		pctWhere += " AND " + key + " IN (?" + repeatComma(len(keys)-1) + ")"
		pctArgs = append(append([]any{}, args...), keys...)
	}
	for _, m := range []struct {
		value, cond string
		set         func(r *StatsRow, p50, p95 int64)
	}{
		{"elapsed_ms", "status = 'success'", func(r *StatsRow, p50, p95 int64) { r.P50Ms, r.P95Ms = p50, p95 }},
		{"first_byte_ms", "first_byte_ms > 0", func(r *StatsRow, p50, _ int64) { r.FirstByteP50Ms = p50 }},
	} {
		pq := fmt.Sprintf("SELECT k, "+
			"COALESCE(MAX(CASE WHEN rn*100 >= n*50 AND (rn-1)*100 < n*50 THEN v END),0) AS p50, "+
			"COALESCE(MAX(CASE WHEN rn*100 >= n*95 AND (rn-1)*100 < n*95 THEN v END),0) AS p95 "+
			"FROM (SELECT %[1]s AS k, %[2]s AS v, ROW_NUMBER() OVER (PARTITION BY %[1]s ORDER BY %[2]s) AS rn, "+
			"COUNT(*) OVER (PARTITION BY %[1]s) AS n FROM %[5]s WHERE %[3]s AND %[4]s) ranked GROUP BY k",
			key, m.value, pctWhere, m.cond, logs)
		var ps []struct {
			K        string
			P50, P95 int64
		}
		if err := s.LogStore().DB.WithContext(ctx).Raw(pq, pctArgs...).Scan(&ps).Error; err != nil {
			return nil, fmt.Errorf("usage stats percentiles: %w", err)
		}
		for _, p := range ps {
			if i, ok := at[p.K]; ok {
				m.set(&out[i], p.P50, p.P95)
			}
		}
	}
	return out, nil
}

func repeatComma(n int) string {
	b := make([]byte, 0, 3*n)
	for range n {
		b = append(b, ", ?"...)
	}
	return string(b)
}

package model

import (
	"context"
	"fmt"
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

// UsageStats sums the relayed requests of [from, to) per channel, model, UTC day or user: counts, tokens,
// revenue and upstream cost in one grouped query, then the latency percentiles in SQL with window functions
// (ROW_NUMBER and COUNT over each group, nearest rank by integer comparison, so MariaDB ≥ 10.2 and SQLite ≥
// 3.25 agree). Percentiles sort every matching row of the window inside the database. limit > 0 keeps the
// limit groups with the most revenue (top users); by day rows come oldest first, others by revenue.
func (s *Store) UsageStats(ctx context.Context, by StatsBy, from, to time.Time, limit int) ([]StatsRow, error) {
	key, name, cond := s.statsKey(by)
	where := "is_test = ? AND created_at >= ? AND created_at < ?"
	if cond != "" {
		where += " AND " + cond
	}
	order := "revenue DESC, k"
	if by == StatsByDay {
		order = "k"
	}
	q := fmt.Sprintf("SELECT %[1]s AS k, %[2]s AS name, COUNT(*) AS requests, "+
		"COALESCE(SUM(CASE WHEN status = 'success' THEN 1 ELSE 0 END),0) AS successes, "+
		"COALESCE(SUM(prompt_tokens),0) AS prompt_tokens, COALESCE(SUM(completion_tokens),0) AS completion_tokens, "+
		"COALESCE(SUM(cost),0) AS revenue, COALESCE(SUM(upstream_cost),0) AS upstream_cost "+
		"FROM usage_logs WHERE %[3]s GROUP BY %[1]s ORDER BY %[4]s", key, name, where, order)
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
	if len(out) == 0 {
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
			"COUNT(*) OVER (PARTITION BY %[1]s) AS n FROM usage_logs WHERE %[3]s AND %[4]s) ranked GROUP BY k",
			key, m.value, pctWhere, m.cond)
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

package usagelog

import (
	"context"
	"sort"
	"time"

	"tollgate/model"
)

// Reader serves logs and sums to the console.
type Reader struct{ store *model.Store }

// NewReader builds a reader.
func NewReader(store *model.Store) *Reader { return &Reader{store: store} }

// List returns up to limit logs older than cursor (0 = newest) and the cursor of the next page: nil on the
// last page, so a client paging to the end stops (a 0 would read as "from the newest" and loop).
func (r *Reader) List(ctx context.Context, f model.LogFilter, cursor int64, limit int) ([]model.UsageLog, *int64, error) {
	logs, err := r.store.ListLogs(ctx, f, cursor, limit+1)
	if err != nil {
		return nil, nil, err
	}
	var next *int64
	if len(logs) > limit {
		logs = logs[:limit]
		id := logs[len(logs)-1].ID
		next = &id
	}
	if logs == nil {
		logs = []model.UsageLog{}
	}
	return logs, next, nil
}

// Stats are the sums the dashboard charts.
type Stats struct {
	Totals model.LogRow `json:"totals"`
	Days   []DayRow     `json:"days"`
	Models []ModelRow   `json:"models"`
}

// DayRow is one UTC day.
type DayRow struct {
	Date string `json:"date"`
	model.LogRow
}

// ModelRow is one model.
type ModelRow struct {
	Model string `json:"model"`
	model.LogRow
}

// Stats sums logs per day and per model over [from, to) (from defaults to the UTC midnight 29 days before
// today: 30 whole days). Whole UTC days are read from the daily sums (model.UsageDailyKey / UsageDailyChannel),
// never from raw rows; only the partial days at either end of a range (a from or to inside a day) and filters
// the sums do not keep (status, request id, key × channel) read usage_logs. A range open at the end (to
// empty or not before now) counts today as a whole day: no row is newer than now.
func (r *Reader) Stats(ctx context.Context, f model.LogFilter) (*Stats, error) {
	now := time.Now().UTC()
	today := now.Truncate(24 * time.Hour)
	if f.From.IsZero() {
		f.From = today.AddDate(0, 0, -29)
	}
	var days, models []model.LogRow
	add := func(d, m []model.LogRow) {
		days, models = append(days, d...), append(models, m...)
	}
	firstDay := f.From.UTC().Truncate(24 * time.Hour)
	if firstDay.Before(f.From) {
		firstDay = firstDay.AddDate(0, 0, 1)
	}
	open := f.To.IsZero() || !f.To.Before(now)
	endDay := today.AddDate(0, 0, 1)
	if !open {
		endDay = f.To.UTC().Truncate(24 * time.Hour)
	}
	if !f.DailyServes() || !firstDay.Before(endDay) {
		d, m, err := r.raw(ctx, f)
		if err != nil {
			return nil, err
		}
		add(d, m)
	} else {
		if f.From.Before(firstDay) {
			edge := f
			edge.To = firstDay
			d, m, err := r.raw(ctx, edge)
			if err != nil {
				return nil, err
			}
			add(d, m)
		}
		d, m, err := r.store.DailyStats(ctx, f, firstDay.Format(time.DateOnly), endDay.Format(time.DateOnly))
		if err != nil {
			return nil, err
		}
		add(d, m)
		if !open && endDay.Before(f.To) {
			edge := f
			edge.From = endDay
			d, m, err := r.raw(ctx, edge)
			if err != nil {
				return nil, err
			}
			add(d, m)
		}
	}
	days, models = merge(days), merge(models)
	sort.Slice(days, func(i, j int) bool { return days[i].Key < days[j].Key })
	sort.Slice(models, func(i, j int) bool {
		if models[i].Cost != models[j].Cost {
			return models[i].Cost > models[j].Cost
		}
		return models[i].Key < models[j].Key
	})
	out := &Stats{Days: make([]DayRow, 0, len(days)), Models: make([]ModelRow, 0, len(models))}
	for _, d := range days {
		out.Days = append(out.Days, DayRow{Date: d.Key, LogRow: d})
	}
	for _, m := range models {
		out.Models = append(out.Models, ModelRow{Model: m.Key, LogRow: m})
		out.Totals.Requests += m.Requests
		out.Totals.Cost += m.Cost
		out.Totals.PromptTokens += m.PromptTokens
		out.Totals.CompletionTokens += m.CompletionTokens
	}
	return out, nil
}

// raw sums usage_logs rows under f per day and per model.
func (r *Reader) raw(ctx context.Context, f model.LogFilter) (days, models []model.LogRow, err error) {
	if days, err = r.store.LogStatsByDay(ctx, f); err != nil {
		return nil, nil, err
	}
	if models, err = r.store.LogStatsByModel(ctx, f); err != nil {
		return nil, nil, err
	}
	return days, models, nil
}

// merge adds up rows with the same key.
func merge(rows []model.LogRow) []model.LogRow {
	at := make(map[string]int, len(rows))
	out := rows[:0:0]
	for _, r := range rows {
		i, ok := at[r.Key]
		if !ok {
			at[r.Key] = len(out)
			out = append(out, r)
			continue
		}
		out[i].Requests += r.Requests
		out[i].Cost += r.Cost
		out[i].PromptTokens += r.PromptTokens
		out[i].CompletionTokens += r.CompletionTokens
	}
	return out
}

// Each hands fn the logs under f newest first, page rows at a time, read by the same keyset as List: an export
// of any size holds one page in memory. It stops at the first error of fn or of the store (a client that went
// away cancels ctx).
func (r *Reader) Each(ctx context.Context, f model.LogFilter, page int, fn func([]model.UsageLog) error) error {
	var cursor int64
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		logs, err := r.store.ListLogs(ctx, f, cursor, page)
		if err != nil {
			return err
		}
		if len(logs) == 0 {
			return nil
		}
		if err := fn(logs); err != nil {
			return err
		}
		if len(logs) < page {
			return nil
		}
		cursor = logs[len(logs)-1].ID
	}
}

// Totals sums the logs under f (count, tokens, cost): what a logs page shows above its rows. Unlike Stats, a
// filter without a start counts from the first row, like the list it sits over.
func (r *Reader) Totals(ctx context.Context, f model.LogFilter) (model.LogRow, error) {
	if f.From.IsZero() {
		f.From = time.Unix(0, 0).UTC()
	}
	s, err := r.Stats(ctx, f)
	if err != nil {
		return model.LogRow{}, err
	}
	t := s.Totals
	t.Key = ""
	return t, nil
}

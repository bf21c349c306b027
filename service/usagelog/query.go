package usagelog

import (
	"context"
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

// Stats sums logs per day and per model over [from, to).
func (r *Reader) Stats(ctx context.Context, f model.LogFilter) (*Stats, error) {
	if f.From.IsZero() {
		f.From = time.Now().UTC().AddDate(0, 0, -30)
	}
	days, err := r.store.LogStatsByDay(ctx, f)
	if err != nil {
		return nil, err
	}
	models, err := r.store.LogStatsByModel(ctx, f)
	if err != nil {
		return nil, err
	}
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

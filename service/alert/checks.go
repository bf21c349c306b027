package alert

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"tollgate/model"
	"tollgate/service/setting"
)

// nBuckets divides an error-rate window into this many buckets.
const nBuckets = 30

type rateBucket struct {
	period       int64
	total, fails int64
}

// modelRate counts one model's requests on this node over the configured window.
type modelRate struct {
	mu      sync.Mutex
	width   int64 // bucket width in ns
	buckets [nBuckets]rateBucket
}

// errorRates counts requests and failures per model on this node (each node judges its own traffic; the
// cooldown key in the shared cache makes the alert one per cooldown for the fleet).
type errorRates struct{ m sync.Map } // model → *modelRate

func bucketWidth(windowS int) int64 {
	if windowS <= 0 {
		windowS = 300
	}
	return int64(time.Duration(windowS)*time.Second) / nBuckets
}

func (e *errorRates) add(now time.Time, name string, failed bool, windowS int) {
	v, ok := e.m.Load(name)
	if !ok {
		v, _ = e.m.LoadOrStore(name, &modelRate{})
	}
	r := v.(*modelRate)
	w := bucketWidth(windowS)
	r.mu.Lock()
	if r.width != w { // the window setting changed: start counting afresh
		r.width, r.buckets = w, [nBuckets]rateBucket{}
	}
	p := now.UnixNano() / w
	b := &r.buckets[p%nBuckets]
	if b.period != p {
		*b = rateBucket{period: p}
	}
	b.total++
	if failed {
		b.fails++
	}
	r.mu.Unlock()
}

func (e *errorRates) sums(now time.Time, windowS int) map[string][2]int64 {
	out := map[string][2]int64{}
	w := bucketWidth(windowS)
	e.m.Range(func(k, v any) bool {
		r := v.(*modelRate)
		r.mu.Lock()
		if r.width == w {
			p := now.UnixNano() / w
			var t, f int64
			for _, b := range r.buckets {
				if b.period > p-nBuckets && b.period <= p {
					t, f = t+b.total, f+b.fails
				}
			}
			out[k.(string)] = [2]int64{t, f}
		}
		r.mu.Unlock()
		return true
	})
	return out
}

func (s *Service) ticker() {
	defer s.wg.Done()
	t := time.NewTicker(s.opt.CheckEvery)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
			s.CheckErrorRates()
			s.CheckDailySummary(s.ctx)
		}
	}
}

// CheckErrorRates raises model.error_rate for every model above the threshold (the ticker calls it).
func (s *Service) CheckErrorRates() {
	er := s.d.Settings.Get().Alerts.ErrorRate
	if er.Threshold <= 0 {
		return
	}
	for name, c := range s.rates.sums(s.d.Now(), er.WindowS) {
		total, fails := c[0], c[1]
		if total < int64(er.MinRequests) || float64(fails) <= er.Threshold*float64(total) {
			continue
		}
		s.Emit(Event{Name: setting.EventModelErrorRate, Key: "model:" + name, Data: map[string]any{"model": name,
			"requests": total, "errors": fails, "error_rate": fmt.Sprintf("%.3f", float64(fails)/float64(total)),
			"threshold": er.Threshold, "window_s": er.WindowS}})
	}
}

// CheckDailySummary sends yesterday's summary once the configured UTC hour has come (once per day for the
// fleet: a SetNX on the day).
func (s *Service) CheckDailySummary(ctx context.Context) {
	st := s.d.Settings.Get().Alerts
	now := s.d.Now().UTC()
	if st.DailySummaryHourUTC < 0 || now.Hour() < st.DailySummaryHourUTC {
		return
	}
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	day := today.AddDate(0, 0, -1)
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	first, err := s.d.Cache.SetNX(cctx, "alert:daily:"+day.Format(time.DateOnly), []byte("1"), 48*time.Hour)
	if err != nil || !first {
		return
	}
	sum, err := s.d.Store.SummarizeLogs(cctx, day, today)
	if err != nil {
		slog.Error("alert: daily summary", "err", err)
		return
	}
	s.Emit(Event{Name: setting.EventDailySummary, Key: "day:" + day.Format(time.DateOnly), Data: map[string]any{
		"day": day.Format(time.DateOnly), "requests": sum.Requests, "errors": sum.Errors, "revenue": sum.Revenue, "users": sum.Users}})
}

// ListLogs returns up to limit alert_logs rows older than cursor (0 = newest) and the next cursor (nil at the end).
func (s *Service) ListLogs(ctx context.Context, f model.AlertFilter, cursor int64, limit int) ([]model.AlertLog, *int64, error) {
	rows, err := s.d.Store.ListAlertLogs(ctx, f, cursor, limit+1)
	if err != nil {
		return nil, nil, fmt.Errorf("list alert logs: %w", err)
	}
	var next *int64
	if len(rows) > limit {
		rows = rows[:limit]
		id := rows[len(rows)-1].ID
		next = &id
	}
	return rows, next, nil
}

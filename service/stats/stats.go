// Package stats is the admin's business report over the usage logs: per channel, model, UTC day and user,
// requests, success rate, latency percentiles, tokens, revenue (what users were charged), upstream cost (what
// the serving channels' upstreams charged for the same usage) and profit, over a window of at most 366 days.
package stats

import (
	"context"
	"strconv"
	"time"

	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/channel"
	"tollgate/service/fleet"
)

// MaxSpan is the longest window a report covers.
const MaxSpan = 366 * 24 * time.Hour

// DefaultSpan is the window ending at to when from is not given.
const DefaultSpan = 30 * 24 * time.Hour

// MaxUsers is the most users the top-users report lists.
const MaxUsers = 100

// Figures are one group's numbers. Money is in quota units; Profit = Revenue − UpstreamCost (negative when
// the upstream cost more than the users paid). SuccessRate is successes / requests (0 … 1, 4 decimals).
type Figures struct {
	Requests         int64   `json:"requests"`
	Successes        int64   `json:"successes"`
	SuccessRate      float64 `json:"success_rate"`
	P50Ms            int64   `json:"p50_ms"`
	P95Ms            int64   `json:"p95_ms"`
	FirstByteP50Ms   int64   `json:"first_byte_p50_ms"`
	PromptTokens     int64   `json:"prompt_tokens"`
	CompletionTokens int64   `json:"completion_tokens"`
	Revenue          int64   `json:"revenue"`
	UpstreamCost     int64   `json:"upstream_cost"`
	Profit           int64   `json:"profit"`
}

// ChannelItem is one channel's figures.
type ChannelItem struct {
	ChannelID int64  `json:"channel_id"`
	Name      string `json:"name"`
	Figures
}

// ModelItem is one public model's figures.
type ModelItem struct {
	Model string `json:"model"`
	Figures
}

// DayItem is one UTC day's figures (every day of the window, zeros included).
type DayItem struct {
	Date string `json:"date"`
	Figures
}

// UserItem is one user's figures.
type UserItem struct {
	UserID   int64  `json:"user_id"`
	Username string `json:"username"`
	Figures
}

// Report is a list of items over the window [From, To).
type Report[T any] struct {
	From  time.Time `json:"from"`
	To    time.Time `json:"to"`
	Items []T       `json:"items"`
}

// Service builds the reports.
type Service struct {
	store    *model.Store
	channels *channel.Service
	now      func() time.Time
	// Fleet gives the latency percentiles of windows with whole days, whose sums come from the daily tables
	// (no raw rows): the fleet rollups' histograms (attempt latency, all classes). nil: left 0.
	Fleet Percentiles
}

// Percentiles reads merged fleet histograms over a fixed window (implemented by service/fleet).
type Percentiles interface {
	Range(ctx context.Context, from, to time.Time) ([]fleet.Stats, error)
	RangeByDay(ctx context.Context, from, to time.Time) (map[string]fleet.Stats, error)
}

// New builds the service; channels names the channels that still exist by their current name.
func New(store *model.Store, channels *channel.Service, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{store: store, channels: channels, now: now}
}

// percentiles fills the rows' latency percentiles from the fleet rollups when the window has whole days (the
// store left them 0: it read no raw rows for those days). Users have no fleet dimension: theirs stay 0.
func (s *Service) percentiles(ctx context.Context, by model.StatsBy, from, to time.Time, rows []model.StatsRow) error {
	if first, last := model.WholeDays(from, to); first.Equal(last) || s.Fleet == nil || by == model.StatsByUser {
		return nil
	}
	set := func(r *model.StatsRow, f fleet.Stats) {
		r.P50Ms, r.P95Ms, r.FirstByteP50Ms = int64(f.LatencyP50Ms+0.5), int64(f.LatencyP95Ms+0.5), int64(f.FirstByteP50Ms+0.5)
	}
	if by == model.StatsByDay {
		days, err := s.Fleet.RangeByDay(ctx, from, to)
		if err != nil {
			return err
		}
		for i := range rows {
			set(&rows[i], days[rows[i].Key])
		}
		return nil
	}
	ss, err := s.Fleet.Range(ctx, from, to)
	if err != nil {
		return err
	}
	byChannel, byModel := fleet.ByChannel(ss), fleet.ByModel(ss)
	for i := range rows {
		if by == model.StatsByModel {
			set(&rows[i], byModel[rows[i].Key])
		} else if id, err := strconv.ParseInt(rows[i].Key, 10, 64); err == nil {
			set(&rows[i], byChannel[id])
		}
	}
	return nil
}

// Window checks a report's window: to defaults to now, from to DefaultSpan before to; to must be after from
// and at most MaxSpan later (400 naming the field otherwise).
func (s *Service) Window(from, to time.Time) (time.Time, time.Time, error) {
	if to.IsZero() {
		to = s.now()
	}
	if from.IsZero() {
		from = to.Add(-DefaultSpan)
	}
	from, to = from.UTC(), to.UTC()
	if !to.After(from) {
		return from, to, apperr.Field("to", "a time after from")
	}
	if to.Sub(from) > MaxSpan {
		return from, to, apperr.Field("from", "at most 366 days before to")
	}
	return from, to, nil
}

func figures(r model.StatsRow) Figures {
	f := Figures{Requests: r.Requests, Successes: r.Successes, P50Ms: r.P50Ms, P95Ms: r.P95Ms, FirstByteP50Ms: r.FirstByteP50Ms,
		PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens, Revenue: r.Revenue,
		UpstreamCost: r.UpstreamCost, Profit: r.Revenue - r.UpstreamCost}
	if r.Requests > 0 {
		// Rounded to 4 decimals in integers, so 2/3 reads 0.6667 and 1/1 exactly 1.
		f.SuccessRate = float64((r.Successes*20000+r.Requests)/(2*r.Requests)) / 10000
	}
	return f
}

func (s *Service) rows(ctx context.Context, by model.StatsBy, from, to time.Time, limit int) ([]model.StatsRow, time.Time, time.Time, error) {
	from, to, err := s.Window(from, to)
	if err != nil {
		return nil, from, to, err
	}
	rows, err := s.store.UsageStats(ctx, by, from, to, limit)
	if err == nil {
		err = s.percentiles(ctx, by, from, to, rows)
	}
	return rows, from, to, err
}

// Channels is the report per serving channel, most revenue first.
func (s *Service) Channels(ctx context.Context, from, to time.Time) (*Report[ChannelItem], error) {
	rows, from, to, err := s.rows(ctx, model.StatsByChannel, from, to, 0)
	if err != nil {
		return nil, err
	}
	snap := s.channels.Snapshot()
	out := &Report[ChannelItem]{From: from, To: to, Items: make([]ChannelItem, 0, len(rows))}
	for _, r := range rows {
		id, _ := strconv.ParseInt(r.Key, 10, 64)
		it := ChannelItem{ChannelID: id, Name: r.Name, Figures: figures(r)}
		if c, ok := snap.ByID[id]; ok {
			it.Name = c.Name // renamed since: the current name; deleted: the last logged one
		}
		out.Items = append(out.Items, it)
	}
	return out, nil
}

// Models is the report per public model, most revenue first.
func (s *Service) Models(ctx context.Context, from, to time.Time) (*Report[ModelItem], error) {
	rows, from, to, err := s.rows(ctx, model.StatsByModel, from, to, 0)
	if err != nil {
		return nil, err
	}
	out := &Report[ModelItem]{From: from, To: to, Items: make([]ModelItem, 0, len(rows))}
	for _, r := range rows {
		out.Items = append(out.Items, ModelItem{Model: r.Key, Figures: figures(r)})
	}
	return out, nil
}

// Days is the report per UTC day, oldest first, with every day the window touches (zeros where nothing ran).
func (s *Service) Days(ctx context.Context, from, to time.Time) (*Report[DayItem], error) {
	rows, from, to, err := s.rows(ctx, model.StatsByDay, from, to, 0)
	if err != nil {
		return nil, err
	}
	byDay := make(map[string]model.StatsRow, len(rows))
	for _, r := range rows {
		byDay[r.Key] = r
	}
	out := &Report[DayItem]{From: from, To: to}
	last := to.Add(-time.Nanosecond)
	for d := time.Date(from.Year(), from.Month(), from.Day(), 0, 0, 0, 0, time.UTC); !d.After(last); d = d.AddDate(0, 0, 1) {
		key := d.Format(time.DateOnly)
		out.Items = append(out.Items, DayItem{Date: key, Figures: figures(byDay[key])})
	}
	return out, nil
}

// Users is the report of the limit users (1 … MaxUsers) with the most revenue.
func (s *Service) Users(ctx context.Context, from, to time.Time, limit int) (*Report[UserItem], error) {
	if limit < 1 || limit > MaxUsers {
		return nil, apperr.Field("limit", "between 1 and 100")
	}
	rows, from, to, err := s.rows(ctx, model.StatsByUser, from, to, limit)
	if err != nil {
		return nil, err
	}
	out := &Report[UserItem]{From: from, To: to, Items: make([]UserItem, 0, len(rows))}
	for _, r := range rows {
		id, _ := strconv.ParseInt(r.Key, 10, 64)
		out.Items = append(out.Items, UserItem{UserID: id, Username: r.Name, Figures: figures(r)})
	}
	return out, nil
}

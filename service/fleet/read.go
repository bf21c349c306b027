package fleet

import (
	"context"
	"sort"
	"time"

	"tollgate/model"
)

// Stats are the fleet's numbers for one channel (and model, when Model is set) over a window.
type Stats struct {
	ChannelID      int64            `json:"channel_id"`
	Model          string           `json:"model,omitempty"`
	Requests       int64            `json:"requests"`
	Attempts       int64            `json:"attempts"`
	Successes      int64            `json:"successes"`
	SuccessRate    float64          `json:"success_rate"` // successes / attempts; 0 with no traffic (see Attempts)
	Classes        map[string]int64 `json:"classes"`
	LatencyAvgMs   float64          `json:"latency_avg_ms"`
	LatencyP50Ms   float64          `json:"latency_p50_ms"`
	LatencyP95Ms   float64          `json:"latency_p95_ms"`
	FirstByteP50Ms float64          `json:"first_byte_p50_ms"`
	FirstByteP95Ms float64          `json:"first_byte_p95_ms"`
	PromptTokens   int64            `json:"prompt_tokens"`
	OutputTokens   int64            `json:"completion_tokens"`

	latency, firstByte []int64
	latencySum         int64
}

// readCache is how long a window's answer is reused (the console polls; SQL is read at most this often).
const readCache = 5 * time.Second

// Window returns the fleet's numbers per channel and model for the last d (minute rows, and hour rows for
// what has rolled up already), every node merged. Answers are reused for a few seconds.
func (r *Recorder) Window(ctx context.Context, d time.Duration) ([]Stats, error) {
	now := r.now()
	r.readMu.Lock()
	if c, ok := r.reads[d]; ok && now.Sub(c.at) < readCache {
		r.readMu.Unlock()
		return c.rows, nil
	}
	r.readMu.Unlock()
	from := now.Add(-d).UTC()
	var rows []model.FleetBucket
	for _, res := range []string{model.ResMinute, model.ResHour, model.ResDay} {
		if res == model.ResHour && d <= time.Hour || res == model.ResDay && d <= 24*time.Hour {
			continue
		}
		got, err := r.store.FleetSince(ctx, res, from.Truncate(resStep(res)), time.Time{})
		if err != nil {
			return nil, err
		}
		rows = append(rows, got...)
	}
	if d <= time.Hour { // minute rows only: cut to the window exactly
		rows = trim(rows, from.Truncate(time.Minute))
	}
	out := merge(rows, true)
	r.readMu.Lock()
	r.reads[d] = cached{at: now, rows: out}
	r.readMu.Unlock()
	return out, nil
}

func trim(rows []model.FleetBucket, from time.Time) []model.FleetBucket {
	out := rows[:0]
	for _, b := range rows {
		if !b.At.Before(from) {
			out = append(out, b)
		}
	}
	return out
}

func resStep(res string) time.Duration {
	switch res {
	case model.ResHour:
		return time.Hour
	case model.ResDay:
		return 24 * time.Hour
	}
	return time.Minute
}

// ByChannel sums per-model stats into one per channel.
func ByChannel(ss []Stats) map[int64]Stats {
	return sumBy(ss, func(s Stats) int64 { return s.ChannelID }, func(t *Stats, s Stats) { t.ChannelID = s.ChannelID })
}

// ByModel sums per-channel stats into one per model.
func ByModel(ss []Stats) map[string]Stats {
	return sumBy(ss, func(s Stats) string { return s.Model }, func(t *Stats, s Stats) { t.Model = s.Model })
}

// sumBy adds stats up per key (label copies the key's field onto the sum) and finishes the derived figures.
func sumBy[K comparable](ss []Stats, key func(Stats) K, label func(*Stats, Stats)) map[K]Stats {
	out := map[K]Stats{}
	for _, s := range ss {
		k := key(s)
		t := out[k]
		label(&t, s)
		add(&t, s)
		out[k] = t
	}
	for k, t := range out {
		finish(&t)
		out[k] = t
	}
	return out
}

func add(t *Stats, s Stats) {
	t.Requests += s.Requests
	t.Attempts += s.Attempts
	t.Successes += s.Successes
	t.PromptTokens += s.PromptTokens
	t.OutputTokens += s.OutputTokens
	t.latencySum += s.latencySum
	if t.Classes == nil {
		t.Classes = map[string]int64{}
	}
	for k, v := range s.Classes {
		t.Classes[k] += v
	}
	addHist(&t.latency, s.latency)
	addHist(&t.firstByte, s.firstByte)
}

func finish(t *Stats) {
	if t.Attempts > 0 {
		t.SuccessRate = float64(t.Successes) / float64(t.Attempts)
		t.LatencyAvgMs = float64(t.latencySum) / float64(t.Attempts)
	}
	t.LatencyP50Ms, t.LatencyP95Ms = quantile(t.latency, 0.5), quantile(t.latency, 0.95)
	t.FirstByteP50Ms, t.FirstByteP95Ms = quantile(t.firstByte, 0.5), quantile(t.firstByte, 0.95)
}

// merge adds bucket rows into Stats per channel × model (sorted), finishing the derived figures when asked.
func merge(rows []model.FleetBucket, done bool) []Stats {
	type k struct {
		ch    int64
		model string
	}
	m := map[k]*Stats{}
	for _, b := range rows {
		s := m[k{b.ChannelID, b.Model}]
		if s == nil {
			s = &Stats{ChannelID: b.ChannelID, Model: b.Model, Classes: map[string]int64{}}
			m[k{b.ChannelID, b.Model}] = s
		}
		add(s, statsOf(b))
	}
	out := make([]Stats, 0, len(m))
	for _, s := range m {
		if done {
			finish(s)
		}
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].ChannelID != out[j].ChannelID {
			return out[i].ChannelID < out[j].ChannelID
		}
		return out[i].Model < out[j].Model
	})
	return out
}

func statsOf(b model.FleetBucket) Stats {
	var attempts int64
	for _, v := range b.Classes.V {
		attempts += v
	}
	return Stats{Requests: b.Requests, Attempts: attempts, Successes: b.Successes, Classes: b.Classes.V,
		PromptTokens: b.PromptTokens, OutputTokens: b.OutputTokens, latencySum: b.LatencySumMs,
		latency: b.LatencyHist.V, firstByte: b.FirstByteHist.V}
}

// Range is every node's traffic with bucket times in [from, to), whatever resolution the buckets have rolled
// up to (minutes for the last hours, then hours, then days), merged per channel × model. Unlike Window it is
// not cached: for reports over fixed past windows.
func (r *Recorder) Range(ctx context.Context, from, to time.Time) ([]Stats, error) {
	rows, err := r.rangeRows(ctx, from, to)
	if err != nil {
		return nil, err
	}
	return merge(rows, true), nil
}

// RangeByDay is Range merged per UTC day ("2006-01-02") over every channel and model.
func (r *Recorder) RangeByDay(ctx context.Context, from, to time.Time) (map[string]Stats, error) {
	rows, err := r.rangeRows(ctx, from, to)
	if err != nil {
		return nil, err
	}
	byDay := map[string][]model.FleetBucket{}
	for _, b := range rows {
		d := b.At.UTC().Format(time.DateOnly)
		byDay[d] = append(byDay[d], b)
	}
	out := make(map[string]Stats, len(byDay))
	for d, bs := range byDay {
		var t Stats
		for _, s := range merge(bs, false) {
			add(&t, s)
		}
		finish(&t)
		out[d] = t
	}
	return out, nil
}

func (r *Recorder) rangeRows(ctx context.Context, from, to time.Time) ([]model.FleetBucket, error) {
	var rows []model.FleetBucket
	for _, res := range []string{model.ResMinute, model.ResHour, model.ResDay} {
		got, err := r.store.FleetSince(ctx, res, from, to)
		if err != nil {
			return nil, err
		}
		rows = append(rows, got...)
	}
	return rows, nil
}

package routing

import (
	"context"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"tollgate/service/fleet"
)

// DefaultPeriod is the aggregation period: how often the metric snapshot that scores read is rebuilt.
const DefaultPeriod = 10 * time.Second

// periodAlpha is the weight of the newest period in a channel's per-period averages (so a change of
// behaviour dominates the inputs after two periods: 1 − 0.4² = 84 %).
const periodAlpha = 0.6

// sampleDecay is what the sample count keeps at each roll (the "samples" an input rests on: about ten
// periods' worth in a steady state).
const sampleDecay = 0.9

// Stat is what the scores read about one channel × model: success rate (0–1), mean latency and first byte
// and a p95 latency (ms), how many samples they rest on, and where they came from.
type Stat struct {
	Success     float64 `json:"success"`
	LatencyMs   float64 `json:"latency_ms"`
	FirstByteMs float64 `json:"first_byte_ms,omitempty"`
	P95Ms       float64 `json:"p95_ms"`
	Samples     float64 `json:"samples"`
	Source      string  `json:"source"` // "node" (this node's periods) or "fleet" (every node's minute rollups)
}

type statKey struct {
	ch    int64
	model string
}

// period is one aggregation period's counts for a channel × model on this node.
type period struct {
	attempts, successes int64
	latSum, fbSum       float64 // ms, of successes
	fbN                 int64
	hist                [histN]int64 // latency of successes, log₂ buckets
}

const histN = 23

func histBucket(ms float64) int {
	i := 0
	for i < histN-1 && ms > float64(int64(1)<<i) {
		i++
	}
	return i
}

// running is a channel × model's per-period averages (EWMA across periods, not samples).
type running struct {
	stat Stat
	hist [histN]float64 // decayed latency histogram
	seen bool
}

// FleetSource reads every node's minute rollups (service/fleet.Recorder).
type FleetSource interface {
	Window(ctx context.Context, d time.Duration) ([]fleet.Stats, error)
}

// Book aggregates this node's finished requests per channel × model per period and, at the end of each
// period, folds them into the snapshot the strategies score from; channels this node has too few samples
// of take the fleet's minute rollups (every node, the last FleetWindow) instead. Reads are one atomic load.
type Book struct {
	Period      time.Duration
	FleetWindow time.Duration
	fleet       FleetSource

	mu  sync.Mutex
	cur map[statKey]*period
	run map[statKey]*running

	fleetStats map[statKey]Stat // last fleet read (background)
	snap       atomic.Pointer[map[statKey]Stat]

	stop chan struct{}
	done chan struct{}
}

// NewBook builds a book rolling every period (≤ 0: DefaultPeriod); fleet may be nil.
func NewBook(p time.Duration, fs FleetSource) *Book {
	if p <= 0 {
		p = DefaultPeriod
	}
	b := &Book{Period: p, FleetWindow: 15 * time.Minute, fleet: fs, cur: map[statKey]*period{}, run: map[statKey]*running{},
		stop: make(chan struct{}), done: make(chan struct{})}
	empty := map[statKey]Stat{}
	b.snap.Store(&empty)
	return b
}

// Observe adds a finished request's attempts (off the request path, like the fleet's Observe).
func (b *Book) Observe(q fleet.Request) {
	if len(q.Attempts) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, a := range q.Attempts {
		if a.Class == "client" || a.Class == "canceled" {
			continue // the caller's doing, not the channel's
		}
		k := statKey{a.ChannelID, q.Model}
		p := b.cur[k]
		if p == nil {
			p = &period{}
			b.cur[k] = p
		}
		p.attempts++
		if a.Class == "" {
			ms := float64(a.Latency) / float64(time.Millisecond)
			p.successes++
			p.latSum += ms
			p.hist[histBucket(ms)]++
			if i == len(q.Attempts)-1 && q.FirstByte > 0 {
				p.fbSum += float64(q.FirstByte) / float64(time.Millisecond)
				p.fbN++
			}
		}
	}
}

// Stat returns the snapshot's numbers for a channel × model.
func (b *Book) Stat(ch int64, model string) (Stat, bool) {
	s, ok := (*b.snap.Load())[statKey{ch, model}]
	return s, ok
}

// Roll ends the current period: folds its counts into the running averages and publishes a new snapshot.
func (b *Book) Roll() {
	b.mu.Lock()
	cur := b.cur
	b.cur = map[statKey]*period{}
	for k, r := range b.run { // a period without traffic: the samples behind the averages age
		if _, ok := cur[k]; !ok {
			r.stat.Samples *= sampleDecay
		}
	}
	for k, p := range cur {
		r := b.run[k]
		if r == nil {
			r = &running{}
			b.run[k] = r
		}
		fold(r, p)
	}
	snap := make(map[statKey]Stat, len(b.run)+len(b.fleetStats))
	for k, s := range b.fleetStats {
		snap[k] = s
	}
	for k, r := range b.run {
		if f, ok := snap[k]; ok && r.stat.Samples < f.Samples && r.stat.Samples < 1 {
			continue // what this node saw has aged away: the fleet's numbers stand
		}
		snap[k] = r.stat
	}
	b.mu.Unlock()
	b.snap.Store(&snap)
}

func fold(r *running, p *period) {
	s := &r.stat
	succ := float64(p.successes) / float64(p.attempts)
	n := float64(p.attempts)
	a := periodAlpha * n / (n + 2) // a period of a few samples moves the averages less
	if !r.seen {
		a = 1
	}
	s.Success = a*succ + (1-a)*s.Success
	if p.successes > 0 {
		lat := p.latSum / float64(p.successes)
		if s.LatencyMs == 0 {
			s.LatencyMs = lat
		} else {
			s.LatencyMs = a*lat + (1-a)*s.LatencyMs
		}
		for i := range r.hist {
			r.hist[i] = a*float64(p.hist[i]) + (1-a)*r.hist[i]
		}
		s.P95Ms = quantile(r.hist[:], 0.95)
	}
	if p.fbN > 0 {
		fb := p.fbSum / float64(p.fbN)
		if s.FirstByteMs == 0 {
			s.FirstByteMs = fb
		} else {
			s.FirstByteMs = a*fb + (1-a)*s.FirstByteMs
		}
	}
	s.Samples = s.Samples*sampleDecay + float64(p.attempts)
	s.Source = "node"
	r.seen = true
}

// quantile of a log₂ histogram, as the geometric middle of the bucket (like service/fleet's sketch).
func quantile(h []float64, q float64) float64 {
	var n float64
	for _, c := range h {
		n += c
	}
	if n == 0 {
		return 0
	}
	rank, seen := q*n, 0.0
	for i, c := range h {
		if seen += c; seen >= rank {
			if i == 0 {
				return 1
			}
			return math.Sqrt(float64(int64(1)<<(i-1)) * float64(int64(1)<<i))
		}
	}
	return float64(int64(1) << (histN - 1))
}

// refreshFleet reads the fleet's rollups (SQL, off the request path) for channels this node lacks.
func (b *Book) refreshFleet(ctx context.Context) {
	if b.fleet == nil {
		return
	}
	rows, err := b.fleet.Window(ctx, b.FleetWindow)
	if err != nil {
		slog.Warn("routing: fleet metrics", "err", err)
		return
	}
	m := make(map[statKey]Stat, len(rows))
	for _, s := range rows {
		if s.Attempts == 0 {
			continue
		}
		m[statKey{s.ChannelID, s.Model}] = Stat{Success: s.SuccessRate, LatencyMs: s.LatencyAvgMs, FirstByteMs: s.FirstByteP50Ms,
			P95Ms: s.LatencyP95Ms, Samples: float64(s.Attempts), Source: "fleet"}
	}
	b.mu.Lock()
	b.fleetStats = m
	b.mu.Unlock()
}

// Start rolls every Period and reads the fleet's rollups every max(Period, 10 s) until Close.
func (b *Book) Start() {
	go func() {
		defer close(b.done)
		roll := time.NewTicker(b.Period)
		defer roll.Stop()
		every := max(b.Period, fleet.FlushEvery)
		var last time.Time
		for {
			select {
			case <-b.stop:
				return
			case now := <-roll.C:
				if now.Sub(last) >= every {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					b.refreshFleet(ctx)
					cancel()
					last = now
				}
				b.Roll()
			}
		}
	}()
}

// Close stops the background work.
func (b *Book) Close(ctx context.Context) error {
	select {
	case <-b.stop:
		return nil
	default:
	}
	close(b.stop)
	select {
	case <-b.done:
	case <-ctx.Done():
	}
	return nil
}

// Package fleet keeps traffic numbers per channel × model that hold for the whole fleet and survive
// restarts: every node adds what it served into per-minute buckets in memory and writes its running totals
// to SQL every few seconds (one row per node, minute, channel and model); minutes roll up into hours and
// hours into days. Reads merge every node's rows. The live breakers stay per node (service/health); these
// are the numbers an admin (and metric-driven routing) reads.
package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"sync"
	"time"

	"tollgate/model"
	"tollgate/service/cache"
)

// Retention and cadence.
const (
	FlushEvery   = 10 * time.Second
	compactEvery = 5 * time.Minute
	minuteKeep   = 3 * time.Hour        // minutes older than this roll into hours
	hourKeep     = 8 * 24 * time.Hour   // hours older than this roll into days
	dayKeep      = 400 * 24 * time.Hour // days older than this are deleted
)

type bucketKey struct {
	at    int64 // unix minute start
	ch    int64
	model string
}

type acc struct {
	model.FleetBucket
	dirty bool
}

// Recorder accumulates this node's traffic and writes it out; safe for concurrent use.
type Recorder struct {
	store *model.Store
	cache cache.Cache // the compaction lock (nil: this node compacts)
	now   func() time.Time
	node  string

	mu  sync.Mutex
	cur map[bucketKey]*acc

	readMu sync.Mutex
	reads  map[time.Duration]cached

	stop chan struct{}
	done chan struct{}
}

type cached struct {
	at   time.Time
	rows []Stats
}

// New builds a recorder writing to store; call Start to flush and compact in the background.
func New(store *model.Store, c cache.Cache, now func() time.Time) *Recorder {
	if now == nil {
		now = time.Now
	}
	var id [6]byte
	_, _ = rand.Read(id[:])
	return &Recorder{store: store, cache: c, now: now, node: hex.EncodeToString(id[:]), cur: map[bucketKey]*acc{},
		reads: map[time.Duration]cached{}, stop: make(chan struct{}), done: make(chan struct{})}
}

// Attempt is one upstream attempt of a finished request.
type Attempt struct {
	ChannelID int64
	Class     string // "" = success
	Latency   time.Duration
}

// Request is a finished relay request as the fleet counts it: its attempts, and the tokens and first byte of
// the one that answered (the last attempt).
type Request struct {
	Model     string
	Attempts  []Attempt
	FirstByte time.Duration // 0: nothing was delivered
	Prompt    int64
	Output    int64
}

// Observe adds a finished request (called after the answer, off the request's path).
func (r *Recorder) Observe(q Request) {
	if len(q.Attempts) == 0 {
		return
	}
	at := r.now().UTC().Truncate(time.Minute)
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, a := range q.Attempts {
		k := bucketKey{at: at.Unix(), ch: a.ChannelID, model: q.Model}
		b := r.cur[k]
		if b == nil {
			b = &acc{FleetBucket: model.FleetBucket{Res: model.ResMinute, At: at, ChannelID: a.ChannelID, Model: q.Model,
				Node: r.node, Classes: model.JSON[map[string]int64]{V: map[string]int64{}}}}
			r.cur[k] = b
		}
		b.dirty = true
		b.Classes.V[a.Class]++
		if a.Class == "" {
			b.Successes++
		}
		b.LatencySumMs += a.Latency.Milliseconds()
		addHist(&b.LatencyHist.V, nil)
		b.LatencyHist.V[bucketOf(a.Latency)]++
		if i == len(q.Attempts)-1 { // the request ended here
			b.Requests++
			b.PromptTokens += q.Prompt
			b.OutputTokens += q.Output
			if q.FirstByte > 0 {
				b.FirstByteCount++
				b.FirstByteSumMs += q.FirstByte.Milliseconds()
				addHist(&b.FirstByteHist.V, nil)
				b.FirstByteHist.V[bucketOf(q.FirstByte)]++
			}
		}
	}
}

// Flush writes this node's running totals of every bucket that changed, and forgets finished minutes.
func (r *Recorder) Flush(ctx context.Context) error {
	now := r.now().UTC().Truncate(time.Minute)
	r.mu.Lock()
	var rows []model.FleetBucket
	for k, b := range r.cur {
		if b.dirty {
			row := b.FleetBucket
			row.Classes.V = copyMap(b.Classes.V)
			row.LatencyHist.V = append([]int64(nil), b.LatencyHist.V...)
			row.FirstByteHist.V = append([]int64(nil), b.FirstByteHist.V...)
			rows = append(rows, row)
			b.dirty = false
		}
		if k.at < now.Unix() && !b.dirty {
			delete(r.cur, k) // its final totals are in rows (or were written before)
		}
	}
	r.mu.Unlock()
	if err := r.store.UpsertFleet(ctx, rows); err != nil {
		r.mu.Lock()
		for _, row := range rows { // keep them for the next flush
			k := bucketKey{at: row.At.Unix(), ch: row.ChannelID, model: row.Model}
			if b := r.cur[k]; b != nil {
				b.dirty = true
			} else {
				r.cur[k] = &acc{FleetBucket: row, dirty: true}
			}
		}
		r.mu.Unlock()
		return err
	}
	return nil
}

func copyMap(m map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Start flushes every FlushEvery and compacts every few minutes (one node at a time) until Close.
func (r *Recorder) Start() {
	go func() {
		defer close(r.done)
		flush := time.NewTicker(FlushEvery)
		compact := time.NewTicker(compactEvery)
		defer flush.Stop()
		defer compact.Stop()
		for {
			select {
			case <-r.stop:
				return
			case <-flush.C:
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				if err := r.Flush(ctx); err != nil {
					slog.Warn("fleet metrics flush", "err", err)
				}
				cancel()
			case <-compact.C:
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				if err := r.Compact(ctx); err != nil {
					slog.Warn("fleet metrics compaction", "err", err)
				}
				cancel()
			}
		}
	}()
}

// Close stops the background work and writes what is left.
func (r *Recorder) Close(ctx context.Context) error {
	select {
	case <-r.stop:
	default:
		close(r.stop)
		select {
		case <-r.done:
		case <-ctx.Done():
		}
	}
	return r.Flush(ctx)
}

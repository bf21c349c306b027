package routing

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"tollgate/model"
	"tollgate/service/cache"
)

// DecisionLog writes routing decisions to their own table (routing_decisions, with the usage logs) from a
// queue, in batches, off the request path, and deletes rows older than the retention setting (one node at a
// time, a cache lock). A full queue drops rows (counted in Dropped): the relay never waits for this book.
type DecisionLog struct {
	store *model.Store
	cache cache.Cache
	// Sample is "1 in N" routed requests kept (≤ 1: every one); RetentionDays how long rows stay (≤ 0: 7).
	Sample        func() int
	RetentionDays func() int
	// Every is how often the retention job runs (default 1 h); FlushEvery how often batches are written.
	Every      time.Duration
	FlushEvery time.Duration
	Dropped    atomic.Int64

	n     atomic.Uint64
	queue chan *model.RoutingDecision // pointers: a buffer of 8,192 rows would be resident while nearly always empty
	stop  chan struct{}
	wg    sync.WaitGroup
	flush chan chan struct{}
}

// DefaultDecisionRetentionDays is how long decision rows stay without a setting.
const DefaultDecisionRetentionDays = 7

// NewDecisionLog builds the writer; Start runs it.
func NewDecisionLog(store *model.Store, c cache.Cache, sample, days func() int) *DecisionLog {
	return &DecisionLog{store: store, cache: c, Sample: sample, RetentionDays: days, Every: time.Hour,
		FlushEvery: 200 * time.Millisecond, queue: make(chan *model.RoutingDecision, 8192), stop: make(chan struct{}),
		flush: make(chan chan struct{})}
}

// Sampled says whether the next routed request's decision is kept (1 in Sample()).
func (d *DecisionLog) Sampled() bool {
	n := 1
	if d.Sample != nil {
		n = d.Sample()
	}
	if n <= 1 {
		return true
	}
	return d.n.Add(1)%uint64(n) == 0
}

// Add queues a row; it never blocks.
func (d *DecisionLog) Add(row model.RoutingDecision) {
	select {
	case d.queue <- &row:
	default:
		d.Dropped.Add(1)
	}
}

// List reads decision rows, newest first.
func (d *DecisionLog) List(ctx context.Context, f model.DecisionFilter) ([]model.RoutingDecision, error) {
	return d.store.RoutingDecisions(ctx, f)
}

// Flush writes what is queued now (tests, shutdown).
func (d *DecisionLog) Flush() {
	done := make(chan struct{})
	select {
	case d.flush <- done:
		<-done
	case <-d.stop:
	}
}

// Start runs the writer and the retention job until Close.
func (d *DecisionLog) Start() {
	d.wg.Add(2)
	go func() {
		defer d.wg.Done()
		t := time.NewTicker(d.FlushEvery)
		defer t.Stop()
		for {
			select {
			case <-d.stop:
				d.write()
				return
			case <-t.C:
				d.write()
			case done := <-d.flush:
				d.write()
				close(done)
			}
		}
	}()
	go func() {
		defer d.wg.Done()
		wait := time.Minute
		for {
			select {
			case <-d.stop:
				return
			case <-time.After(wait):
			}
			wait = d.Every
			if n, err := d.Purge(context.Background(), time.Now()); err != nil {
				slog.Warn("routing decision retention", "err", err)
			} else if n > 0 {
				slog.Info("routing decision retention", "deleted", n)
			}
		}
	}()
}

func (d *DecisionLog) write() {
	var rows []model.RoutingDecision
drain:
	for len(rows) < 1000 {
		select {
		case r := <-d.queue:
			rows = append(rows, *r)
		default:
			break drain
		}
	}
	if len(rows) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.store.InsertRoutingDecisions(ctx, rows); err != nil {
		d.Dropped.Add(int64(len(rows)))
		slog.Warn("routing decisions: write", "rows", len(rows), "err", err)
	}
}

// Purge deletes rows older than the retention (as of now) in chunks, if this node gets the lock.
func (d *DecisionLog) Purge(ctx context.Context, now time.Time) (int64, error) {
	days := DefaultDecisionRetentionDays
	if d.RetentionDays != nil {
		if n := d.RetentionDays(); n > 0 {
			days = n
		}
	}
	const key = "routing:decisions:retention:lock"
	got, err := d.cache.SetNX(ctx, key, []byte("1"), 2*time.Minute)
	if err != nil {
		return 0, fmt.Errorf("decision retention lock: %w", err)
	}
	if !got {
		return 0, nil
	}
	defer func() { _ = d.cache.Del(context.Background(), key) }()
	cutoff := now.UTC().AddDate(0, 0, -days)
	var total int64
	for {
		n, err := d.store.DeleteRoutingDecisionsBefore(ctx, cutoff, 2000)
		total += n
		if err != nil || n < 2000 {
			return total, err
		}
		select {
		case <-ctx.Done():
			return total, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Close stops the writer (writing what is queued) and the retention job.
func (d *DecisionLog) Close(context.Context) error {
	select {
	case <-d.stop:
	default:
		close(d.stop)
	}
	d.wg.Wait()
	return nil
}

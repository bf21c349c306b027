package usagelog

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"tollgate/model"
	"tollgate/service/cache"
)

// retentionLockKey is the cache key that lets one node at a time run the retention job.
const retentionLockKey = "logs:retention:lock"

// Retention deletes usage log rows older than the log_retention_days setting, from a background job that runs on
// one node at a time (a cache lock), in chunks of primary-key ranges (one short autocommit DELETE each, a Pause
// between them), so no statement holds row locks for long and the writer's inserts interleave. A chunk's size
// follows the time its statements take (see nextChunk): it starts small, grows while statements take under half
// the Budget and shrinks in proportion when one takes longer, because what a DELETE costs per row depends on how
// much of the table's nine secondary indexes the database holds in memory, not on the row count alone.
// The daily sums are kept: stats of deleted days still answer from them.
type Retention struct {
	store *model.Store
	cache cache.Cache
	days  func() int
	// Chunk is the most ids one DELETE covers (default 5000); FirstChunk the ids of the first (default 200);
	// Budget the time one chunk's statements should take (default 100 ms: a chunk that stalls on the disk takes
	// several times its usual time; with the rests, this budget kept that under a second at 10 M rows); Pause the least rest
	// between chunks (default 100 ms; see restAfter for more); Every how often the job runs (default 1 h, first
	// run a minute after Start); Clock the time (tests); OnChunk, when set, hears every chunk (measurement).
	Chunk      int
	FirstChunk int
	Budget     time.Duration
	Pause      time.Duration
	Every      time.Duration
	Clock      func() time.Time
	OnChunk    func(took time.Duration, deleted int64)

	stop chan struct{}
	wg   sync.WaitGroup
}

// minChunk is the fewest ids a chunk covers however slow the statements get.
const minChunk = 20

// nextChunk sizes the next chunk from how long the last one (of size ids) took against budget: in proportion
// (by budget/took, at least halved) when it took longer than the budget, ×1.5 when it took under half of it,
// unchanged otherwise; never under minChunk (unless most is), never over most.
func nextChunk(size int, took, budget time.Duration, most int) int {
	switch {
	case took > budget:
		size = min(size/2, int(float64(size)*float64(budget)/float64(took)))
	case took < budget/2:
		size = size * 3 / 2
	}
	return min(most, max(minChunk, size))
}

// restAfter is the pause after a chunk whose statements took took: at least Pause and at least took (the job keeps
// the database busy half the time at most), and 4× took after a chunk over the budget, so that a server falling
// behind on flushing (a statement stalled on the redo log or the buffer pool) gets time to catch up before the next
// DELETE instead of queueing it behind the flush. Deleting at the rate the server absorbs keeps statements short.
func restAfter(took, budget, pause time.Duration) time.Duration {
	rest := max(pause, took)
	if budget > 0 && took > budget {
		rest = max(rest, 4*took)
	}
	return rest
}

// PurgeResult is what one retention run did.
type PurgeResult struct {
	Deleted      int64         `json:"deleted"`
	Chunks       int           `json:"chunks"`
	MaxStatement time.Duration `json:"max_statement"` // longest chunk (its DELETE and the look at the next row)
	// MinChunk and MaxChunk are the smallest and largest chunk sizes (ids) the run used.
	MinChunk int           `json:"min_chunk"`
	MaxChunk int           `json:"max_chunk"`
	Elapsed  time.Duration `json:"elapsed"`
	Skipped  bool          `json:"skipped"` // another node holds the lock, or retention is off
}

// NewRetention builds the job; days reads the current setting (0 = keep forever).
func NewRetention(store *model.Store, c cache.Cache, days func() int) *Retention {
	return &Retention{store: store, cache: c, days: days, Chunk: 5000, FirstChunk: 200, Budget: 100 * time.Millisecond,
		Pause: 100 * time.Millisecond,
		Every: time.Hour, Clock: time.Now, stop: make(chan struct{})}
}

// Start runs the job in the background until Close.
func (r *Retention) Start() {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		wait := time.Minute
		for {
			select {
			case <-r.stop:
				return
			case <-time.After(wait):
			}
			wait = r.Every
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				select {
				case <-r.stop:
					cancel()
				case <-ctx.Done():
				}
			}()
			res, err := r.Run(ctx)
			cancel()
			if err != nil {
				slog.Error("log retention failed", "err", err)
			} else if res.Deleted > 0 {
				slog.Info("log retention", "deleted", res.Deleted, "chunks", res.Chunks, "max_statement", res.MaxStatement, "elapsed", res.Elapsed)
			}
		}
	}()
}

// Close stops the job (an unfinished run stops after its current chunk).
func (r *Retention) Close(context.Context) error {
	close(r.stop)
	r.wg.Wait()
	return nil
}

// Run deletes the rows older than the setting now, if this node gets the lock.
func (r *Retention) Run(ctx context.Context) (PurgeResult, error) {
	days := r.days()
	if days <= 0 {
		return PurgeResult{Skipped: true}, nil
	}
	return r.Purge(ctx, r.Clock().UTC().AddDate(0, 0, -days))
}

// Purge deletes the rows created before cutoff, chunk by chunk, holding the cluster-wide lock meanwhile.
func (r *Retention) Purge(ctx context.Context, cutoff time.Time) (PurgeResult, error) {
	var res PurgeResult
	const lease = 2 * time.Minute
	got, err := r.cache.SetNX(ctx, retentionLockKey, []byte("1"), lease)
	if err != nil {
		return res, fmt.Errorf("retention lock: %w", err)
	}
	if !got {
		res.Skipped = true
		return res, nil
	}
	defer func() { _ = r.cache.Del(context.Background(), retentionLockKey) }()
	start := time.Now()
	most := max(r.Chunk, 1)
	chunk := min(most, max(r.FirstChunk, 1))
	if r.FirstChunk <= 0 {
		chunk = most
	}
	res.MinChunk = chunk
	var from int64
	for {
		t0 := time.Now()
		next, n, more, err := r.store.PurgeChunk(ctx, cutoff, from, chunk)
		took := time.Since(t0)
		res.Chunks++
		res.Deleted += n
		res.MaxStatement = max(res.MaxStatement, took)
		if r.OnChunk != nil {
			r.OnChunk(took, n)
		}
		res.MinChunk, res.MaxChunk = min(res.MinChunk, chunk), max(res.MaxChunk, chunk)
		if r.Budget > 0 {
			chunk = nextChunk(chunk, took, r.Budget, most)
		}
		if err != nil {
			res.Elapsed = time.Since(start)
			return res, err
		}
		if !more {
			break
		}
		from = next
		// Renew the lease each chunk: a long run keeps it, a crashed one lets another node take over.
		_ = r.cache.Set(ctx, retentionLockKey, []byte("1"), lease)
		if rest := restAfter(took, r.Budget, r.Pause); rest > 0 {
			select {
			case <-ctx.Done():
				res.Elapsed = time.Since(start)
				return res, ctx.Err()
			case <-time.After(rest):
			}
		}
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// Package usagelog writes one row per relayed request through a batched writer (group commit) that also
// moves the settled money in SQL, and serves logs and per-day / per-model sums to the console. With a separate
// log database (LOG_SQL_DSN) the money stays in the main database and the rows go to the log database, through
// an on-disk spool while it is down.
package usagelog

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"

	"tollgate/model"
)

// Entry is one settled request: its log row and whether the key's remaining quota moves too.
type Entry struct {
	Log          model.UsageLog
	TokenLimited bool
}

// Writer batches entries into SQL: each flush inserts the rows and applies the summed balance changes in one
// transaction, so SQL is never half-written and the hot path never waits on it.
type Writer struct {
	store *model.Store
	// in holds pointers, not entries: an Entry is ~700 bytes, and a buffer of 8,192 of them (5.8 MB, scanned by
	// every GC cycle) would be resident from the start though the queue is nearly always empty. The bound, and
	// so the back-pressure, is the same.
	in chan *Entry
	// kick wakes the writer before its tick when a full batch is queued. The writer does not wake for each
	// entry: at low load that was a goroutine wake-up (and often a thread's) per request for nothing.
	kick     chan struct{}
	maxBatch int
	every    time.Duration
	wg       sync.WaitGroup
	stop     chan struct{}
	flushReq chan chan struct{}
	// Pending counts entries accepted but not yet committed (for /metrics and tests).
	Pending atomic.Int64
	// LastFlush is the Unix-nano time of the last successful commit.
	LastFlush atomic.Int64
	// producing counts producers that announced an entry (Begin) and have not written it yet: the relay
	// settles after answering the client, and Flush/Close must wait for those too.
	producing atomic.Int64
	// spool holds batches while a separate log database is down (nil: retry in memory); retryAt is when the
	// writer next tries the log database after a failure (writer goroutine only).
	spool   *Spool
	retryAt time.Time
	// prunedAt is when the money marks of a split log database were last pruned (writer goroutine only).
	prunedAt time.Time
	// LogFailures counts failed inserts into a separate log database; Lost counts rows given up at shutdown
	// (neither the log database nor the spool took them).
	LogFailures atomic.Int64
	Lost        atomic.Int64
}

// Option adjusts a Writer.
type Option func(*Writer)

// WithSpool makes the writer keep log batches in sp while a separate log database is down.
func WithSpool(sp *Spool) Option { return func(w *Writer) { w.spool = sp } }

// Spool is the writer's spool (nil without one).
func (w *Writer) Spool() *Spool { return w.spool }

// Settling is how many requests answered their client and are still settling (ledger round trip pending).
func (w *Writer) Settling() int64 { return w.producing.Load() }

// Begin announces an entry that will be written soon (its request is settling).
func (w *Writer) Begin() { w.producing.Add(1) }

// End withdraws an announcement made by Begin (call after Write, or instead of it).
func (w *Writer) End() { w.producing.Add(-1) }

// AwaitSettling waits until every announced entry was written (its request finished settling), or ctx ends.
func (w *Writer) AwaitSettling(ctx context.Context) { w.waitProducers(ctx) }

// waitProducers waits until every announced entry was written, or ctx ends.
func (w *Writer) waitProducers(ctx context.Context) {
	for w.producing.Load() > 0 {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Millisecond):
		}
	}
}

// NewWriter starts a writer; Close flushes and stops it.
func NewWriter(store *model.Store, queue, maxBatch int, every time.Duration, opts ...Option) *Writer {
	w := &Writer{store: store, in: make(chan *Entry, queue), kick: make(chan struct{}, 1), maxBatch: max(maxBatch, 1), every: every,
		stop: make(chan struct{}), flushReq: make(chan chan struct{})}
	for _, o := range opts {
		o(w)
	}
	w.wg.Add(1)
	go w.run()
	return w
}

// Write queues an entry; it blocks only when the queue is full (back-pressure instead of loss). The writer
// takes it at its next tick, or at once when a full batch is waiting.
func (w *Writer) Write(e Entry) {
	w.Pending.Add(1)
	select {
	case w.in <- &e:
	default: // full: wake the writer, then wait for room
		w.wake()
		w.in <- &e
	}
	if len(w.in) >= w.maxBatch {
		w.wake()
	}
}

// wake asks the writer to commit now instead of at its tick.
func (w *Writer) wake() {
	select {
	case w.kick <- struct{}{}:
	default: // a kick is already waiting
	}
}

// Flush waits until everything queued or announced before the call is committed.
func (w *Writer) Flush() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	w.waitProducers(ctx)
	cancel()
	done := make(chan struct{})
	select {
	case w.flushReq <- done:
		<-done
	case <-w.stop:
	}
}

// Close flushes what is queued and stops the writer.
func (w *Writer) Close(ctx context.Context) error {
	w.waitProducers(ctx)
	close(w.stop)
	finished := make(chan struct{})
	go func() { w.wg.Wait(); close(finished) }()
	select {
	case <-finished:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (w *Writer) run() {
	defer w.wg.Done()
	tick := time.NewTicker(w.every)
	defer tick.Stop()
	// The batch grows to what the load needs (up to maxBatch) and is reused: an idle gateway does not hold
	// maxBatch entries.
	var batch []Entry
	drain := func() {
		for len(batch) < w.maxBatch {
			select {
			case e := <-w.in:
				batch = append(batch, *e)
			default:
				return
			}
		}
	}
	// full commits the full batches queued now, then goes back to the select (a flush, the stop and the tick
	// get their turn under sustained load); more full batches meanwhile wake it again. What is left waits for
	// the tick.
	full := func() {
		for n := len(w.in) / w.maxBatch; n > 0; n-- {
			drain()
			batch = w.commit(batch)
		}
		if len(w.in) >= w.maxBatch {
			w.wake()
		}
	}
	for {
		select {
		case <-w.kick:
			drain()
			batch = w.commit(batch)
			full()
		case <-tick.C:
			full()
			drain()
			batch = w.commit(batch)
			w.drainSpool()
			w.pruneMarks()
		case done := <-w.flushReq:
			// What was queued when the flush was asked for (the front of the queue): under load that never
			// empties the queue, waiting for it to be empty would never end.
			for queued := len(w.in); ; {
				queued -= min(queued, w.maxBatch-len(batch))
				drain()
				batch = w.commit(batch)
				if queued == 0 || len(w.in) == 0 {
					break
				}
			}
			w.drainSpool()
			close(done)
		case <-w.stop:
			for {
				drain()
				batch = w.commit(batch)
				if len(w.in) == 0 {
					w.retryAt = time.Time{}
					w.drainSpool() // what stays on disk is drained by the next start
					return
				}
			}
		}
	}
}

// commit writes the batch, retrying until it succeeds or the writer stops (a lost batch would lose money).
func (w *Writer) commit(batch []Entry) []Entry {
	if len(batch) == 0 {
		return batch
	}
	split := w.store.SeparateLogs()
	var id string // the money's mark in the main database: one id for every try of this batch
	if split {
		id = model.NewMoneyBatchID(time.Now())
	}
	for attempt := 0; ; attempt++ {
		err := w.store.DB.Transaction(func(tx *gorm.DB) error {
			if split { // the money here, the rows in the log database below
				return applyMoneyOnce(tx, w.store, id, batch)
			}
			return apply(tx, w.store, batch)
		})
		if err == nil {
			break
		}
		slog.Error("usage log batch failed; retrying", "rows", len(batch), "attempt", attempt, "err", err)
		select {
		case <-time.After(time.Duration(min(attempt+1, 20)) * 250 * time.Millisecond):
		case <-w.stop:
			if attempt >= 3 {
				slog.Error("usage log batch dropped at shutdown", "rows", len(batch))
				w.Pending.Add(-int64(len(batch)))
				return batch[:0]
			}
		}
	}
	if split {
		logs := make([]model.UsageLog, len(batch))
		for i := range batch {
			logs[i] = batch[i].Log
		}
		w.writeLogs(logs)
	}
	w.Pending.Add(-int64(len(batch)))
	w.LastFlush.Store(time.Now().UnixNano())
	return batch[:0]
}

// writeLogs puts a settled batch's rows into the separate log database, or into the spool while that is down
// or while older batches still wait there (so rows arrive in order). With neither, it waits and retries: the
// queue then fills and producers wait (back-pressure after the client got its answer, never a relay error).
func (w *Writer) writeLogs(logs []model.UsageLog) {
	for attempt := 0; ; attempt++ {
		if (w.spool == nil || w.spool.Len() == 0) && !time.Now().Before(w.retryAt) {
			err := w.insertLogs(logs)
			if err == nil {
				return
			}
			w.LogFailures.Add(1)
			w.retryAt = time.Now().Add(time.Second)
			slog.Warn("log database insert failed; spooling", "rows", len(logs), "err", err)
		}
		if w.spool != nil {
			err := w.spool.Append(logs)
			if err == nil {
				return
			}
			slog.Error("usage log spool refused a batch; holding it in memory", "rows", len(logs), "err", err)
		}
		select {
		case <-time.After(time.Duration(min(attempt+1, 8)) * 250 * time.Millisecond):
		case <-w.stop:
			if attempt >= 3 {
				slog.Error("usage log rows dropped at shutdown (log database down, spool full)", "rows", len(logs))
				w.Lost.Add(int64(len(logs)))
				return
			}
		}
		w.retryAt = time.Time{}
		w.drainSpool()
	}
}

// insertLogs writes rows not stored yet into the log database in one transaction (with their daily sums).
func (w *Writer) insertLogs(logs []model.UsageLog) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return w.store.AddLogs(ctx, logs)
}

// drainSpool moves spooled batches, oldest first, into the log database until one fails (then it waits a
// second before trying again) or 50 went in (the queue is served in between).
func (w *Writer) drainSpool() {
	if w.spool == nil || time.Now().Before(w.retryAt) {
		return
	}
	for range 50 {
		name, logs, ok, err := w.spool.Oldest()
		if err != nil {
			slog.Error("usage log spool read failed", "err", err)
			w.retryAt = time.Now().Add(time.Second)
			return
		}
		if !ok {
			return
		}
		if err := w.insertLogs(logs); err != nil {
			w.LogFailures.Add(1)
			w.retryAt = time.Now().Add(time.Second)
			return
		}
		if err := w.spool.Remove(name); err != nil {
			slog.Error("usage log spool remove failed", "err", err)
			w.retryAt = time.Now().Add(time.Second)
			return
		}
	}
}

type userDelta struct{ cost, n int64 }
type tokenDelta struct {
	cost    int64
	limited bool
	last    time.Time
}

// apply writes a batch's rows, their daily sums and its balance changes in one transaction (one database).
// An entry whose row is already stored moved its money in the transaction that stored it (a commit retried
// after it went through): it moves none again.
func apply(tx *gorm.DB, store *model.Store, batch []Entry) error {
	logs := make([]model.UsageLog, len(batch))
	for i, e := range batch {
		logs[i] = e.Log
	}
	written, err := store.WriteLogs(context.Background(), tx, logs)
	if err != nil {
		return err
	}
	moved := batch
	if slices.Contains(written, false) {
		moved = nil
		for i, e := range batch {
			if written[i] {
				moved = append(moved, e)
			}
		}
	}
	return applyMoney(tx, store, moved)
}

// applyMoneyOnce applies a batch's balance changes unless the transaction of an earlier try of it committed
// (its mark, id, is stored): a try reported failed may have gone through (the connection dropped before the
// answer), and the writer runs it again.
func applyMoneyOnce(tx *gorm.DB, store *model.Store, id string, batch []Entry) error {
	fresh, err := store.ClaimMoneyBatch(context.Background(), tx, id)
	if err != nil || !fresh {
		return err
	}
	return applyMoney(tx, store, batch)
}

// pruneMarks deletes old money marks of a split log database, at most once an hour (writer goroutine only).
func (w *Writer) pruneMarks() {
	if !w.store.SeparateLogs() || time.Since(w.prunedAt) < time.Hour {
		return
	}
	w.prunedAt = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.store.PruneMoneyBatches(ctx, time.Now()); err != nil {
		slog.Warn("prune money batch marks", "err", err)
	}
}

// applyMoney applies a batch's summed balance changes to users and limited keys.
func applyMoney(tx *gorm.DB, store *model.Store, batch []Entry) error {
	ctx := context.Background()
	users := map[int64]*userDelta{}
	tokens := map[int64]*tokenDelta{}
	for _, e := range batch {
		if e.Log.IsTest {
			continue
		}
		u := users[e.Log.UserID]
		if u == nil {
			u = &userDelta{}
			users[e.Log.UserID] = u
		}
		u.cost += e.Log.Cost
		u.n++
		t := tokens[e.Log.TokenID]
		if t == nil {
			t = &tokenDelta{}
			tokens[e.Log.TokenID] = t
		}
		t.cost += e.Log.Cost
		t.limited = e.TokenLimited
		if e.Log.CreatedAt.After(t.last) {
			t.last = e.Log.CreatedAt
		}
	}
	for id, d := range users {
		if err := store.AddUserUsage(ctx, tx, id, d.cost, d.n); err != nil {
			return err
		}
	}
	for id, d := range tokens {
		if id == 0 {
			continue
		}
		if err := store.AddTokenUsage(ctx, tx, id, d.cost, d.last); err != nil {
			return err
		}
	}
	return nil
}

// Package usagelog writes one row per relayed request through a batched writer (group commit) that also
// moves the settled money in SQL, and serves logs and per-day / per-model sums to the console.
package usagelog

import (
	"context"
	"log/slog"
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
	store    *model.Store
	in       chan Entry
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
}

// Settling is how many requests answered their client and are still settling (ledger round trip pending).
func (w *Writer) Settling() int64 { return w.producing.Load() }

// Begin announces an entry that will be written soon (its request is settling).
func (w *Writer) Begin() { w.producing.Add(1) }

// End withdraws an announcement made by Begin (call after Write, or instead of it).
func (w *Writer) End() { w.producing.Add(-1) }

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
func NewWriter(store *model.Store, queue, maxBatch int, every time.Duration) *Writer {
	w := &Writer{store: store, in: make(chan Entry, queue), maxBatch: maxBatch, every: every,
		stop: make(chan struct{}), flushReq: make(chan chan struct{})}
	w.wg.Add(1)
	go w.run()
	return w
}

// Write queues an entry; it blocks only when the queue is full (back-pressure instead of loss).
func (w *Writer) Write(e Entry) {
	w.Pending.Add(1)
	w.in <- e
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
	batch := make([]Entry, 0, w.maxBatch)
	drain := func() {
		for len(batch) < w.maxBatch {
			select {
			case e := <-w.in:
				batch = append(batch, e)
			default:
				return
			}
		}
	}
	for {
		select {
		case e := <-w.in:
			batch = append(batch, e)
			if len(batch) >= w.maxBatch {
				batch = w.commit(batch)
			}
		case <-tick.C:
			drain()
			batch = w.commit(batch)
		case done := <-w.flushReq:
			for {
				drain()
				batch = w.commit(batch)
				if len(w.in) == 0 {
					break
				}
			}
			close(done)
		case <-w.stop:
			for {
				drain()
				batch = w.commit(batch)
				if len(w.in) == 0 {
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
	for attempt := 0; ; attempt++ {
		err := w.store.DB.Transaction(func(tx *gorm.DB) error { return apply(tx, w.store, batch) })
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
	w.Pending.Add(-int64(len(batch)))
	w.LastFlush.Store(time.Now().UnixNano())
	return batch[:0]
}

type userDelta struct{ cost, n int64 }
type tokenDelta struct {
	cost    int64
	limited bool
	last    time.Time
}

func apply(tx *gorm.DB, store *model.Store, batch []Entry) error {
	ctx := context.Background()
	logs := make([]model.UsageLog, len(batch))
	users := map[int64]*userDelta{}
	tokens := map[int64]*tokenDelta{}
	for i, e := range batch {
		logs[i] = e.Log
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
	if err := store.InsertLogs(ctx, tx, logs); err != nil {
		return err
	}
	for id, d := range users {
		if err := tx.Model(&model.User{}).Where("id = ?", id).UpdateColumns(map[string]any{
			"quota":         gorm.Expr("quota - ?", d.cost),
			"used_quota":    gorm.Expr("used_quota + ?", d.cost),
			"request_count": gorm.Expr("request_count + ?", d.n),
		}).Error; err != nil {
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

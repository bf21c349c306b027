package relay

import (
	"context"
	"sync"
	"time"
)

// Headroom decides when the reservation may travel alongside the upstream request instead of before it.
// With a Redis ledger the reservation is a network round trip; when the caller's last known balance is many
// times the hold, a refusal is all but impossible, so the relay sends the upstream request at once and waits
// for the reservation only before the first byte goes back to the client. A refusal then cancels the
// upstream call and answers the money refusal (moneyRefusal): the ledger stays exact either way, the cost of a wrong guess is one
// cancelled upstream request.
type Headroom struct {
	mu    sync.Mutex
	seen  map[headroomKey]headroomEntry
	ratio int64         // balance must be at least ratio × hold
	fresh time.Duration // how old a known balance may be
	every time.Duration // how often a balance is re-read after a request
}

type headroomKey struct {
	token bool
	id    int64
}

type headroomEntry struct {
	bal  int64
	at   time.Time
	busy bool
}

// NewHeadroom builds the tracker.
func NewHeadroom() *Headroom {
	return &Headroom{seen: map[headroomKey]headroomEntry{}, ratio: 20, fresh: 5 * time.Second, every: time.Second}
}

// Ample reports whether both the user's and (for limited keys) the key's known balances cover hold ratio times.
// A key with a daily or monthly budget is never ample: its reservation is always awaited before the upstream
// call, so a budget refusal never races an upstream request it would have to cancel.
func (h *Headroom) Ample(rq *request, hold int64) bool {
	if rq.who.tok.DailyBudget > 0 || rq.who.tok.MonthlyBudget > 0 {
		return false
	}
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	ok := func(k headroomKey) bool {
		e, found := h.seen[k]
		return found && now.Sub(e.at) < h.fresh && e.bal >= h.ratio*max(hold, 1)
	}
	return ok(headroomKey{false, rq.who.user.ID}) && (rq.who.tok.Unlimited || ok(headroomKey{true, rq.who.tok.ID}))
}

// Refresh re-reads the balances behind rq when they are older than every (called after settling, off the
// client's path).
func (h *Headroom) Refresh(ctx context.Context, r *Relay, rq *request) {
	h.refresh(ctx, headroomKey{false, rq.who.user.ID}, r.Ledger.UserBalance)
	if !rq.who.tok.Unlimited {
		h.refresh(ctx, headroomKey{true, rq.who.tok.ID}, r.Ledger.TokenRemain)
	}
}

func (h *Headroom) refresh(ctx context.Context, k headroomKey, read func(context.Context, int64) (int64, error)) {
	now := time.Now()
	h.mu.Lock()
	e := h.seen[k]
	if e.busy || now.Sub(e.at) < h.every {
		h.mu.Unlock()
		return
	}
	e.busy = true
	h.seen[k] = e
	if len(h.seen) > 100_000 { // bound memory: forget everyone, the next requests re-learn
		h.seen = map[headroomKey]headroomEntry{k: e}
	}
	h.mu.Unlock()
	bal, err := read(ctx, k.id)
	h.mu.Lock()
	if err != nil {
		delete(h.seen, k)
	} else {
		h.seen[k] = headroomEntry{bal: bal, at: time.Now()}
	}
	h.mu.Unlock()
}

package ledger

import (
	"context"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"
)

// shardCount spreads accounts and holds over independent locks so unrelated requests never contend.
const shardCount = 64

// sweepEvery is how often a hold shard looks for expired holds; expiry is a leak guard, not a timer.
const sweepEvery = time.Minute

// Memory is the in-process Ledger for the single-node shape. Each account has its own mutex; a request locks
// its hold shard, then its user, then its token, then its key's spend windows in the request's order (always
// in that order, so there is no deadlock and no global lock).
type Memory struct {
	loader   Loader
	cfg      config
	seed     maphash.Seed
	users    accountTable[int64]
	tokens   accountTable[int64]
	windows  accountTable[winKey]
	holds    [shardCount]holdShard
	winSweep atomic.Int64 // unix ms of the next sweep of ended windows
}

var _ Ledger = (*Memory)(nil)

// NewMemory builds an in-process ledger that loads balances through loader on first touch.
func NewMemory(loader Loader, opts ...Option) *Memory {
	m := &Memory{loader: loader, cfg: newConfig(opts), seed: maphash.MakeSeed()}
	byID := func(id int64) uint64 { return uint64(id) }
	m.users.kind, m.users.load, m.users.shardOf = "user", loader.LoadUser, byID
	m.tokens.kind, m.tokens.load, m.tokens.shardOf = "token", loader.LoadToken, byID
	m.windows.kind, m.windows.shardOf = "window", func(k winKey) uint64 { return uint64(k.token) ^ uint64(k.start) }
	m.windows.load = func(ctx context.Context, k winKey) (int64, error) {
		return loader.LoadSpent(ctx, k.token, time.Unix(k.start, 0), time.Unix(k.end, 0))
	}
	for i := range m.holds {
		m.holds[i].holds = make(map[string]*memHold)
		m.holds[i].settled = make(map[string]Settlement)
	}
	for i := range shardCount {
		m.users.shards[i].m = make(map[int64]*account)
		m.tokens.shards[i].m = make(map[int64]*account)
		m.windows.shards[i].m = make(map[winKey]*account)
	}
	return m
}

// account is one live balance. base is loaded + adjustments - charges; held is the sum of outstanding holds.
// held survives Forget (only base is dropped), so a reload never forgets money that is still on hold.
// For a spend window base is what it charged so far (it grows) and its room is limit - base - held.
type account struct {
	mu      sync.Mutex
	loaded  bool
	dead    bool // a window entry removed after its period ended: whoever holds the pointer must look again
	base    int64
	held    int64
	gen     uint64        // bumped by Forget/Adjust/Set so a load that raced with them is discarded
	loading chan struct{} // non-nil while one goroutine loads; others wait instead of calling the Loader too
}

type accountShard[K comparable] struct {
	mu sync.Mutex
	m  map[K]*account
}

type accountTable[K comparable] struct {
	kind    string
	load    func(context.Context, K) (int64, error)
	shardOf func(K) uint64
	shards  [shardCount]accountShard[K]
}

// get returns the entry for id, creating an unloaded one. User and key entries are never removed, so their
// pointers stay valid; window entries are removed once their period is over and nothing holds on them
// (sweepWindows), and marked dead so a pointer taken before that is never used.
func (t *accountTable[K]) get(id K) *account {
	s := &t.shards[t.shardOf(id)%shardCount]
	s.mu.Lock()
	a := s.m[id]
	if a == nil {
		a = &account{}
		s.m[id] = a
	}
	s.mu.Unlock()
	return a
}

// peek returns the entry for id or nil, without creating one.
func (t *accountTable[K]) peek(id K) *account {
	s := &t.shards[t.shardOf(id)%shardCount]
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[id]
}

// ensure returns id's entry once it is loaded, calling the Loader at most once at a time per account and
// never under a lock. The caller must re-check loaded under a.mu: Forget may run in between.
func (t *accountTable[K]) ensure(ctx context.Context, id K) (*account, error) {
	a := t.get(id)
	for {
		a.mu.Lock()
		if a.dead {
			a.mu.Unlock()
			a = t.get(id)
			continue
		}
		if a.loaded {
			a.mu.Unlock()
			return a, nil
		}
		if ch := a.loading; ch != nil {
			a.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, fmt.Errorf("wait for %s %v load: %w", t.kind, id, ctx.Err())
			}
		}
		ch := make(chan struct{})
		a.loading = ch
		gen := a.gen
		a.mu.Unlock()

		v, err := t.load(ctx, id)

		a.mu.Lock()
		a.loading = nil
		close(ch)
		if err != nil {
			a.mu.Unlock()
			return nil, fmt.Errorf("load %s %v: %w", t.kind, id, err)
		}
		if a.gen == gen && !a.loaded {
			a.base, a.loaded = v, true
		}
		a.mu.Unlock()
	}
}

type memHold struct {
	acct    Account
	amount  int64
	expires time.Time
}

type settledEntry struct {
	reqID string
	at    time.Time
}

// holdShard keeps the holds and the remembered settlements of the request ids that hash to it, under one
// lock, so a duplicate Settle always sees either the hold or the settlement, never neither.
type holdShard struct {
	mu        sync.Mutex
	holds     map[string]*memHold
	settled   map[string]Settlement
	order     []settledEntry // insertion order, for TTL and size eviction; live entries start at head
	head      int
	nextSweep time.Time
}

func (m *Memory) shard(reqID string) *holdShard {
	return &m.holds[maphash.String(m.seed, reqID)%shardCount]
}

// lockAccounts locks the user, then the token, then the windows (the only order used anywhere) and reports
// whether all are loaded and none was removed.
func lockAccounts(u, t *account, ws ...*account) bool {
	u.mu.Lock()
	ok := u.loaded
	if t != nil {
		t.mu.Lock()
		ok = ok && t.loaded
	}
	for _, w := range ws {
		w.mu.Lock()
		ok = ok && w.loaded && !w.dead
	}
	return ok
}

func unlockAccounts(u, t *account, ws ...*account) {
	for i := len(ws) - 1; i >= 0; i-- {
		ws[i].mu.Unlock()
	}
	if t != nil {
		t.mu.Unlock()
	}
	u.mu.Unlock()
}

// ensureAll loads the accounts and windows of acct; ws is nil when acct has no windows.
func (m *Memory) ensureAll(ctx context.Context, acct Account) (u, t *account, ws []*account, err error) {
	if u, err = m.users.ensure(ctx, acct.UserID); err != nil {
		return nil, nil, nil, err
	}
	if acct.TokenLimited {
		if t, err = m.tokens.ensure(ctx, acct.TokenID); err != nil {
			return nil, nil, nil, err
		}
	}
	if len(acct.Windows) > 0 {
		ws = make([]*account, len(acct.Windows))
		for i, w := range acct.Windows {
			if ws[i], err = m.windows.ensure(ctx, keyOf(acct.TokenID, w)); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	return u, t, ws, nil
}

// windowsOf returns the current entries of acct's windows (created unloaded if absent), for giving holds back.
func (m *Memory) windowsOf(acct Account) []*account {
	if len(acct.Windows) == 0 {
		return nil
	}
	ws := make([]*account, len(acct.Windows))
	for i, w := range acct.Windows {
		ws[i] = m.windows.get(keyOf(acct.TokenID, w))
	}
	return ws
}

// Reserve implements Ledger.
func (m *Memory) Reserve(ctx context.Context, reqID string, acct Account, amount int64) error {
	if err := validateReserve(reqID, acct, amount); err != nil {
		return err
	}
	if len(acct.Windows) > 0 {
		m.sweepWindows(m.cfg.now())
	}
	for {
		u, t, ws, err := m.ensureAll(ctx, acct)
		if err != nil {
			return fmt.Errorf("reserve %s: %w", reqID, err)
		}
		hs := m.shard(reqID)
		hs.mu.Lock()
		now := m.cfg.now()
		m.sweepLocked(hs, now)
		_, held := hs.holds[reqID]
		_, settled := hs.settled[reqID]
		if held || settled {
			hs.mu.Unlock()
			return fmt.Errorf("reserve %s: %w", reqID, ErrDuplicateHold)
		}
		if !lockAccounts(u, t, ws...) {
			// Forgotten (or a window removed) between ensure and lock: load again.
			unlockAccounts(u, t, ws...)
			hs.mu.Unlock()
			continue
		}
		err = nil
		switch {
		case u.base-u.held < amount:
			err = ErrInsufficientUser
		case t != nil && t.base-t.held < amount:
			err = ErrInsufficientToken
		}
		for i, w := range ws {
			if err == nil && roomOf(acct.Windows[i].Limit, w.base, w.held) < amount {
				err = &BudgetError{Window: acct.Windows[i]}
			}
		}
		if err == nil {
			u.held += amount
			if t != nil {
				t.held += amount
			}
			for _, w := range ws {
				w.held += amount
			}
			hs.holds[reqID] = &memHold{acct: acct, amount: amount, expires: now.Add(m.cfg.holdTTL)}
		}
		unlockAccounts(u, t, ws...)
		hs.mu.Unlock()
		if err != nil {
			return fmt.Errorf("reserve %s: %w", reqID, err)
		}
		return nil
	}
}

// Settle implements Ledger.
func (m *Memory) Settle(ctx context.Context, reqID string, actual int64) (Settlement, error) {
	if err := validateSettle(reqID, actual); err != nil {
		return Settlement{}, err
	}
	hs := m.shard(reqID)
	for {
		hs.mu.Lock()
		if s, ok := hs.settled[reqID]; ok {
			hs.mu.Unlock()
			s.Duplicate = true
			return s, nil
		}
		h := hs.holds[reqID]
		hs.mu.Unlock()
		if h == nil {
			return Settlement{}, fmt.Errorf("settle %s: %w", reqID, ErrNoHold)
		}
		// The extra above the hold is bounded by live balances, so they must be loaded; load outside locks.
		u, t, ws, err := m.ensureAll(ctx, h.acct)
		if err != nil {
			return Settlement{}, fmt.Errorf("settle %s: %w", reqID, err)
		}

		hs.mu.Lock()
		if hs.holds[reqID] != h {
			hs.mu.Unlock() // settled, released or expired meanwhile: start over to report it correctly
			continue
		}
		if !m.cfg.now().Before(h.expires) {
			// Same as Redis: an expired hold is given back, not charged, and the request has nothing to settle.
			m.dropHoldLocked(hs, reqID, h)
			hs.mu.Unlock()
			return Settlement{}, fmt.Errorf("settle %s: hold expired: %w", reqID, ErrNoHold)
		}
		if !lockAccounts(u, t, ws...) {
			unlockAccounts(u, t, ws...)
			hs.mu.Unlock()
			continue
		}
		// The extra above the hold is bounded by the key's quota and by every window's room, the same way.
		var availT int64
		if t != nil {
			availT = t.base - t.held
		}
		for i, w := range ws {
			r := roomOf(h.acct.Windows[i].Limit, w.base, w.held)
			if t == nil && i == 0 || r < availT {
				availT = r
			}
		}
		charged, short := settleMath(h.amount, actual, u.base-u.held, availT, t != nil || len(ws) > 0)
		u.held -= h.amount
		u.base -= charged
		if t != nil {
			t.held -= h.amount
			t.base -= charged
		}
		for _, w := range ws {
			w.held -= h.amount
			w.base += charged
		}
		unlockAccounts(u, t, ws...)
		delete(hs.holds, reqID)
		s := Settlement{Held: h.amount, Charged: charged, Shortfall: short}
		m.rememberLocked(hs, reqID, s, m.cfg.now())
		hs.mu.Unlock()
		return s, nil
	}
}

// Release implements Ledger.
func (m *Memory) Release(_ context.Context, reqID string) error {
	hs := m.shard(reqID)
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if h := hs.holds[reqID]; h != nil {
		m.dropHoldLocked(hs, reqID, h)
	}
	return nil
}

// dropHoldLocked returns a hold's money to its accounts; hs.mu must be held. It does not need the accounts
// loaded: held is tracked even while base is forgotten.
func (m *Memory) dropHoldLocked(hs *holdShard, reqID string, h *memHold) {
	u := m.users.get(h.acct.UserID)
	var t *account
	if h.acct.TokenLimited {
		t = m.tokens.get(h.acct.TokenID)
	}
	ws := m.windowsOf(h.acct)
	lockAccounts(u, t, ws...)
	u.held -= h.amount
	if t != nil {
		t.held -= h.amount
	}
	for _, w := range ws {
		w.held -= h.amount
	}
	unlockAccounts(u, t, ws...)
	delete(hs.holds, reqID)
}

// sweepWindows removes the entries of windows whose period ended more than a hold's lifetime ago and that
// hold nothing, at most once per sweepEvery, so memory stays flat over months of daily windows. A hold's
// windows are never removed under it: an entry with money on hold is kept.
func (m *Memory) sweepWindows(now time.Time) {
	next := m.winSweep.Load()
	if now.UnixMilli() < next || !m.winSweep.CompareAndSwap(next, now.Add(sweepEvery).UnixMilli()) {
		return
	}
	cutoff := now.Add(-m.cfg.holdTTL).Unix()
	for i := range m.windows.shards {
		s := &m.windows.shards[i]
		s.mu.Lock()
		for k, a := range s.m {
			if k.end >= cutoff {
				continue
			}
			a.mu.Lock()
			if a.held == 0 && a.loading == nil {
				a.dead, a.loaded = true, false
				delete(s.m, k)
			}
			a.mu.Unlock()
		}
		s.mu.Unlock()
	}
}

// sweepLocked returns the money of expired holds (a request that crashed or forgot to settle) and evicts old
// settlements. It runs at most once per sweepEvery per shard, so the hot path pays for it rarely.
func (m *Memory) sweepLocked(hs *holdShard, now time.Time) {
	if now.Before(hs.nextSweep) {
		return
	}
	hs.nextSweep = now.Add(sweepEvery)
	for id, h := range hs.holds {
		if !now.Before(h.expires) {
			m.dropHoldLocked(hs, id, h)
		}
	}
	m.evictLocked(hs, now)
}

func (m *Memory) rememberLocked(hs *holdShard, reqID string, s Settlement, now time.Time) {
	hs.settled[reqID] = s
	hs.order = append(hs.order, settledEntry{reqID: reqID, at: now})
	m.evictLocked(hs, now)
}

// evictLocked drops settlements older than the TTL or beyond this shard's share of the size bound. order is
// a queue with a moving head, compacted only when half of it is dead, so eviction stays amortized O(1).
func (m *Memory) evictLocked(hs *holdShard, now time.Time) {
	limit := max(m.cfg.settledMax/shardCount, 1)
	for hs.head < len(hs.order) {
		e := hs.order[hs.head]
		if len(hs.order)-hs.head <= limit && now.Sub(e.at) < m.cfg.settledTTL {
			break
		}
		delete(hs.settled, e.reqID)
		hs.order[hs.head] = settledEntry{}
		hs.head++
	}
	if hs.head > 64 && hs.head*2 > len(hs.order) {
		hs.order = append(hs.order[:0], hs.order[hs.head:]...)
		hs.head = 0
	}
}

// UserBalance implements Ledger.
func (m *Memory) UserBalance(ctx context.Context, userID int64) (int64, error) {
	v, err := m.live(ctx, &m.users, userID)
	if err != nil {
		return 0, fmt.Errorf("user balance: %w", err)
	}
	return v, nil
}

// TokenRemain implements Ledger.
func (m *Memory) TokenRemain(ctx context.Context, tokenID int64) (int64, error) {
	v, err := m.live(ctx, &m.tokens, tokenID)
	if err != nil {
		return 0, fmt.Errorf("token remain: %w", err)
	}
	return v, nil
}

func (m *Memory) live(ctx context.Context, t *accountTable[int64], id int64) (int64, error) {
	for {
		a, err := t.ensure(ctx, id)
		if err != nil {
			return 0, err
		}
		a.mu.Lock()
		v, ok := a.base-a.held, a.loaded
		a.mu.Unlock()
		if ok {
			return v, nil
		}
	}
}

// AdjustUser implements Ledger.
func (m *Memory) AdjustUser(_ context.Context, userID, delta int64) error {
	a := m.users.peek(userID)
	if a == nil {
		return nil
	}
	a.mu.Lock()
	if a.loaded {
		a.base += delta
	}
	a.gen++ // a load in flight may have read SQL before the write this adjustment follows
	a.mu.Unlock()
	return nil
}

// SetToken implements Ledger.
func (m *Memory) SetToken(_ context.Context, tokenID int64, remain int64) error {
	a := m.tokens.get(tokenID)
	a.mu.Lock()
	a.base, a.loaded = remain, true
	a.gen++
	a.mu.Unlock()
	return nil
}

// Forget implements Ledger.
func (m *Memory) Forget(_ context.Context, userID, tokenID int64) error {
	forget := func(t *accountTable[int64], id int64) {
		if id == 0 {
			return
		}
		if a := t.peek(id); a != nil {
			a.mu.Lock()
			a.loaded, a.base = false, 0
			a.gen++
			a.mu.Unlock()
		}
	}
	forget(&m.users, userID)
	forget(&m.tokens, tokenID)
	return nil
}

// WindowSpent implements Ledger.
func (m *Memory) WindowSpent(_ context.Context, tokenID int64, w Window) (int64, bool, error) {
	a := m.windows.peek(keyOf(tokenID, w))
	if a == nil {
		return 0, false, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.base, a.loaded && !a.dead, nil
}

// ResetWindows implements Ledger.
func (m *Memory) ResetWindows(_ context.Context, tokenID int64, ws ...Window) error {
	for _, w := range ws {
		if a := m.windows.peek(keyOf(tokenID, w)); a != nil {
			a.mu.Lock()
			a.loaded, a.base = false, 0
			a.gen++
			a.mu.Unlock()
		}
	}
	return nil
}

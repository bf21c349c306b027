package ledger

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// Leased is the Redis ledger with node-local leases of balance: the shape that keeps Redis off the request path.
//
// A lease is a hold this node places on a user's balance in Redis (leaseScript: a hold like any other, so every
// other node sees that much less room and the sweep gives it back if this node dies). While a lease has room,
// Reserve, Settle and Release of that user's requests run in process, with no round trip: the request's hold
// comes out of the lease, its charge is added up locally, and a flusher sends the sum to Redis every FlushEvery
// in one script per lease, which charges it from the lease (held money is always chargeable in full) and
// resizes the lease: grown when the room got short, ended after IdleAfter without a request.
//
// Why no set of nodes can spend more than a balance: a node only admits a request from its lease when the
// lease's room — granted minus charged-not-yet-flushed minus outstanding holds — covers the hold, and the lease
// itself was granted out of the user's free balance (bal - held) in an atomic script, never more than half of it.
// So Σ leases + Σ holds ≤ bal at every instant in Redis, exactly as with per-request holds, and each charge is
// taken out of money already held. A charge above a request's hold takes from the lease's room first, then
// from Redis the ordinary way (an empty hold settled for the excess: up to what the user has, the rest short).
//
// What it costs: a node's charges reach Redis up to FlushEvery late (the node's own UserBalance counts them at
// once; another node's reading is that much behind), and a lease's unused room counts as held on other nodes
// until it ends (IdleAfter after the last request). A node that dies leaves its lease to the sweep (LeaseTTL)
// and its unflushed charges uncharged in Redis — the same requests' usage rows die with it in the writer's
// queue, so the live balance and the SQL book stay in agreement.
//
// A lease belongs to a user and, for a limited key, to that key too (leaseKey): a limited key's lease is held on
// both accounts and sized by the smaller free amount, so neither the balance nor the key's quota can be overspent.
// Only keys with a spend window (daily, monthly budget) go to Redis per request as before.
type Leased struct {
	*Redis
	node string
	opt  LeaseOptions

	mu      sync.Mutex
	leases  map[leaseKey]*lease
	holds   map[string]localHold // requests held by a lease
	direct  map[string]localHold // leaseable requests held in Redis (no lease had room), until settled
	settled map[string]Settlement
	// tight holds, for a user ({uid, 0}) or a limited key ({0, tid}), until when no lease is asked for: a
	// reservation was refused for want of money there (pruned by the flusher's sweep).
	tight map[leaseKey]time.Time
	order []string  // settled ids, oldest first, for the bound
	swept time.Time // the last sweep of local holds past the hold TTL

	wake   chan struct{}
	passed chan struct{} // closed when a flush pass ends (guarded by mu)
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
}

// LeaseOptions tunes the leases; zero fields take the defaults.
type LeaseOptions struct {
	FlushEvery time.Duration // how often local charges are sent (default 20 ms)
	IdleAfter  time.Duration // a lease without requests this long is ended (default 1 s)
	LeaseTTL   time.Duration // a lease not flushed this long is swept by any node (default 60 s)
	Multiple   int64         // a lease is sized to this many holds of the request that asked for it (default 32)
	SettledMax int           // local settlements remembered for duplicate Settle calls (default 65,536)
}

type lease struct {
	key                  leaseKey
	id                   string
	seq                  int64 // last flush applied
	granted              int64 // the lease's amount in Redis after the last flush
	pending              int64 // charged locally since the last flush
	outstanding          int64 // holds of local requests not yet settled or released
	reqs                 int   // local requests not yet settled or released (a zero hold adds nothing to outstanding)
	want                 int64 // the size the flusher grows the lease to
	free                 int64 // bal - held in Redis at the last flush (for a key's lease the smaller of the user's and the key's)
	lastUse, lastFlushed time.Time
	ends                 int64 // the lease's expiry score in Redis after the last flush (the ledger's clock, ms)
	fresh                bool  // not yet granted
	closing              bool  // being ended: takes no new request
	inflight             *flush
}

// flush is one flush sent and not yet known to have applied: retried as is (same seq, same amounts).
type flush struct {
	seq, charge, want int64
	ends              int64 // the expiry score it gives the lease, at least (ledger clock, ms; fixed when made, so a retry answered "already applied" is not credited with a later one)
}

type localHold struct {
	key    leaseKey
	amount int64
	at     time.Time // when it was made (the ledger's clock): after the hold TTL it is given back, as Redis would
}

// leaseKey names whose money a lease holds: the user's alone (tid 0: unlimited keys), or a limited key's quota
// and its user's balance together.
type leaseKey struct{ uid, tid int64 }

// leaseOf is the lease that would serve acct.
func leaseOf(acct Account) leaseKey {
	if acct.TokenLimited {
		return leaseKey{acct.UserID, acct.TokenID}
	}
	return leaseKey{uid: acct.UserID}
}

// account is what a request on this lease spends: for money taken outside the lease (Redis' ordinary way).
func (k leaseKey) account() Account {
	return Account{UserID: k.uid, TokenID: k.tid, TokenLimited: k.tid != 0}
}

// room is what a new request may still take from the lease: less when the user's free balance in Redis was
// below zero at the last flush (an admin took money back on another node: the lease covers that first).
// A flush in flight that shrinks the lease (a closing one: want below granted - charge) counts as applied, so
// that a Settle cannot take excess from room that flush is giving back to Redis.
func (l *lease) room() int64 {
	g := l.granted
	if f := l.inflight; f != nil && f.want+f.charge < g {
		g = f.want + f.charge
	}
	return g - l.pending - l.outstanding + min(l.free, 0)
}

// NewLeased wraps r; Start runs its flusher.
func NewLeased(r *Redis, opt LeaseOptions) *Leased {
	if opt.FlushEvery <= 0 {
		opt.FlushEvery = 20 * time.Millisecond
	}
	if opt.IdleAfter <= 0 {
		opt.IdleAfter = time.Second
	}
	if opt.LeaseTTL <= 0 {
		opt.LeaseTTL = time.Minute
	}
	if opt.Multiple <= 0 {
		opt.Multiple = 32
	}
	if opt.SettledMax <= 0 {
		opt.SettledMax = 1 << 16
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	return &Leased{Redis: r, node: hex.EncodeToString(b[:]), opt: opt, leases: map[leaseKey]*lease{},
		holds: map[string]localHold{}, direct: map[string]localHold{}, settled: map[string]Settlement{},
		tight: map[leaseKey]time.Time{},
		wake:  make(chan struct{}, 1), passed: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
}

var _ Ledger = (*Leased)(nil)

// Start runs the flusher until Close.
func (l *Leased) Start() *Leased {
	go l.run()
	return l
}

// Close sends what was charged locally and ends every lease that has no request outstanding (one with
// requests still outstanding is left to the sweep); a flush that keeps failing is reported.
func (l *Leased) Close(ctx context.Context) error {
	l.once.Do(func() { close(l.stop) })
	<-l.done
	l.mu.Lock()
	for _, ls := range l.leases {
		ls.closing = true
	}
	l.mu.Unlock()
	for range 3 {
		l.flushAll(ctx, true)
		l.mu.Lock()
		var unsent int64
		for _, ls := range l.leases {
			unsent += ls.pending
		}
		l.mu.Unlock()
		if unsent == 0 {
			return nil
		}
	}
	return errors.New("ledger: leases: charges not sent to Redis at close")
}

func leaseable(acct Account) bool { return len(acct.Windows) == 0 }

// Reserve implements Ledger: from the account's lease when it has room, else from Redis (and a lease is asked
// for).
func (l *Leased) Reserve(ctx context.Context, reqID string, acct Account, amount int64) error {
	if err := validateReserve(reqID, acct, amount); err != nil {
		return err
	}
	now, k := time.Now(), leaseOf(acct)
	if !leaseable(acct) {
		return l.reserveInRedis(ctx, reqID, acct, amount, k, now)
	}
	l.mu.Lock()
	l.expireLocked(reqID)
	if _, dup := l.holds[reqID]; dup {
		l.mu.Unlock()
		return fmt.Errorf("reserve %s: %w", reqID, ErrDuplicateHold)
	}
	if _, dup := l.settled[reqID]; dup {
		l.mu.Unlock()
		return fmt.Errorf("reserve %s: %w", reqID, ErrDuplicateHold)
	}
	if d, dup := l.direct[reqID]; dup {
		// Held in Redis, which alone knows whether that hold expired (and the id is free again).
		l.mu.Unlock()
		err := l.Redis.Reserve(ctx, reqID, acct, amount)
		if err == nil {
			l.mu.Lock()
			d.key, d.amount = k, amount
			l.direct[reqID] = d
			l.mu.Unlock()
		}
		return err
	}
	ls := l.leases[k]
	if l.usable(ls, amount) {
		ls.outstanding += amount
		ls.reqs++
		ls.lastUse = now
		if ls.room() < ls.granted/2 { // grow before it runs out
			ls.want = max(ls.want, 2*(ls.outstanding+ls.pending))
			l.poke()
		}
		l.holds[reqID] = localHold{key: k, amount: amount, at: l.cfg.now()}
		l.mu.Unlock()
		return nil
	}
	switch {
	case ls == nil && l.tightLocked(k, now):
		// Refused for want of money a moment ago: a new lease would hold half of what is left while other
		// requests are refused in Redis; per-request holds are exact.
	case ls == nil:
		// Asked for after the Redis call below, which loads the accounts the grant needs (a flusher that finds
		// them unloaded waits for that instead of loading them a second time).
		l.leases[k] = &lease{key: k, id: l.leaseID(k), fresh: true, want: l.opt.Multiple * max(amount, 1), lastUse: now}
		defer l.poke()
	case !ls.closing:
		ls.lastUse = now
		ls.want = max(ls.want, 2*(ls.outstanding+ls.pending+amount))
		l.poke()
	}
	l.mu.Unlock()
	err := l.reserveInRedis(ctx, reqID, acct, amount, k, now)
	if err == nil {
		l.mu.Lock()
		l.direct[reqID] = localHold{key: k, amount: amount}
		l.mu.Unlock()
	}
	return err
}

// reserveInRedis reserves the ordinary way. A refusal for want of money may only mean the free money is split
// between this node's leases and Redis, neither covering the hold alone: the leases that hold some of it give
// their room back (the user's balance short: every lease of the user; the key's quota short: only this key's
// lease) and Redis is asked again. No lease of that account is asked for meanwhile (tight), so what was given
// back stays in Redis.
func (l *Leased) reserveInRedis(ctx context.Context, reqID string, acct Account, amount int64, k leaseKey, now time.Time) error {
	err := l.Redis.Reserve(ctx, reqID, acct, amount)
	for range 3 {
		var tight leaseKey
		var holding func(leaseKey) bool
		switch {
		case errors.Is(err, ErrInsufficientUser):
			tight, holding = leaseKey{uid: k.uid}, func(x leaseKey) bool { return x.uid == k.uid }
		case errors.Is(err, ErrInsufficientToken):
			tight, holding = leaseKey{tid: k.tid}, func(x leaseKey) bool { return x == k }
		default:
			return err
		}
		l.markTight(tight, now)
		if !l.shrinkWhere(ctx, holding) {
			return err
		}
		err = l.Redis.Reserve(ctx, reqID, acct, amount)
	}
	return err
}

// usable reports whether ls may admit a request of amount now. Called with l.mu held.
func (l *Leased) usable(ls *lease, amount int64) bool {
	return ls != nil && !ls.closing && !ls.fresh && ls.room() >= amount && l.lends(ls)
}

// lends reports whether ls is far enough from its expiry score in Redis (the ledger's clock) to admit requests
// or lend room to a settlement's excess: a node stops drawing on a lease not flushed for half its TTL, so a
// charge made now reaches Redis before the sweep could take the lease.
func (l *Leased) lends(ls *lease) bool { return l.nowMS() < ls.ends-l.opt.LeaseTTL.Milliseconds()/2 }

// Covers reports whether a Reserve of amount on acct would be answered in process right now (a lease has
// room), so the caller need not overlap it with anything.
func (l *Leased) Covers(acct Account, amount int64) bool {
	if !leaseable(acct) {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.usable(l.leases[leaseOf(acct)], amount)
}

func (l *Leased) leaseID(k leaseKey) string {
	id := "lease:" + l.node + ":" + strconv.FormatInt(k.uid, 10)
	if k.tid != 0 {
		id += ":t" + strconv.FormatInt(k.tid, 10)
	}
	return id + ":" + strconv.FormatInt(time.Now().UnixNano(), 36)
}

func (l *Leased) poke() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Settle implements Ledger. A request held by a lease is charged in process: its hold in full when the cost is
// within it, the excess from the lease's room and then from Redis (up to what the user has; the rest short).
func (l *Leased) Settle(ctx context.Context, reqID string, actual int64) (Settlement, error) {
	if err := validateSettle(reqID, actual); err != nil {
		return Settlement{}, err
	}
	l.mu.Lock()
	if s, ok := l.settled[reqID]; ok {
		l.mu.Unlock()
		s.Duplicate = true
		return s, nil
	}
	if l.expireLocked(reqID) {
		l.mu.Unlock()
		return Settlement{}, fmt.Errorf("settle %s: %w", reqID, ErrNoHold)
	}
	h, ok := l.holds[reqID]
	if !ok {
		// A hold in Redis stays in direct until a settlement of it returns: a concurrent Settle of the same id
		// may be the one Redis applies, and this one then hears "duplicate" — whichever succeeds first records it
		// as settled, so a later Reserve of the id is refused here and not admitted from a lease.
		d, direct := l.direct[reqID]
		l.mu.Unlock()
		if direct && actual > d.amount {
			// The excess is taken from the free money in Redis: give the leases' room back first, or the
			// excess would fall short while money sits unused in them.
			l.shrink(ctx, d.key.uid)
		}
		s, err := l.Redis.Settle(ctx, reqID, actual)
		if direct {
			l.mu.Lock()
			delete(l.direct, reqID)
			if _, known := l.settled[reqID]; err == nil && !known {
				first := s
				first.Duplicate = false
				l.rememberLocked(reqID, first)
			}
			l.mu.Unlock()
		}
		return s, err
	}
	delete(l.holds, reqID)
	ls := l.leases[h.key]
	ls.outstanding -= h.amount
	ls.reqs--
	charge := min(actual, h.amount)
	ls.pending += charge // before room(): the hold just left outstanding and is spent (up to charge)
	extra := actual - charge
	take := int64(0)
	if l.lends(ls) {
		take = min(extra, max(ls.room(), 0))
	}
	ls.pending += take
	charge += take
	extra -= take
	s := Settlement{Held: h.amount, Charged: charge}
	if extra == 0 {
		l.rememberLocked(reqID, s)
	}
	l.mu.Unlock()
	if extra > 0 {
		more, err := l.chargeOutside(ctx, reqID, h.key, extra)
		if err != nil {
			slog.Error("ledger: charge above the lease failed", "request_id", reqID, "amount", extra, "err", err)
			more = Settlement{Shortfall: extra}
		}
		s.Charged += more.Charged
		s.Shortfall = more.Shortfall
		l.mu.Lock()
		l.rememberLocked(reqID, s)
		l.mu.Unlock()
	}
	return s, nil // the charge goes out with the lease's next flush
}

// chargeOutside takes amount from the lease's accounts in Redis the ordinary way: an empty hold settled for it
// (the part above a hold is taken up to what the user and a limited key have, the rest is short).
func (l *Leased) chargeOutside(ctx context.Context, reqID string, k leaseKey, amount int64) (Settlement, error) {
	id := reqID + "~over"
	if err := l.Redis.Reserve(ctx, id, k.account(), 0); err != nil {
		return Settlement{}, err
	}
	return l.Redis.Settle(ctx, id, amount)
}

func (l *Leased) rememberLocked(reqID string, s Settlement) {
	l.settled[reqID] = s
	l.order = append(l.order, reqID)
	if len(l.order) > l.opt.SettledMax+l.opt.SettledMax/4 { // evicted in chunks: one shift per SettledMax/4 settles
		drop := len(l.order) - l.opt.SettledMax
		for _, id := range l.order[:drop] {
			delete(l.settled, id)
		}
		l.order = append(l.order[:0], l.order[drop:]...)
	}
}

// Release implements Ledger.
func (l *Leased) Release(ctx context.Context, reqID string) error {
	l.mu.Lock()
	h, ok := l.holds[reqID]
	if ok {
		l.dropLocked(reqID, h)
	}
	l.mu.Unlock()
	if ok {
		return nil
	}
	l.mu.Lock()
	delete(l.direct, reqID)
	l.mu.Unlock()
	return l.Redis.Release(ctx, reqID)
}

package ledger

import (
	"context"
	"time"
)

// What touches a user's or a key's leases as a whole: giving their room back (shrink), reading balances through
// them, admin changes, local holds past the hold TTL, and accounts just refused for want of money (tight).

// shrink makes every lease of the user (its balance's and its limited keys') give its room back to Redis and
// send what it charged (they take no new request from then on) and waits for that flush; false when there was
// nothing to give or send. A key belongs to one user, so this also covers every lease of any of its keys.
func (l *Leased) shrink(ctx context.Context, uid int64) bool {
	return l.shrinkWhere(ctx, func(k leaseKey) bool { return k.uid == uid })
}

// shrinkToken is shrink for the leases of one limited key.
func (l *Leased) shrinkToken(ctx context.Context, tid int64) bool {
	return l.shrinkWhere(ctx, func(k leaseKey) bool { return k.tid == tid })
}

func (l *Leased) shrinkWhere(ctx context.Context, which func(leaseKey) bool) bool {
	l.mu.Lock()
	var mine []*lease
	for k, ls := range l.leases {
		if which(k) && (ls.fresh || ls.inflight != nil || ls.room() > 0 || ls.pending > 0) {
			ls.closing = true
			mine = append(mine, ls)
		}
	}
	if len(mine) == 0 {
		l.mu.Unlock()
		return false
	}
	for range 3 { // the pass in progress may have started before closing was set
		passed := l.passed
		l.mu.Unlock()
		l.poke()
		select {
		case <-passed:
		case <-ctx.Done():
			return false
		case <-l.done:
			return false
		}
		l.mu.Lock()
		given := true
		for _, ls := range mine {
			if l.leases[ls.key] == ls && (ls.inflight != nil || ls.granted > ls.pending+ls.outstanding) {
				given = false
			}
		}
		if given {
			break
		}
	}
	l.mu.Unlock()
	return true
}

// expireLocked gives back the local hold of reqID if it outlived the hold TTL (its request never settled nor
// released: a bug, a stuck handler), as Redis' sweep would; true if it did. Called with l.mu held.
func (l *Leased) expireLocked(reqID string) bool {
	h, ok := l.holds[reqID]
	if !ok || l.cfg.now().Sub(h.at) < l.cfg.holdTTL {
		return false
	}
	l.dropLocked(reqID, h)
	return true
}

// markTight keeps leases of an account (a user: {uid, 0}; a limited key: {0, tid}) from being asked for during
// IdleAfter after a reservation was refused for want of money on it.
func (l *Leased) markTight(acct leaseKey, now time.Time) {
	l.mu.Lock()
	l.tight[acct] = now.Add(l.opt.IdleAfter)
	l.mu.Unlock()
}

// tightLocked reports whether lease k may not be asked for now (its user or its key is tight). Called with l.mu
// held.
func (l *Leased) tightLocked(k leaseKey, now time.Time) bool {
	if now.Before(l.tight[leaseKey{uid: k.uid}]) {
		return true
	}
	return k.tid != 0 && now.Before(l.tight[leaseKey{tid: k.tid}])
}

// dropLocked ends a local hold without a charge. Called with l.mu held.
func (l *Leased) dropLocked(reqID string, h localHold) {
	delete(l.holds, reqID)
	ls := l.leases[h.key]
	ls.outstanding -= h.amount
	ls.reqs--
}

// sweepLocked gives back every local hold past the hold TTL, at most once per sweepEvery (as Memory's shards
// do). Called with l.mu held, by the flusher.
func (l *Leased) sweepLocked() {
	now := l.cfg.now()
	if now.Sub(l.swept) < sweepEvery {
		return
	}
	l.swept = now
	for a, until := range l.tight {
		if !time.Now().Before(until) {
			delete(l.tight, a)
		}
	}
	for id, h := range l.holds {
		if now.Sub(h.at) >= l.cfg.holdTTL {
			l.dropLocked(id, h)
		}
	}
}

// UserBalance implements Ledger: Redis' figure (bal - held) counts this node's leases of the user (its
// balance's and its limited keys') as held in whole; the part no local request holds or was charged (their
// room) is the user's.
func (l *Leased) UserBalance(ctx context.Context, userID int64) (int64, error) {
	return l.withRoom(ctx, func(k leaseKey) bool { return k.uid == userID },
		func() (int64, error) { return l.Redis.UserBalance(ctx, userID) })
}

// TokenRemain implements Ledger: as UserBalance, for the leases of one limited key.
func (l *Leased) TokenRemain(ctx context.Context, tokenID int64) (int64, error) {
	return l.withRoom(ctx, func(k leaseKey) bool { return k.tid == tokenID },
		func() (int64, error) { return l.Redis.TokenRemain(ctx, tokenID) })
}

// withRoom is Redis' figure (read) plus the room of the leases which selects. Redis is read while none of them
// has a flush in flight and none is applied meanwhile (a flush's resize would otherwise show before the node
// knows it); a lease asked for meanwhile adds nothing (its grant, if already in Redis, reads as held).
func (l *Leased) withRoom(ctx context.Context, which func(leaseKey) bool, read func() (int64, error)) (int64, error) {
	type seen struct {
		ls  *lease
		seq int64
	}
	for range 5 {
		l.mu.Lock()
		var mine []seen
		busy := false
		for k, ls := range l.leases {
			if which(k) {
				mine = append(mine, seen{ls, ls.seq})
				busy = busy || ls.inflight != nil
			}
		}
		if len(mine) == 0 {
			l.mu.Unlock()
			return read()
		}
		if busy {
			passed := l.passed
			l.mu.Unlock()
			select {
			case <-passed:
			case <-ctx.Done():
				return 0, ctx.Err()
			case <-time.After(time.Second):
			}
			continue
		}
		l.mu.Unlock()
		v, err := read()
		if err != nil {
			return 0, err
		}
		l.mu.Lock()
		same := true
		for _, m := range mine {
			ls := m.ls
			if l.leases[ls.key] != ls || ls.inflight != nil || ls.seq != m.seq {
				same = false
				break
			}
			// Redis' bal - held already has any deficit. A lease past its expiry score may have been swept: its
			// grant is not counted back (if it was not swept yet, Redis still counts it as held: the figure is
			// low, never high), while what it charged and holds locally still comes off.
			v -= ls.pending + ls.outstanding
			if l.nowMS() < ls.ends {
				v += ls.granted
			}
		}
		l.mu.Unlock()
		if same {
			return v, nil
		}
	}
	return read() // the leases kept flushing: Redis' figure, their room counted as held
}

// AdjustUser implements Ledger. Money taken back ends the user's leases' room first (then Redis sees it all), so
// a request is never admitted from a lease on money that is gone; other nodes learn it at their next flush.
func (l *Leased) AdjustUser(ctx context.Context, userID, delta int64) error {
	if err := l.Redis.AdjustUser(ctx, userID, delta); err != nil {
		return err
	}
	if delta < 0 {
		l.shrink(ctx, userID)
	}
	return nil
}

// SetToken implements Ledger. The key's leases give their room back first, as for money taken back: the owner
// may have lowered the quota.
func (l *Leased) SetToken(ctx context.Context, tokenID, remain int64) error {
	l.shrinkToken(ctx, tokenID) // unsent charges land on the old quota
	if err := l.Redis.SetToken(ctx, tokenID, remain); err != nil {
		return err
	}
	l.shrinkToken(ctx, tokenID) // a lease granted meanwhile from the old quota gives it back
	return nil
}

// Forget implements Ledger. The leases of the user and of the key first send their charges and give back their
// room (the reloaded balance may be lower): a charge still unsent when SQL is read again would be taken twice if
// SQL already had it, so only the old window remains (SQL reloaded before the log writer wrote a charge).
func (l *Leased) Forget(ctx context.Context, userID, tokenID int64) error {
	if userID != 0 {
		l.shrink(ctx, userID)
	}
	if tokenID != 0 {
		l.shrinkToken(ctx, tokenID)
	}
	return l.Redis.Forget(ctx, userID, tokenID)
}

package ledger

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// run flushes every FlushEvery while there are leases, and at once when a lease is asked for or must grow.
func (l *Leased) run() {
	defer close(l.done)
	t := time.NewTimer(l.opt.FlushEvery)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-l.wake:
		case <-t.C:
		}
		if l.flushAll(context.Background(), false) > 0 {
			t.Reset(l.opt.FlushEvery)
		} else {
			t.Stop() // nothing leased: sleep until a lease is asked for
		}
	}
}

// job is one lease's flush in one pass.
type job struct {
	ends  int64 // the expiry score this attempt gives the lease (ms): what Redis keeps when it applies it
	ls    *lease
	f     flush
	fresh bool
}

// flushAll sends one flush for every lease that has something to send (charges, a grant, growth, renewal, its
// end after IdleAfter without requests), pipelined in one round trip, and returns how many leases remain.
func (l *Leased) flushAll(ctx context.Context, closing bool) int {
	now := time.Now()
	var jobs []job
	l.mu.Lock()
	l.sweepLocked()
	for _, ls := range l.leases {
		if ls.inflight == nil {
			f, ok := l.nextFlush(ls, now, closing)
			if !ok {
				continue
			}
			ls.inflight = &f
		}
		jobs = append(jobs, job{ls: ls, f: *ls.inflight, fresh: ls.fresh})
	}
	l.mu.Unlock()
	if len(jobs) > 0 {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		l.send(ctx, jobs, now)
		cancel()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	close(l.passed) // wakes callers waiting for this pass (shrink)
	l.passed = make(chan struct{})
	return len(l.leases)
}

// nextFlush decides what a lease sends now, if anything. Called with l.mu held.
func (l *Leased) nextFlush(ls *lease, now time.Time, closing bool) (flush, bool) {
	f := flush{seq: ls.seq + 1, charge: ls.pending, ends: l.nowMS() + l.opt.LeaseTTL.Milliseconds()}
	if ls.reqs == 0 && (closing || now.Sub(ls.lastUse) >= l.opt.IdleAfter) {
		ls.closing = true
	}
	switch {
	case ls.closing:
		f.want = ls.outstanding // keep only what local requests still hold (0: end it)
	case ls.fresh:
		f.want = ls.want
	case ls.pending > 0 || ls.want > ls.granted || now.Sub(ls.lastFlushed) > l.opt.LeaseTTL/4:
		// Never below what local requests may still take: room ≥ 0 means pending + outstanding ≤ granted.
		f.want = max(ls.want, ls.granted-ls.pending)
	default:
		return flush{}, false
	}
	return f, true
}

// send runs the jobs' scripts in one pipeline (a script Redis does not know yet is loaded and run directly)
// and applies each answer.
func (l *Leased) send(ctx context.Context, jobs []job, now time.Time) {
	args := make([][]any, len(jobs))
	keys := make([][]string, len(jobs))
	for i, j := range jobs {
		fresh := "0"
		if j.fresh {
			fresh = "1"
		}
		keys[i] = []string{l.prefix + "hold:" + j.ls.id}
		at := l.nowMS() // the ledger's clock, as every other script's sweep uses
		jobs[i].ends = at + l.opt.LeaseTTL.Milliseconds()
		args[i] = []any{l.prefix, j.ls.id, j.ls.key.uid, j.f.seq, j.f.charge, j.f.want, at,
			jobs[i].ends, (l.opt.LeaseTTL + holdKeyGrace).Milliseconds(), l.cfg.sweepLimit,
			fresh, l.cfg.settledTTL.Milliseconds(), j.ls.key.tid}
	}
	cmds := make([]*redis.Cmd, len(jobs))
	_, _ = l.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range jobs {
			cmds[i] = leaseScript.EvalSha(ctx, p, keys[i], args[i]...)
		}
		return nil
	})
	for i, j := range jobs {
		res, err := cmds[i].Slice()
		if err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
			res, err = leaseScript.Run(ctx, l.rdb, keys[i], args[i]...).Slice()
		}
		if err != nil {
			slog.Warn("ledger: lease flush failed, retried on the next pass", "user", j.ls.key.uid, "token", j.ls.key.tid, "err", err)
			continue // inflight stays: the same flush is sent again
		}
		if asInt(res, 0) == -2 {
			if j.fresh { // the Reserve that asked for it loads its accounts itself: the grant waits a pass
				l.mu.Lock()
				j.ls.inflight = nil // nothing was applied (-2 comes first): the next pass decides afresh
				if j.ls.closing && j.ls.reqs == 0 && l.leases[j.ls.key] == j.ls {
					delete(l.leases, j.ls.key) // never granted, idle: nothing to send (it admitted nothing)
				}
				l.mu.Unlock()
				continue
			}
			kind, id := "u", j.ls.key.uid
			if asInt(res, 1) == 1 {
				kind, id = "t", j.ls.key.tid
			}
			if err := l.ensure(ctx, kind, id); err != nil {
				slog.Warn("ledger: lease flush: load account", "kind", kind, "id", id, "err", err)
			} else {
				l.poke() // loaded: send it again at once
			}
			continue
		}
		l.apply(j, res, now)
	}
}

// apply records a flush's answer.
func (l *Leased) apply(j job, res []any, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ls := j.ls
	ls.inflight = nil
	ls.seq = j.f.seq
	ls.pending -= j.f.charge
	switch code := asInt(res, 0); code {
	case 0, 1:
		if code == 0 && asInt(res, 2) != j.f.charge {
			slog.Error("ledger: lease held less than its node charged", "user", ls.key.uid, "token", ls.key.tid, "charge", j.f.charge, "charged", asInt(res, 2))
		}
		ls.granted, ls.lastFlushed, ls.fresh = asInt(res, 1), now, false
		ls.ends = j.ends // applied now: this attempt's score
		if code == 1 {
			ls.ends = j.f.ends // applied by an earlier attempt: its score is at least the first attempt's
		}
		if code == 0 {
			ls.free = asInt(res, 3)
		}
		ls.want = min(ls.want, ls.granted) // grown as far as the user allowed: ask again only when short again
	case -3:
		if taken := asInt(res, 1); taken < j.f.charge {
			slog.Error("ledger: lease lost before its charges were sent; taken from the free balance, the rest short",
				"user", ls.key.uid, "token", ls.key.tid, "charge", j.f.charge, "taken", taken)
		}
		ls.granted, ls.closing = 0, true
	default:
		slog.Error("ledger: lease flush: unexpected answer", "user", ls.key.uid, "token", ls.key.tid, "answer", res)
		ls.closing = true
	}
	if ls.granted == 0 && ls.reqs == 0 && ls.pending == 0 && l.leases[ls.key] == ls {
		delete(l.leases, ls.key)
	}
}

package ledger

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// gate blocks every pipeline (the flusher's) while armed, and says when one is waiting.
type gate struct {
	mu      sync.Mutex
	armed   bool
	after   bool
	release chan struct{}
	entered chan struct{}
}

func newGate() *gate { return &gate{release: make(chan struct{}), entered: make(chan struct{}, 16)} }

func (g *gate) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (g *gate) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (g *gate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		g.mu.Lock()
		armed := g.armed
		g.mu.Unlock()
		if armed && g.after { // the commands run in Redis; their answer is held back
			err := next(ctx, cmds)
			g.entered <- struct{}{}
			<-g.release
			return err
		}
		if armed {
			g.entered <- struct{}{}
			<-g.release
		}
		return next(ctx, cmds)
	}
}

// A local Settle that runs while a closing (shrinking) flush is in flight takes its excess from the lease's
// room as it was before the shrink; the flush then gives that room back to Redis, where another node spends
// it. The node reported the excess as Charged (and the caller writes it to SQL), but Redis never charges it.
func TestLeased_SettleDuringAShrinkTakesNoRoomBeingGivenBack(t *testing.T) {
	client := testRedisClient(t)
	prefix := testPrefix(t)
	const start = 10_000
	loader := newLoader()
	loader.set(start, 0)
	l := leasedOn(t, client, prefix, loader, LeaseOptions{FlushEvery: time.Hour, IdleAfter: time.Hour})
	other := NewRedis(testRedisClient(t), prefix, loader) // another node, per-request
	ctx := context.Background()
	var charged int64

	must(t, l.Reserve(ctx, "a", unlimited, 100)) // in Redis; the lease is granted at once (poked)
	waitLease(t, l, 100)
	s, err := l.Settle(ctx, "a", 100)
	must(t, err)
	charged += s.Charged
	must(t, l.Reserve(ctx, "r", unlimited, 10)) // from the lease

	g := newGate()
	client.AddHook(g)
	g.mu.Lock()
	g.armed = true
	g.mu.Unlock()
	shrunk := make(chan struct{})
	go func() { l.shrink(ctx, 1); close(shrunk) }() // e.g. an AdjustUser(<0) or a refused Redis reserve
	select {
	case <-g.entered: // the closing flush (want = outstanding = 10) is in flight
	case <-time.After(5 * time.Second):
		t.Fatal("no flush sent")
	}
	s, err = l.Settle(ctx, "r", 2000) // 10 held, 1990 above the hold: taken from the (old) room
	must(t, err)
	t.Logf("settle r while the closing flush is in flight: %+v", s)
	charged += s.Charged
	g.mu.Lock()
	g.armed = false
	g.mu.Unlock()
	close(g.release)
	<-shrunk

	// The lease gave its room back: another node spends the user's whole free balance.
	free, err := other.UserBalance(ctx, 1)
	must(t, err)
	must(t, other.Reserve(ctx, "big", unlimited, free))
	s, err = other.Settle(ctx, "big", free)
	must(t, err)
	charged += s.Charged

	must(t, l.Close(ctx))
	bal, held := redisUser(t, client, prefix)
	t.Logf("reported charged %d of start %d; Redis bal %d held %d", charged, start, bal, held)
	if charged > start {
		t.Errorf("settlements reported %d charged out of a balance of %d (overdraft in the SQL book)", charged, start)
	}
	if bal != start-charged {
		t.Errorf("Redis bal %d, want start - Σ charged = %d", bal, start-charged)
	}
}

// A zero hold (a free model: price 0) taken from a lease does not keep the lease alive; when the lease ends
// idle and is deleted, the request's Settle (or Release) dereferences a nil lease.
func TestLeased_ZeroHoldKeepsItsLeaseAlive(t *testing.T) {
	client := testRedisClient(t)
	prefix := testPrefix(t)
	loader := newLoader()
	loader.set(10_000, 0)
	l := leasedOn(t, client, prefix, loader, LeaseOptions{IdleAfter: 30 * time.Millisecond})
	ctx := context.Background()
	must(t, l.Reserve(ctx, "a", unlimited, 100))
	waitLease(t, l, 100)
	_, err := l.Settle(ctx, "a", 100)
	must(t, err)
	must(t, l.Reserve(ctx, "free", unlimited, 0))      // from the lease: outstanding stays 0
	deadline := time.Now().Add(500 * time.Millisecond) // ≫ IdleAfter: the request is still running
	for time.Now().Before(deadline) {
		l.mu.Lock()
		gone := l.leases[userLease] == nil
		l.mu.Unlock()
		if gone {
			t.Log("the lease ended and was deleted while a request still held from it")
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Errorf("Settle of a zero hold after its lease ended panicked: %v", p)
				l.mu.Unlock() // Settle panicked holding it; unlocked here only so that Cleanup's Close can run
			}
		}()
		s, err := l.Settle(ctx, "free", 0)
		t.Logf("settle: %+v %v", s, err)
	}()
}

// On the leasing node, UserBalance is Redis' bal - held plus the lease's room; but room() already subtracts the
// deficit Redis reported (free < 0), which Redis' bal - held also contains: the deficit is counted twice.
func TestLeased_UserBalanceCountsADeficitOnce(t *testing.T) {
	client := testRedisClient(t)
	prefix := testPrefix(t)
	loader := newLoader()
	loader.set(10_000, 0)
	l := leasedOn(t, client, prefix, loader, LeaseOptions{IdleAfter: time.Hour})
	other := NewRedis(client, prefix, loader)
	ctx := context.Background()
	must(t, l.Reserve(ctx, "a", unlimited, 100))
	waitLease(t, l, 100)
	_, err := l.Settle(ctx, "a", 100)
	must(t, err)
	must(t, other.AdjustUser(ctx, 1, -8000)) // an admin deduct served by another node
	must(t, l.Reserve(ctx, "b", unlimited, 10))
	_, err = l.Settle(ctx, "b", 10) // something to flush: the node learns the deficit
	must(t, err)
	deadline := time.Now().Add(3 * time.Second)
	for {
		l.mu.Lock()
		ls := l.leases[userLease]
		ok := ls != nil && ls.pending == 0 && ls.inflight == nil && ls.free < 0
		l.mu.Unlock()
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no flush")
		}
		time.Sleep(2 * time.Millisecond)
	}
	bal, held := redisUser(t, client, prefix)
	got, err := l.UserBalance(ctx, 1)
	must(t, err)
	want := int64(10_000 - 100 - 8000 - 10)
	t.Logf("Redis bal %d held %d (all of held is the lease); leasing node's UserBalance %d", bal, held, got)
	if got != want {
		t.Errorf("UserBalance on the leasing node %d, want %d (nothing held by any request)", got, want)
	}
}

var _ = fmt.Sprint

// Settle takes the excess above a request's hold from room(), computed after the hold left outstanding and
// before its charge entered pending: the request's own hold is counted as room a second time. With the lease
// full, a cost above the hold is "charged" from money nobody holds; the flush then finds the lease short.
func TestLeased_ExcessAboveAHoldComesFromRoomNotTheHold(t *testing.T) {
	client := testRedisClient(t)
	prefix := testPrefix(t)
	const start = 10_000
	loader := newLoader()
	loader.set(start, 0)
	l := leasedOn(t, client, prefix, loader, LeaseOptions{FlushEvery: time.Hour, IdleAfter: time.Hour})
	other := NewRedis(client, prefix, loader) // another node
	ctx := context.Background()
	var charged int64
	must(t, l.Reserve(ctx, "a", unlimited, 100))
	waitLease(t, l, 100)
	s, err := l.Settle(ctx, "a", 100)
	must(t, err)
	charged += s.Charged
	l.mu.Lock()
	granted := l.leases[userLease].granted
	l.mu.Unlock()
	free, err := other.UserBalance(ctx, 1)
	must(t, err)
	must(t, other.Reserve(ctx, "big", unlimited, free)) // another node holds all the rest
	must(t, l.Reserve(ctx, "r", unlimited, granted))    // the whole lease (asks for growth: none is left)
	time.Sleep(50 * time.Millisecond)                   // let that growth flush run
	s, err = l.Settle(ctx, "r", granted+100)
	must(t, err)
	t.Logf("lease %d; settle r (hold %d, cost %d): %+v", granted, granted, granted+100, s)
	charged += s.Charged
	s, err = other.Settle(ctx, "big", free)
	must(t, err)
	charged += s.Charged
	must(t, l.Close(ctx))
	bal, held := redisUser(t, client, prefix)
	t.Logf("reported charged %d of start %d; Redis bal %d held %d", charged, start, bal, held)
	if charged > start || bal != start-charged {
		t.Errorf("Σ Charged %d of a balance of %d; Redis bal %d, want %d", charged, start, bal, start-charged)
	}
}

// Reserve's duplicate check looks only at local holds and local settlements: an id held in Redis (direct) or
// settled there is admitted again from the lease, and charged again. (The contract tests check duplicates
// only on a limited key, which is never leased.)
func TestLeased_ReserveOfAnIdSettledInRedisIsADuplicate(t *testing.T) {
	client := testRedisClient(t)
	loader := newLoader()
	loader.set(10_000, 0)
	l := leasedOn(t, client, testPrefix(t), loader, LeaseOptions{IdleAfter: time.Hour})
	ctx := context.Background()
	must(t, l.Reserve(ctx, "held", unlimited, 100))  // in Redis: no lease yet
	must(t, l.Reserve(ctx, "held2", unlimited, 100)) // in Redis too (the lease is not granted yet)
	waitLease(t, l, 100)
	if err := l.Reserve(ctx, "held2", unlimited, 100); !errors.Is(err, ErrDuplicateHold) {
		t.Errorf("second reserve of an id held in Redis: %v, want ErrDuplicateHold", err)
	}
	s0, err := l.Settle(ctx, "held", 100) // settled in Redis
	must(t, err)
	t.Logf("first settle: %+v", s0)
	if err := l.Reserve(ctx, "held", unlimited, 100); !errors.Is(err, ErrDuplicateHold) {
		t.Errorf("reserve of an id settled in Redis: %v, want ErrDuplicateHold", err)
	}
	s, err := l.Settle(ctx, "held", 100)
	t.Logf("second settle: %+v %v", s, err)
	if err == nil && !s.Duplicate {
		t.Errorf("the id was charged twice")
	}
}

// UserBalance on a node whose first grant is in flight: the lease is still fresh locally, so the Redis figure is
// returned as is, but Redis already counts the granted lease as held. (Seen as a flaky contract failure:
// TestAdjustUser_WithOutstandingHolds/redis-leased "user 600 ... want user 1200".) The flusher is driven by hand.
func TestLeased_UserBalanceWhileTheGrantIsInFlight(t *testing.T) {
	client := testRedisClient(t)
	prefix := testPrefix(t)
	loader := newLoader()
	loader.set(10_000, 0)
	l := NewLeased(NewRedis(client, prefix, loader), LeaseOptions{}) // not started: this test is the flusher
	ctx := context.Background()
	must(t, l.Reserve(ctx, "a", unlimited, 100)) // in Redis; a fresh lease is asked for
	l.mu.Lock()
	ls := l.leases[userLease]
	f, _ := l.nextFlush(ls, time.Now(), false)
	ls.inflight = &f
	at := l.nowMS() // what send does, up to the answer
	j := job{ls: ls, f: f, fresh: true, ends: at + 60_000}
	l.mu.Unlock()
	res, err := leaseScript.Run(ctx, client, []string{prefix + "hold:" + ls.id}, prefix, ls.id, 1, f.seq, f.charge, f.want,
		at, at+60_000, 120_000, 64, "1", 3_600_000, 0).Slice()
	must(t, err)
	go func() { // the answer is applied 100 ms later, and the pass ends
		time.Sleep(100 * time.Millisecond)
		l.apply(j, res, time.Now())
		l.mu.Lock()
		close(l.passed)
		l.passed = make(chan struct{})
		l.mu.Unlock()
	}()
	v, err := l.UserBalance(ctx, 1)
	must(t, err)
	bal, held := redisUser(t, client, prefix)
	t.Logf("grant answer %v; Redis bal %d held %d; UserBalance %d", res, bal, held, v)
	if v != 10_000-100 {
		t.Errorf("UserBalance %d while the grant was in flight, want %d", v, 10_000-100)
	}
}

// Review of the limited-key leases: a fresh lease whose grant finds the accounts unloaded, asked for by a Reserve
// that never loaded them (its context was gone), used to stay in flight for ever (nothing marks it idle while a
// flush is in flight); it is dropped once idle.
func TestLeased_UngrantedIdleLeaseIsDropped(t *testing.T) {
	client := testRedisClient(t)
	loader := newLoader()
	loader.set(10_000, 10_000)
	l := leasedOn(t, client, testPrefix(t), loader, LeaseOptions{IdleAfter: 20 * time.Millisecond})
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Reserve(gone, "a", limited, 100); err == nil {
		t.Fatal("reserve with a cancelled context: no error")
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		l.mu.Lock()
		n := len(l.leases)
		l.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d leases left: the ungranted idle lease was not dropped", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A key's quota running out must not close the user's other leases: only the key's own lease holds its quota.
func TestLeased_KeyShortShrinksOnlyItsLease(t *testing.T) {
	client := testRedisClient(t)
	loader := newLoader()
	loader.set(1_000_000, 50)
	l := leasedOn(t, client, testPrefix(t), loader, LeaseOptions{IdleAfter: time.Hour})
	ctx := context.Background()
	must(t, l.Reserve(ctx, "u", unlimited, 100))
	waitLease(t, l, 100)
	if err := l.Reserve(ctx, "k", limited, 100); !errors.Is(err, ErrInsufficientToken) {
		t.Fatalf("reserve above the key's quota: %v, want ErrInsufficientToken", err)
	}
	l.mu.Lock()
	closing := l.leases[userLease].closing
	l.mu.Unlock()
	if closing {
		t.Fatal("the user's balance lease was closed because a key's quota ran short")
	}
}

// UserBalance with a lease past its expiry score (swept in Redis): what the lease charged and holds locally
// still comes off; only its grant is no longer counted back.
func TestLeased_BalanceOfASweptLeaseCountsItsLocalCharges(t *testing.T) {
	client := testRedisClient(t)
	loader := newLoader()
	loader.set(10_000, 0)
	clock := newClock()
	l := leasedOn(t, client, testPrefix(t), loader, LeaseOptions{FlushEvery: time.Hour, IdleAfter: time.Hour}, WithClock(clock.Now))
	ctx := context.Background()
	must(t, l.Reserve(ctx, "first", unlimited, 100))
	waitLease(t, l, 200)
	must(t, l.Release(ctx, "first"))
	must(t, l.Reserve(ctx, "h1", unlimited, 100))
	if _, err := l.Settle(ctx, "h1", 40); err != nil {
		t.Fatal(err)
	}
	must(t, l.Reserve(ctx, "h2", unlimited, 100))
	clock.Advance(2 * time.Minute) // past the lease's expiry score: the next script sweeps it
	if v, err := l.UserBalance(ctx, 1); err != nil || v != 10_000-40-100 {
		t.Fatalf("balance %d %v, want %d (Redis' figure less the lease's unsent charge and local hold)", v, err, 10_000-40-100)
	}
}

// The owner lowering a key's quota takes effect at once on the node that holds a lease of it: the lease gives
// its room back before and after the write, so no request is admitted from quota that is gone.
func TestLeased_SetTokenEndsTheKeysLeaseRoom(t *testing.T) {
	client := testRedisClient(t)
	loader := newLoader()
	loader.set(1_000_000, 100_000)
	l := leasedOn(t, client, testPrefix(t), loader, LeaseOptions{IdleAfter: time.Hour})
	ctx := context.Background()
	must(t, l.Reserve(ctx, "a", limited, 100))
	waitLeaseOf(t, l, keyLease, 100)
	must(t, l.Reserve(ctx, "b", limited, 100)) // from the lease
	if _, err := l.Settle(ctx, "b", 60); err != nil {
		t.Fatal(err)
	}
	must(t, l.SetToken(ctx, 1, 50))
	if err := l.Reserve(ctx, "c", limited, 100); !errors.Is(err, ErrInsufficientToken) {
		t.Fatalf("reserve of 100 after the quota was set to 50 (with 100 still held by a): %v, want ErrInsufficientToken", err)
	}
	if v, err := l.TokenRemain(ctx, 1); err != nil || v != 50-100 {
		t.Fatalf("key's remaining quota %d %v, want %d (the new quota less the outstanding hold of a)", v, err, 50-100)
	}
}

package ledger

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// callCounter counts the data commands a client sends (a pipeline counts each; a new connection's handshake,
// HELLO and CLIENT SETINFO, is not the ledger's).
type callCounter struct {
	n    atomic.Int64
	mu   sync.Mutex
	seen []string
}

func (c *callCounter) names() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprint(c.seen)
}

func (c *callCounter) count(cmd redis.Cmder) {
	switch cmd.Name() {
	case "hello", "client", "ping", "auth", "select":
	default:
		c.n.Add(1)
		c.mu.Lock()
		c.seen = append(c.seen, fmt.Sprint(cmd.Args()))
		c.mu.Unlock()
	}
}
func (c *callCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *callCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { c.count(cmd); return next(ctx, cmd) }
}
func (c *callCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			c.count(cmd)
		}
		return next(ctx, cmds)
	}
}

// leasedOn builds a leased node over client and prefix (two nodes share both), flushed every 5 ms.
func leasedOn(t *testing.T, client *redis.Client, prefix string, loader Loader, lo LeaseOptions, opts ...Option) *Leased {
	t.Helper()
	if lo.FlushEvery == 0 {
		lo.FlushEvery = 5 * time.Millisecond
	}
	l := NewLeased(NewRedis(client, prefix, loader, opts...), lo).Start()
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	return l
}

// waitLease waits until the node has granted itself a lease for user 1 with at least min of room.
func waitLease(t *testing.T, l *Leased, min int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		l.mu.Lock()
		ls := l.leases[1]
		ok := ls != nil && !ls.fresh && !ls.closing && ls.room() >= min
		l.mu.Unlock()
		if ok {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("no lease with room %d for user 1", min)
}

// redisUser reads the user's bal and held straight from Redis.
func redisUser(t *testing.T, client *redis.Client, prefix string) (bal, held int64) {
	t.Helper()
	v, err := client.HMGet(context.Background(), prefix+"bal:u:1", "bal", "held").Result()
	must(t, err)
	var b, h int64
	if v[0] != nil {
		fmt.Sscan(v[0].(string), &b)
	}
	if v[1] != nil {
		fmt.Sscan(v[1].(string), &h)
	}
	return b, h
}

func TestLeased_RequestsFromALeaseSendNothingToRedis(t *testing.T) {
	client := testRedisClient(t)
	loader := newLoader()
	loader.set(1_000_000, 0)
	// A long flush interval: nothing is sent by the flusher while the requests run.
	l := leasedOn(t, client, testPrefix(t), loader, LeaseOptions{FlushEvery: time.Hour, IdleAfter: time.Hour})
	ctx := context.Background()
	must(t, l.Reserve(ctx, "first", unlimited, 100)) // in Redis; asks for a lease (granted at once: poked)
	waitLease(t, l, 100)

	if !l.Covers(unlimited, 100) || l.Covers(unlimited, 1_000_000) || l.Covers(limited, 100) {
		t.Fatalf("Covers: %v for 100 (want true), %v for 1,000,000 and %v for a limited key (want false)",
			l.Covers(unlimited, 100), l.Covers(unlimited, 1_000_000), l.Covers(limited, 100))
	}

	var calls callCounter
	client.AddHook(&calls)
	for i := range 20 { // 20 × 40 charged stays below half the lease (3,200): no growth, so no flush
		id := fmt.Sprintf("r%d", i)
		must(t, l.Reserve(ctx, id, unlimited, 100))
		if s, err := l.Settle(ctx, id, 40); err != nil || s.Charged != 40 || s.Held != 100 {
			t.Fatalf("settle %s: %+v %v", id, s, err)
		}
	}
	must(t, l.Reserve(ctx, "released", unlimited, 100))
	must(t, l.Release(ctx, "released"))
	if n := calls.n.Load(); n != 0 {
		t.Fatalf("20 leased requests sent %d commands to Redis, want 0 (%s)", n, calls.names())
	}
	// The node's own balance counts its unsent charges at once.
	if _, err := l.Settle(ctx, "first", 100); err != nil {
		t.Fatal(err)
	}
	if v, err := l.UserBalance(ctx, 1); err != nil || v != 1_000_000-100-20*40 {
		t.Fatalf("balance %d %v, want %d", v, err, 1_000_000-100-20*40)
	}
}

func TestLeased_TwoNodesNeverSpendMoreThanTheBalance(t *testing.T) {
	// Two nodes share one user's balance; each spends through its lease and through Redis, with costs below,
	// at and above the holds. At no instant may the balance go below zero; at the end Redis' balance is
	// exactly the start minus every settlement's charge, and no money stays held.
	client := testRedisClient(t)
	prefix := testPrefix(t)
	const start = 200_000
	loader := newLoader()
	loader.set(start, 0)
	lo := LeaseOptions{IdleAfter: 50 * time.Millisecond}
	nodes := []*Leased{leasedOn(t, client, prefix, loader, lo), leasedOn(t, client, prefix, loader, lo)}
	ctx := context.Background()

	stop := make(chan struct{})
	watched := make(chan string, 1)
	go func() { // Redis' own figures: bal never below zero, bal - held never below zero
		defer close(watched)
		for {
			select {
			case <-stop:
				return
			default:
			}
			bal, held := redisUser(t, client, prefix)
			if bal < 0 || (bal != 0 && bal-held < 0) {
				watched <- fmt.Sprintf("bal %d held %d", bal, held)
				return
			}
		}
	}()

	var charged, refused atomic.Int64
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			node := nodes[w%2]
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := range 150 {
				id := fmt.Sprintf("w%d-%d", w, i)
				hold := 50 + rng.Int64N(400)
				if err := node.Reserve(ctx, id, unlimited, hold); err != nil {
					refused.Add(1)
					continue
				}
				if rng.IntN(10) == 0 {
					must(t, node.Release(ctx, id))
					continue
				}
				actual := hold * (50 + rng.Int64N(100)) / 100 // half the hold to one and a half times it
				s, err := node.Settle(ctx, id, actual)
				if err != nil {
					t.Errorf("settle %s: %v", id, err)
					return
				}
				if s.Charged+s.Shortfall != actual {
					t.Errorf("settle %s: %+v, actual %d", id, s, actual)
				}
				charged.Add(s.Charged)
			}
		}()
	}
	wg.Wait()
	for _, n := range nodes {
		must(t, n.Close(ctx))
	}
	close(stop)
	if msg, bad := <-watched; bad {
		t.Fatalf("overdraft seen in Redis: %s", msg)
	}
	bal, held := redisUser(t, client, prefix)
	if bal != start-charged.Load() || held != 0 {
		t.Fatalf("Redis bal %d held %d; want bal %d (start %d - charged %d), held 0", bal, held, start-charged.Load(), start, charged.Load())
	}
	if refused.Load() == 0 || charged.Load() < start*9/10 {
		t.Fatalf("the run should drain the balance: charged %d of %d, %d refused", charged.Load(), start, refused.Load())
	}
}

func TestLeased_IdleLeaseIsGivenBack(t *testing.T) {
	client := testRedisClient(t)
	prefix := testPrefix(t)
	loader := newLoader()
	loader.set(100_000, 0)
	l := leasedOn(t, client, prefix, loader, LeaseOptions{IdleAfter: 30 * time.Millisecond})
	ctx := context.Background()
	must(t, l.Reserve(ctx, "a", unlimited, 100))
	waitLease(t, l, 100)
	must(t, l.Reserve(ctx, "b", unlimited, 100))
	if _, held := redisUser(t, client, prefix); held <= 200 {
		t.Fatalf("held %d: want the request's hold plus a lease", held)
	}
	_, _ = l.Settle(ctx, "a", 70)
	_, _ = l.Settle(ctx, "b", 30)
	deadline := time.Now().Add(3 * time.Second)
	for {
		bal, held := redisUser(t, client, prefix)
		if held == 0 && bal == 100_000-100 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after idle: bal %d held %d, want %d and 0", bal, held, 100_000-100)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n, _ := client.Keys(ctx, prefix+"hold:*").Result(); len(n) != 0 {
		t.Fatalf("hold keys left: %v", n)
	}
}

func TestLeased_LeaseOfADeadNodeIsSweptByAnother(t *testing.T) {
	client := testRedisClient(t)
	prefix := testPrefix(t)
	loader := newLoader()
	loader.set(10_000, 0)
	clock := newClock()
	dead := NewLeased(NewRedis(client, prefix, loader, WithClock(clock.Now)), LeaseOptions{FlushEvery: 5 * time.Millisecond, LeaseTTL: time.Minute}).Start()
	ctx := context.Background()
	must(t, dead.Reserve(ctx, "a", unlimited, 100))
	waitLease(t, dead, 100)
	must(t, dead.Reserve(ctx, "b", unlimited, 100)) // from the lease; never settled: the node dies
	dead.once.Do(func() { close(dead.stop) })
	<-dead.done

	other := leasedOn(t, client, prefix, loader, LeaseOptions{}, WithClock(clock.Now))
	if v, _ := other.UserBalance(ctx, 1); v >= 10_000-100 {
		t.Fatalf("the dead node's lease should still count as held: balance %d", v)
	}
	clock.Advance(2 * time.Minute) // past the lease's expiry (and not the request hold's 2 h)
	if v, err := other.UserBalance(ctx, 1); err != nil || v != 10_000-100 {
		t.Fatalf("after the lease expired: balance %d %v, want %d (only the Redis hold of a)", v, err, 10_000-100)
	}
}

func TestLeased_FlushRetriedAfterAnAmbiguousFailureChargesOnce(t *testing.T) {
	client := testRedisClient(t)
	prefix := testPrefix(t)
	loader := newLoader()
	loader.set(10_000, 0)
	r := NewRedis(client, prefix, loader)
	ctx := context.Background()
	must(t, r.ensure(ctx, "u", 1))
	run := func(seq, charge, want int64, fresh string) []any {
		now := r.nowMS()
		res, err := leaseScript.Run(ctx, client, []string{prefix + "hold:L"}, prefix, "L", 1, seq, charge, want, now,
			now+60_000, 120_000, 64, fresh, 3_600_000).Slice()
		must(t, err)
		return res
	}
	if res := run(1, 0, 4000, "1"); asInt(res, 1) != 4000 {
		t.Fatalf("grant: %v", res)
	}
	run(2, 700, 4000, "0")
	if res := run(2, 700, 4000, "0"); asInt(res, 0) != 1 { // the same flush again: recognised, not charged
		t.Fatalf("repeat: %v", res)
	}
	if bal, held := redisUser(t, client, prefix); bal != 10_000-700 || held != 4000 {
		t.Fatalf("bal %d held %d, want %d and 4000 (grown back to want)", bal, held, 10_000-700)
	}
	run(3, 100, 0, "0") // ends it
	if res := run(3, 100, 0, "0"); asInt(res, 0) != 1 {
		t.Fatalf("repeat after the end: %v", res)
	}
	if bal, held := redisUser(t, client, prefix); bal != 10_000-800 || held != 0 {
		t.Fatalf("bal %d held %d, want %d and 0", bal, held, 10_000-800)
	}
	// A flush for a lease Redis no longer has (swept, lost): the charge comes out of the free balance.
	if res := run(4, 50, 0, "0"); asInt(res, 0) != -3 || asInt(res, 1) != 50 {
		t.Fatalf("lost lease: %v", res)
	}
	if bal, _ := redisUser(t, client, prefix); bal != 10_000-850 {
		t.Fatalf("bal %d, want %d", bal, 10_000-850)
	}
}

func TestLeased_LimitedKeysAndBudgetsStayPerRequest(t *testing.T) {
	client := testRedisClient(t)
	loader := newLoader()
	loader.set(100_000, 100_000)
	l := leasedOn(t, client, testPrefix(t), loader, LeaseOptions{})
	ctx := context.Background()
	must(t, l.Reserve(ctx, "a", limited, 100))
	l.mu.Lock()
	n := len(l.leases)
	l.mu.Unlock()
	if n != 0 {
		t.Fatalf("a limited key's request asked for a lease")
	}
	wantBalances(t, l, 100_000-100, 100_000-100)
}

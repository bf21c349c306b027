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

// userLease and keyLease are the leases of user 1's balance alone and of its limited key 1.
var userLease, keyLease = leaseOf(unlimited), leaseOf(limited)

// waitLease waits until the node has granted itself a lease for user 1 with at least min of room.
func waitLease(t *testing.T, l *Leased, min int64) {
	t.Helper()
	waitLeaseOf(t, l, userLease, min)
}

// waitLeaseOf waits until the node has granted itself lease k with at least min of room.
func waitLeaseOf(t *testing.T, l *Leased, k leaseKey, min int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		l.mu.Lock()
		ls := l.leases[k]
		ok := ls != nil && !ls.fresh && !ls.closing && ls.room() >= min
		l.mu.Unlock()
		if ok {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("no lease %+v with room %d", k, min)
}

// redisUser reads the user's bal and held straight from Redis.
func redisUser(t *testing.T, client *redis.Client, prefix string) (bal, held int64) {
	t.Helper()
	return redisAcct(t, client, prefix, "u")
}

// redisAcct reads user 1's ("u") or key 1's ("t") bal and held straight from Redis.
func redisAcct(t *testing.T, client *redis.Client, prefix, kind string) (bal, held int64) {
	t.Helper()
	v, err := client.HMGet(context.Background(), prefix+"bal:"+kind+":1", "bal", "held").Result()
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
	t.Run("unlimited key", func(t *testing.T) { sendsNothing(t, unlimited, limited) })
	t.Run("limited key", func(t *testing.T) { sendsNothing(t, limited, unlimited) })
}

// sendsNothing: once acct's lease is granted, its requests reserve, settle and release with no Redis command,
// and the node's balances count the unsent charges at once; other (an account of another lease) is not covered.
func sendsNothing(t *testing.T, acct, other Account) {
	client := testRedisClient(t)
	loader := newLoader()
	loader.set(1_000_000, 500_000)
	// A long flush interval: nothing is sent by the flusher while the requests run.
	l := leasedOn(t, client, testPrefix(t), loader, LeaseOptions{FlushEvery: time.Hour, IdleAfter: time.Hour})
	ctx := context.Background()
	must(t, l.Reserve(ctx, "first", acct, 100)) // in Redis; asks for a lease (granted at once: poked)
	waitLeaseOf(t, l, leaseOf(acct), 100)

	if !l.Covers(acct, 100) || l.Covers(acct, 1_000_000) || l.Covers(other, 100) {
		t.Fatalf("Covers: %v for 100 (want true), %v for 1,000,000 and %v for another lease's account (want false)",
			l.Covers(acct, 100), l.Covers(acct, 1_000_000), l.Covers(other, 100))
	}

	var calls callCounter
	client.AddHook(&calls)
	for i := range 20 { // 20 × 40 charged stays below half the lease (3,200): no growth, so no flush
		id := fmt.Sprintf("r%d", i)
		must(t, l.Reserve(ctx, id, acct, 100))
		if s, err := l.Settle(ctx, id, 40); err != nil || s.Charged != 40 || s.Held != 100 {
			t.Fatalf("settle %s: %+v %v", id, s, err)
		}
	}
	must(t, l.Reserve(ctx, "released", acct, 100))
	must(t, l.Release(ctx, "released"))
	if n := calls.n.Load(); n != 0 {
		t.Fatalf("20 leased requests sent %d commands to Redis, want 0 (%s)", n, calls.names())
	}
	// The node's own balances count its unsent charges at once.
	if _, err := l.Settle(ctx, "first", 100); err != nil {
		t.Fatal(err)
	}
	if v, err := l.UserBalance(ctx, 1); err != nil || v != 1_000_000-100-20*40 {
		t.Fatalf("balance %d %v, want %d", v, err, 1_000_000-100-20*40)
	}
	if acct.TokenLimited {
		if v, err := l.TokenRemain(ctx, 1); err != nil || v != 500_000-100-20*40 {
			t.Fatalf("key's remaining quota %d %v, want %d", v, err, 500_000-100-20*40)
		}
	}
}

func TestLeased_TwoNodesNeverSpendMoreThanTheBalance(t *testing.T) {
	drainTogether(t, []Account{unlimited}, 200_000, 0, "u")
}

func TestLeased_TwoNodesNeverSpendMoreThanAKeysQuota(t *testing.T) {
	drainTogether(t, []Account{limited}, 10_000_000, 200_000, "t")
}

func TestLeased_KeysOfOneUserShareItsBalance(t *testing.T) {
	// A limited key with more quota than the user has, and an unlimited key: their leases (and per-request
	// holds) take from one balance.
	drainTogether(t, []Account{limited, unlimited}, 200_000, 10_000_000, "u")
}

// drainTogether: two nodes share one user (and its key 1); 16 workers spend through their leases and through
// Redis, on the accounts given in turn, with costs below, at and above the holds, until the binding account
// ("u": the user's balance, "t": key 1's quota) is drained. At no instant may a balance go below zero; at the
// end Redis' balances are exactly the start minus every settlement's charge (the key's only counting its own
// requests), and no money stays held.
func drainTogether(t *testing.T, accts []Account, user, token int64, binding string) {
	client := testRedisClient(t)
	prefix := testPrefix(t)
	loader := newLoader()
	loader.set(user, token)
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
			for _, kind := range []string{"u", "t"} {
				bal, held := redisAcct(t, client, prefix, kind)
				if bal < 0 || (bal != 0 && bal-held < 0) {
					watched <- fmt.Sprintf("%s: bal %d held %d", kind, bal, held)
					return
				}
			}
		}
	}()

	var charged, keyCharged, refused atomic.Int64
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			node := nodes[w%2]
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := range 150 {
				id := fmt.Sprintf("w%d-%d", w, i)
				acct := accts[(w/2+i)%len(accts)]
				hold := 50 + rng.Int64N(400)
				if err := node.Reserve(ctx, id, acct, hold); err != nil {
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
				if acct.TokenLimited {
					keyCharged.Add(s.Charged)
				}
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
	if bal, held := redisAcct(t, client, prefix, "u"); bal != user-charged.Load() || held != 0 {
		t.Fatalf("Redis user bal %d held %d; want bal %d (start %d - charged %d), held 0", bal, held, user-charged.Load(), user, charged.Load())
	}
	if bal, held := redisAcct(t, client, prefix, "t"); token > 0 && (bal != token-keyCharged.Load() || held != 0) {
		t.Fatalf("Redis key bal %d held %d; want bal %d (start %d - charged %d), held 0", bal, held, token-keyCharged.Load(), token, keyCharged.Load())
	}
	start, spent := user, charged.Load()
	if binding == "t" {
		start, spent = token, keyCharged.Load()
	}
	if refused.Load() == 0 || spent < start*9/10 {
		t.Fatalf("the run should drain the %s account: charged %d of %d, %d refused", binding, spent, start, refused.Load())
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
			now+60_000, 120_000, 64, fresh, 3_600_000, 0).Slice()
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

func TestLeased_BudgetsStayPerRequest(t *testing.T) {
	client := testRedisClient(t)
	loader := newLoader()
	loader.set(100_000, 100_000)
	l := leasedOn(t, client, testPrefix(t), loader, LeaseOptions{})
	ctx := context.Background()
	budget := Account{UserID: 1, TokenID: 1, TokenLimited: true, Windows: Budgets(time.Now(), 50_000, 0)}
	must(t, l.Reserve(ctx, "a", budget, 100))
	l.mu.Lock()
	n := len(l.leases)
	l.mu.Unlock()
	if n != 0 {
		t.Fatalf("a request on a key with a budget asked for a lease")
	}
	if l.Covers(budget, 1) {
		t.Fatal("Covers a key with a budget")
	}
	wantBalances(t, l, 100_000-100, 100_000-100)
}

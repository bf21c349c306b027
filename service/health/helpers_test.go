package health

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"tollgate/service/bus"
	"tollgate/service/cache"
)

// fakeClock is the injected clock; tests move it by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// testConfig is small enough to reason about in a test: 5 consecutive or ≥50 % of ≥5 trip; cooldown
// 30 s doubling to a 2 min cap.
func testConfig() Config {
	return Config{
		Window: time.Minute, MinRequests: 5, FailureRatio: 0.5, ConsecutiveFails: 5,
		BaseCooldown: 30 * time.Second, MaxCooldown: 2 * time.Minute, HalfOpenProbes: 1, CloseAfter: 2,
		RateLimitCooldown: 30 * time.Second, AuthDisable: 24 * time.Hour, ModelDisable: 24 * time.Hour,
	}
}

// newSolo is a single node with a memory cache and bus.
func newSolo(t *testing.T, cfg Config) (*Tracker, *fakeClock) {
	t.Helper()
	clk := newClock()
	return New(cfg, cache.NewMemory(), bus.NewMemory(), clk.Now), clk
}

func fail(tr *Tracker, ch int64, key int, class Class, n int) {
	for range n {
		tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: ch, Key: key, Class: class, Status: 500})
	}
}

// cluster builds Tracker nodes that share one cache and one bus, in memory or on Redis.
type cluster struct {
	name  string
	cache cache.Cache
	// newBus returns the bus a new node subscribes to; start runs after the node subscribed.
	newBus func(t *testing.T) bus.Bus
	// deafBus returns a bus that shares nothing with the cluster's.
	deafBus func(t *testing.T) bus.Bus
	clk     *fakeClock
	skip    string // why this backend cannot run here
}

// run runs f as a subtest per cluster, skipping loudly a backend that is unreachable.
func run(t *testing.T, f func(t *testing.T, c *cluster)) {
	for _, c := range clusters(t) {
		t.Run(c.name, func(t *testing.T) {
			if c.skip != "" {
				t.Skip(c.skip)
			}
			f(t, c)
		})
	}
}

func (c *cluster) node(t *testing.T, cfg Config) *Tracker {
	t.Helper()
	b := c.newBus(t)
	tr := New(cfg, c.cache, b, c.clk.Now)
	if err := b.Start(context.Background()); err != nil {
		t.Fatalf("bus start: %v", err)
	}
	return tr
}

// clusters returns the memory cluster and, when Redis answers, the Redis cluster.
func clusters(t *testing.T) []*cluster {
	t.Helper()
	mb := bus.NewMemory()
	out := []*cluster{{
		name: "memory", cache: cache.NewMemory(), clk: newClock(),
		newBus:  func(*testing.T) bus.Bus { return mb },
		deafBus: func(*testing.T) bus.Bus { return bus.NewMemory() },
	}}
	rc, why := redisClient(t)
	if rc == nil {
		out = append(out, &cluster{name: "redis", skip: why})
	} else {
		prefix := randomPrefix()
		t.Cleanup(func() { dropPrefix(rc, prefix) })
		out = append(out, &cluster{
			name: "redis", cache: cache.NewRedis(rc, prefix), clk: newClock(),
			newBus: func(t *testing.T) bus.Bus {
				b := bus.NewRedis(rc, prefix, 200*time.Millisecond)
				t.Cleanup(func() { _ = b.Close() })
				return b
			},
			deafBus: func(t *testing.T) bus.Bus {
				other := randomPrefix()
				t.Cleanup(func() { dropPrefix(rc, other) })
				b := bus.NewRedis(rc, other, 200*time.Millisecond)
				t.Cleanup(func() { _ = b.Close() })
				return b
			},
		})
	}
	return out
}

// redisClient connects to REDIS_URL (default 127.0.0.1:6379, DB 15 unless the URL names one). It returns
// nil and the reason when Redis is unreachable, so the memory cases still run and the Redis ones skip loudly.
func redisClient(t *testing.T) (*redis.Client, string) {
	t.Helper()
	opt := &redis.Options{Addr: "127.0.0.1:6379", DB: 15}
	if url := os.Getenv("REDIS_URL"); url != "" {
		parsed, err := redis.ParseURL(url)
		if err != nil {
			t.Fatalf("REDIS_URL: %v", err)
		}
		opt = parsed
		if opt.DB == 0 {
			opt.DB = 15
		}
	}
	c := redis.NewClient(opt)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Sprintf("SKIPPING REDIS CASES: Redis at %s unreachable: %v", opt.Addr, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, ""
}

func randomPrefix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "test:health:" + hex.EncodeToString(b[:]) + ":"
}

func dropPrefix(c *redis.Client, prefix string) {
	ctx := context.Background()
	iter := c.Scan(ctx, 0, prefix+"*", 100).Iterator()
	for iter.Next(ctx) {
		c.Del(ctx, iter.Val())
	}
}

// eventually polls cond for up to d of real time.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// countingCache counts reads, to pin down how often the hot path touches the network.
type countingCache struct {
	cache.Cache
	gets atomic.Int64
}

func (c *countingCache) Get(ctx context.Context, key string) ([]byte, bool, error) {
	c.gets.Add(1)
	return c.Cache.Get(ctx, key)
}

package cache

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// testRedis connects to REDIS_URL (or 127.0.0.1:6379 DB 15) and returns a client and a fresh key prefix
// whose keys are removed when the test ends; it skips when no Redis answers.
func testRedis(t *testing.T) (*redis.Client, string) {
	t.Helper()
	url := os.Getenv("REDIS_URL")
	if url == "" {
		url = "redis://127.0.0.1:6379/15"
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("REDIS_URL: %v", err)
	}
	c := redis.NewClient(opt)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		if os.Getenv("TOLLGATE_TEST_REDIS_URL") != "" {
			t.Fatalf("redis %s: %v", url, err)
		}
		t.Skipf("no Redis at %s (%v): the Redis cache suite did not run", url, err)
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	prefix := "tgcache" + hex.EncodeToString(b) + ":"
	t.Cleanup(func() {
		ctx := context.Background()
		keys, _ := c.Keys(ctx, prefix+"*").Result()
		if len(keys) > 0 {
			c.Del(ctx, keys...)
		}
		c.Close()
	})
	return c, prefix
}

// fakeClock is a settable clock for Memory.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) Advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.mu.Unlock()
}

// impl is one Cache under test and how to let time pass for it.
type impl struct {
	name    string
	c       Cache
	advance func(time.Duration)
	kind    string
}

func impls(t *testing.T) []impl {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	mem := NewMemory()
	mem.now = clock.Now
	out := []impl{{"memory", mem, clock.Advance, "memory"}}
	if testing.Short() {
		return out
	}
	rc, prefix := testRedis(t)
	// Redis keeps real time; its expiry resolution is a millisecond, so a short sleep past the TTL is enough.
	return append(out, impl{"redis", NewRedis(rc, prefix), func(d time.Duration) { time.Sleep(d + 20*time.Millisecond) }, "redis"})
}

func TestCache_ImplementationsBehaveAlike(t *testing.T) {
	ctx := context.Background()
	for _, im := range impls(t) {
		t.Run(im.name, func(t *testing.T) {
			c := im.c
			if c.Kind() != im.kind {
				t.Fatalf("Kind = %q", c.Kind())
			}
			if err := c.Ping(ctx); err != nil {
				t.Fatal(err)
			}

			t.Run("get of a missing key", func(t *testing.T) {
				if v, ok, err := c.Get(ctx, "missing"); err != nil || ok || v != nil {
					t.Fatalf("Get missing = %q, %v, %v", v, ok, err)
				}
			})

			t.Run("set then get, overwrite, delete", func(t *testing.T) {
				if err := c.Set(ctx, "k", []byte("v1"), 0); err != nil {
					t.Fatal(err)
				}
				if v, ok, err := c.Get(ctx, "k"); err != nil || !ok || string(v) != "v1" {
					t.Fatalf("Get = %q, %v, %v", v, ok, err)
				}
				_ = c.Set(ctx, "k", []byte("v2"), 0)
				if v, _, _ := c.Get(ctx, "k"); string(v) != "v2" {
					t.Fatalf("after overwrite Get = %q", v)
				}
				_ = c.Set(ctx, "k2", []byte("x"), 0)
				if err := c.Del(ctx, "k", "k2", "never-existed"); err != nil {
					t.Fatal(err)
				}
				for _, k := range []string{"k", "k2"} {
					if _, ok, _ := c.Get(ctx, k); ok {
						t.Fatalf("%s survived Del", k)
					}
				}
			})

			t.Run("returned bytes are a copy", func(t *testing.T) {
				in := []byte("abc")
				_ = c.Set(ctx, "copy", in, 0)
				in[0] = 'X'
				v, _, _ := c.Get(ctx, "copy")
				v[1] = 'Y'
				if again, _, _ := c.Get(ctx, "copy"); string(again) != "abc" {
					t.Fatalf("stored value changed through a caller's slice: %q", again)
				}
			})

			t.Run("ttl expires a value and 0 keeps it", func(t *testing.T) {
				_ = c.Set(ctx, "short", []byte("s"), 100*time.Millisecond)
				_ = c.Set(ctx, "forever", []byte("f"), 0)
				if _, ok, _ := c.Get(ctx, "short"); !ok {
					t.Fatal("value gone before its TTL")
				}
				im.advance(150 * time.Millisecond)
				if _, ok, _ := c.Get(ctx, "short"); ok {
					t.Fatal("value outlived its TTL")
				}
				if _, ok, _ := c.Get(ctx, "forever"); !ok {
					t.Fatal("a value without TTL expired")
				}
			})

			t.Run("setnx only when absent or expired", func(t *testing.T) {
				if ok, err := c.SetNX(ctx, "nx", []byte("first"), 100*time.Millisecond); err != nil || !ok {
					t.Fatalf("SetNX on absent = %v, %v", ok, err)
				}
				if ok, _ := c.SetNX(ctx, "nx", []byte("second"), 0); ok {
					t.Fatal("SetNX overwrote a live value")
				}
				if v, _, _ := c.Get(ctx, "nx"); string(v) != "first" {
					t.Fatalf("value = %q", v)
				}
				im.advance(150 * time.Millisecond)
				if ok, _ := c.SetNX(ctx, "nx", []byte("third"), 0); !ok {
					t.Fatal("SetNX refused after the old value expired")
				}
				if v, _, _ := c.Get(ctx, "nx"); string(v) != "third" {
					t.Fatalf("value = %q", v)
				}
			})

			t.Run("setnx has exactly one winner under concurrency", func(t *testing.T) {
				var wins atomic.Int32
				var wg sync.WaitGroup
				for range 32 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if ok, err := c.SetNX(ctx, "race", []byte("w"), time.Minute); err == nil && ok {
							wins.Add(1)
						}
					}()
				}
				wg.Wait()
				if wins.Load() != 1 {
					t.Fatalf("%d SetNX winners, want 1", wins.Load())
				}
			})

			t.Run("incr creates, adds and keeps the first ttl", func(t *testing.T) {
				if n, err := c.Incr(ctx, "ctr", 0, 100*time.Millisecond); err != nil || n != 0 {
					t.Fatalf("Incr 0 on absent = %d, %v", n, err)
				}
				if n, _ := c.Incr(ctx, "ctr", 5, 100*time.Millisecond); n != 5 {
					t.Fatalf("Incr 5 = %d", n)
				}
				if n, _ := c.Incr(ctx, "ctr", -2, 10*time.Second); n != 3 {
					t.Fatalf("Incr -2 = %d", n)
				}
				if v, ok, _ := c.Get(ctx, "ctr"); !ok || string(v) != "3" {
					t.Fatalf("Get counter = %q, %v", v, ok)
				}
				// A later Incr with a longer TTL does not extend the window opened by the first.
				im.advance(150 * time.Millisecond)
				if n, _ := c.Incr(ctx, "ctr", 1, 100*time.Millisecond); n != 1 {
					t.Fatalf("Incr after the window = %d, want a fresh count of 1", n)
				}
			})

			t.Run("incr without ttl never expires", func(t *testing.T) {
				_, _ = c.Incr(ctx, "perm", 7, 0)
				im.advance(150 * time.Millisecond)
				if n, _ := c.Incr(ctx, "perm", 1, 0); n != 8 {
					t.Fatalf("Incr = %d, want 8", n)
				}
			})

			t.Run("incr is atomic under concurrency", func(t *testing.T) {
				var wg sync.WaitGroup
				for range 50 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range 20 {
							if _, err := c.Incr(ctx, "atomic", 1, time.Minute); err != nil {
								t.Error(err)
							}
						}
					}()
				}
				wg.Wait()
				if n, _ := c.Incr(ctx, "atomic", 0, time.Minute); n != 1000 {
					t.Fatalf("counter = %d, want 1000", n)
				}
			})
		})
	}
}

func TestRedisCache_PrefixesEveryKey(t *testing.T) {
	if testing.Short() {
		t.Skip("needs Redis")
	}
	rc, prefix := testRedis(t)
	ctx := context.Background()
	a, b := NewRedis(rc, prefix+"a:"), NewRedis(rc, prefix+"b:")
	_ = a.Set(ctx, "k", []byte("from a"), time.Minute)
	if _, ok, _ := b.Get(ctx, "k"); ok {
		t.Fatal("a key set under one prefix is visible under another")
	}
	if v, err := rc.Get(ctx, prefix+"a:k").Result(); err != nil || v != "from a" {
		t.Fatalf("raw key = %q, %v", v, err)
	}
	if ttl := rc.PTTL(ctx, prefix+"a:k").Val(); ttl <= 0 || ttl > time.Minute {
		t.Fatalf("raw TTL = %s", ttl)
	}
}

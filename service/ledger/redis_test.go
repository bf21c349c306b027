package ledger

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// testRedisDB keeps test keys away from the gateway's own data when REDIS_URL points at a shared server.
const testRedisDB = 14

// newRedisLedger connects to REDIS_URL (default 127.0.0.1:6379, DB 14 unless the URL names one), gives the
// test a random prefix and deletes its keys afterwards. It skips, loudly, only when Redis is unreachable.
func newRedisLedger(t *testing.T, loader Loader, opts ...Option) Ledger {
	t.Helper()
	return NewRedis(testRedisClient(t), testPrefix(t), loader, opts...)
}

func testRedisClient(t testing.TB) *redis.Client {
	t.Helper()
	opt := &redis.Options{Addr: "127.0.0.1:6379", DB: testRedisDB}
	if url := os.Getenv("REDIS_URL"); url != "" {
		parsed, err := redis.ParseURL(url)
		if err != nil {
			t.Fatalf("REDIS_URL: %v", err)
		}
		opt = parsed
		if opt.DB == 0 {
			opt.DB = testRedisDB
		}
	}
	opt.PoolSize = 64
	client := redis.NewClient(opt)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		_ = client.Close()
		t.Skipf("SKIPPING REDIS LEDGER TESTS: Redis at %s unreachable: %v", opt.Addr, err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return client
}

func testPrefix(t testing.TB) string {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	prefix := "tgtest:" + hex.EncodeToString(b) + ":"
	t.Cleanup(func() {
		client := testRedisClient(t)
		ctx := context.Background()
		iter := client.Scan(ctx, 0, prefix+"*", 500).Iterator()
		var keys []string
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if len(keys) > 0 {
			client.Del(ctx, keys...)
		}
	})
	return prefix
}

func TestRedis_ScriptsReloadAfterFlush(t *testing.T) {
	// EVALSHA falls back to EVAL when the server lost its script cache (restart, failover, SCRIPT FLUSH).
	client := testRedisClient(t)
	loader := newLoader()
	loader.set(100, 100)
	l := NewRedis(client, testPrefix(t), loader)
	ctx := context.Background()
	must(t, client.ScriptFlush(ctx).Err())
	must(t, l.Reserve(ctx, "r", limited, 10))
	must(t, client.ScriptFlush(ctx).Err())
	if _, err := l.Settle(ctx, "r", 10); err != nil {
		t.Fatal(err)
	}
	wantBalances(t, l, 90, 90)
}

func TestRedis_HoldKeyHasTTL(t *testing.T) {
	client := testRedisClient(t)
	loader := newLoader()
	loader.set(100, 100)
	prefix := testPrefix(t)
	l := NewRedis(client, prefix, loader, WithHoldTTL(time.Hour))
	ctx := context.Background()
	must(t, l.Reserve(ctx, "r", limited, 10))
	ttl, err := client.PTTL(ctx, prefix+"hold:r").Result()
	must(t, err)
	if ttl <= time.Hour || ttl > time.Hour+holdKeyGrace {
		t.Fatalf("hold TTL %v, want about 1h", ttl)
	}
	_, err = l.Settle(ctx, "r", 5)
	must(t, err)
	ttl, err = client.PTTL(ctx, prefix+"settled:r").Result()
	must(t, err)
	if ttl <= 23*time.Hour || ttl > DefaultSettledTTL {
		t.Fatalf("settled TTL %v, want about %v", ttl, DefaultSettledTTL)
	}
}

// newLeasedLedger is the Redis ledger behind node-local leases, flushed every 5 ms.
func newLeasedLedger(t *testing.T, loader Loader, opts ...Option) Ledger {
	t.Helper()
	l := NewLeased(NewRedis(testRedisClient(t), testPrefix(t), loader, opts...), LeaseOptions{FlushEvery: 5 * time.Millisecond}).Start()
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	return l
}

package cache

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a Cache on a Redis server shared by every node.
type Redis struct {
	c      redis.UniversalClient
	prefix string
}

// NewRedis wraps a client; every key gets prefix.
func NewRedis(c redis.UniversalClient, prefix string) *Redis { return &Redis{c: c, prefix: prefix} }

// Client exposes the underlying client for packages that run their own scripts (ledger, bus).
func (r *Redis) Client() redis.UniversalClient { return r.c }

// Get implements Cache.
func (r *Redis) Get(ctx context.Context, key string) ([]byte, bool, error) {
	b, err := r.c.Get(ctx, r.prefix+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

// Set implements Cache.
func (r *Redis) Set(ctx context.Context, key string, val []byte, ttl time.Duration) error {
	return r.c.Set(ctx, r.prefix+key, val, ttl).Err()
}

// SetNX implements Cache.
func (r *Redis) SetNX(ctx context.Context, key string, val []byte, ttl time.Duration) (bool, error) {
	return r.c.SetNX(ctx, r.prefix+key, val, ttl).Result()
}

// Del implements Cache.
func (r *Redis) Del(ctx context.Context, keys ...string) error {
	full := make([]string, len(keys))
	for i, k := range keys {
		full[i] = r.prefix + k
	}
	return r.c.Del(ctx, full...).Err()
}

var incrScript = redis.NewScript(`
local n = redis.call('INCRBY', KEYS[1], ARGV[1])
if tonumber(ARGV[2]) > 0 and redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return n`)

// Incr implements Cache.
func (r *Redis) Incr(ctx context.Context, key string, delta int64, ttl time.Duration) (int64, error) {
	return incrScript.Run(ctx, r.c, []string{r.prefix + key}, delta, ttl.Milliseconds()).Int64()
}

// Ping implements Cache.
func (r *Redis) Ping(ctx context.Context) error { return r.c.Ping(ctx).Err() }

// Kind implements Cache.
func (r *Redis) Kind() string { return "redis" }

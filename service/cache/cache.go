// Package cache is the shared runtime-state store: in-process for one node, Redis for many.
package cache

import (
	"context"
	"time"
)

// Cache holds runtime state shared by every node (rate counters, cooldowns, sticky bindings, breaker state).
type Cache interface {
	// Get returns the value at key and whether it exists.
	Get(ctx context.Context, key string) ([]byte, bool, error)
	// Set stores val at key; ttl 0 keeps it forever.
	Set(ctx context.Context, key string, val []byte, ttl time.Duration) error
	// SetNX stores val only when key is absent and reports whether it did.
	SetNX(ctx context.Context, key string, val []byte, ttl time.Duration) (bool, error)
	// Del removes keys.
	Del(ctx context.Context, keys ...string) error
	// Incr adds delta to the integer at key, creating it with ttl (when ttl > 0) if absent.
	Incr(ctx context.Context, key string, delta int64, ttl time.Duration) (int64, error)
	// Ping checks that the cache answers.
	Ping(ctx context.Context) error
	// Kind names the implementation ("memory" or "redis").
	Kind() string
}

package cache

import (
	"context"
	"sync"
	"time"
)

// Local is a per-node read-through cache of config rows (users, tokens) in front of SQL. Writes anywhere
// publish an invalidation on the Bus and every node drops its copy; the TTL bounds staleness if a message
// is ever lost and the version check has not caught it yet.
type Local[K comparable, V any] struct {
	mu    sync.RWMutex
	m     map[K]localEntry[V]
	ttl   time.Duration
	max   int
	load  func(context.Context, K) (V, error)
	group sync.Map // K → *call[V]: one SQL load per key at a time
	epoch uint64   // bumped by every Invalidate/Purge (under mu): a load that straddles one is not cached
}

type localEntry[V any] struct {
	v       V
	expires time.Time
}

type call[V any] struct {
	wg  sync.WaitGroup
	v   V
	err error
}

// NewLocal builds a Local cache holding at most max entries for ttl each.
func NewLocal[K comparable, V any](ttl time.Duration, max int, load func(context.Context, K) (V, error)) *Local[K, V] {
	return &Local[K, V]{m: make(map[K]localEntry[V]), ttl: ttl, max: max, load: load}
}

// Get returns the cached value or loads it (errors are not cached).
func (l *Local[K, V]) Get(ctx context.Context, k K) (V, error) {
	l.mu.RLock()
	e, ok := l.m[k]
	l.mu.RUnlock()
	if ok && time.Now().Before(e.expires) {
		return e.v, nil
	}
	c := &call[V]{}
	c.wg.Add(1)
	if prev, loaded := l.group.LoadOrStore(k, c); loaded {
		pc := prev.(*call[V])
		pc.wg.Wait()
		return pc.v, pc.err
	}
	l.mu.RLock()
	epoch := l.epoch
	l.mu.RUnlock()
	c.v, c.err = l.load(ctx, k)
	if c.err == nil {
		l.mu.Lock()
		if l.epoch != epoch {
			// Something was invalidated while this row was loading: it may be stale. Serve it to this
			// caller, but let the next Get load again.
			l.mu.Unlock()
			l.group.Delete(k)
			c.wg.Done()
			return c.v, c.err
		}
		if len(l.m) >= l.max {
			// Cheap bound: drop everything; the working set reloads in one SQL read per key.
			l.m = make(map[K]localEntry[V])
		}
		l.m[k] = localEntry[V]{v: c.v, expires: time.Now().Add(l.ttl)}
		l.mu.Unlock()
	}
	l.group.Delete(k)
	c.wg.Done()
	return c.v, c.err
}

// Invalidate drops one key.
func (l *Local[K, V]) Invalidate(k K) {
	l.mu.Lock()
	delete(l.m, k)
	l.epoch++
	l.mu.Unlock()
}

// Purge drops everything.
func (l *Local[K, V]) Purge() {
	l.mu.Lock()
	l.m = make(map[K]localEntry[V])
	l.epoch++
	l.mu.Unlock()
}

package cache

import (
	"context"
	"hash/maphash"
	"strconv"
	"sync"
	"time"
)

const shardCount = 64

type entry struct {
	val     []byte
	expires time.Time // zero = never
}

type shard struct {
	mu sync.Mutex
	m  map[string]entry
}

// Memory is an in-process Cache: sharded maps with lazy expiry.
type Memory struct {
	seed   maphash.Seed
	shards [shardCount]shard
	now    func() time.Time
}

// NewMemory returns an empty in-process cache.
func NewMemory() *Memory {
	m := &Memory{seed: maphash.MakeSeed(), now: time.Now}
	for i := range m.shards {
		m.shards[i].m = make(map[string]entry)
	}
	return m
}

func (m *Memory) shard(key string) *shard {
	return &m.shards[maphash.String(m.seed, key)%shardCount]
}

func (m *Memory) live(e entry, ok bool) bool {
	return ok && (e.expires.IsZero() || m.now().Before(e.expires))
}

func (m *Memory) deadline(ttl time.Duration) time.Time {
	if ttl <= 0 {
		return time.Time{}
	}
	return m.now().Add(ttl)
}

// Get implements Cache.
func (m *Memory) Get(_ context.Context, key string) ([]byte, bool, error) {
	s := m.shard(key)
	s.mu.Lock()
	e, ok := s.m[key]
	if ok && !m.live(e, ok) {
		delete(s.m, key)
		ok = false
	}
	s.mu.Unlock()
	if !ok {
		return nil, false, nil
	}
	return append([]byte(nil), e.val...), true, nil
}

// Set implements Cache.
func (m *Memory) Set(_ context.Context, key string, val []byte, ttl time.Duration) error {
	s := m.shard(key)
	s.mu.Lock()
	s.m[key] = entry{val: append([]byte(nil), val...), expires: m.deadline(ttl)}
	s.mu.Unlock()
	return nil
}

// SetNX implements Cache.
func (m *Memory) SetNX(_ context.Context, key string, val []byte, ttl time.Duration) (bool, error) {
	s := m.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.m[key]; m.live(e, ok) {
		return false, nil
	}
	s.m[key] = entry{val: append([]byte(nil), val...), expires: m.deadline(ttl)}
	return true, nil
}

// Del implements Cache.
func (m *Memory) Del(_ context.Context, keys ...string) error {
	for _, k := range keys {
		s := m.shard(k)
		s.mu.Lock()
		delete(s.m, k)
		s.mu.Unlock()
	}
	return nil
}

// Incr implements Cache.
func (m *Memory) Incr(_ context.Context, key string, delta int64, ttl time.Duration) (int64, error) {
	s := m.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[key]
	var n int64
	if m.live(e, ok) {
		n, _ = strconv.ParseInt(string(e.val), 10, 64)
	} else {
		e = entry{expires: m.deadline(ttl)}
	}
	n += delta
	e.val = strconv.AppendInt(nil, n, 10)
	s.m[key] = e
	return n, nil
}

// Ping implements Cache.
func (m *Memory) Ping(context.Context) error { return nil }

// Kind implements Cache.
func (m *Memory) Kind() string { return "memory" }

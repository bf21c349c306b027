package cache

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// counter is a loader that counts calls per key and can be held back.
type counter struct {
	mu    sync.Mutex
	calls map[string]int
	gate  chan struct{} // when non-nil, loads wait for it to close
	val   string        // value suffix returned
	err   error
}

func (c *counter) load(_ context.Context, k string) (string, error) {
	c.mu.Lock()
	if c.calls == nil {
		c.calls = map[string]int{}
	}
	c.calls[k]++
	gate, val, err := c.gate, c.val, c.err
	c.mu.Unlock()
	if gate != nil {
		<-gate
	}
	return k + val, err
}

func (c *counter) n(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[k]
}

func (c *counter) set(val string, err error) {
	c.mu.Lock()
	c.val, c.err = val, err
	c.mu.Unlock()
}

func TestLocal_LoadsOnceForConcurrentReaders(t *testing.T) {
	ld := &counter{gate: make(chan struct{})}
	l := NewLocal(time.Minute, 100, ld.load)
	const readers = 64
	var started, done sync.WaitGroup
	var wrong atomic.Int32
	for range readers {
		started.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			started.Done()
			if v, err := l.Get(context.Background(), "u1"); err != nil || v != "u1" {
				wrong.Add(1)
			}
		}()
	}
	started.Wait()
	// Give every reader time to reach the in-flight load before it finishes.
	deadline := time.Now().Add(2 * time.Second)
	for ld.n("u1") == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	close(ld.gate)
	done.Wait()
	if wrong.Load() != 0 {
		t.Fatalf("%d readers got a wrong value", wrong.Load())
	}
	if n := ld.n("u1"); n != 1 {
		t.Fatalf("%d loads for %d concurrent readers, want 1", n, readers)
	}
	// Later reads are served from memory.
	for range 10 {
		_, _ = l.Get(context.Background(), "u1")
	}
	if n := ld.n("u1"); n != 1 {
		t.Fatalf("%d loads after cached reads, want 1", n)
	}
}

func TestLocal_InvalidatePurgeAndTTL(t *testing.T) {
	ctx := context.Background()
	ld := &counter{}
	l := NewLocal(time.Minute, 100, ld.load)
	for _, k := range []string{"a", "b"} {
		if v, _ := l.Get(ctx, k); v != k {
			t.Fatalf("Get %s = %q", k, v)
		}
	}

	ld.set("-v2", nil)
	l.Invalidate("a")
	if v, _ := l.Get(ctx, "a"); v != "a-v2" || ld.n("a") != 2 {
		t.Fatalf("after Invalidate(a): %q with %d loads", v, ld.n("a"))
	}
	if v, _ := l.Get(ctx, "b"); v != "b" || ld.n("b") != 1 {
		t.Fatalf("Invalidate(a) touched b: %q with %d loads", v, ld.n("b"))
	}
	l.Invalidate("never-loaded") // harmless

	ld.set("-v3", nil)
	l.Purge()
	for _, k := range []string{"a", "b"} {
		if v, _ := l.Get(ctx, k); v != k+"-v3" {
			t.Fatalf("after Purge Get %s = %q", k, v)
		}
	}

	short := NewLocal(20*time.Millisecond, 100, ld.load)
	_, _ = short.Get(ctx, "t")
	time.Sleep(40 * time.Millisecond)
	_, _ = short.Get(ctx, "t")
	if ld.n("t") != 2 {
		t.Fatalf("%d loads across an expired TTL, want 2", ld.n("t"))
	}
}

func TestLocal_ErrorsAreNotCached(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("db down")
	ld := &counter{err: boom}
	l := NewLocal(time.Minute, 100, ld.load)
	if _, err := l.Get(ctx, "x"); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	ld.set("", nil)
	if v, err := l.Get(ctx, "x"); err != nil || v != "x" || ld.n("x") != 2 {
		t.Fatalf("after recovery: %q, %v, %d loads", v, err, ld.n("x"))
	}
}

func TestLocal_StaysWithinItsBound(t *testing.T) {
	ctx := context.Background()
	ld := &counter{}
	l := NewLocal(time.Minute, 3, ld.load)
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		_, _ = l.Get(ctx, k)
	}
	l.mu.RLock()
	size := len(l.m)
	l.mu.RUnlock()
	if size > 3 {
		t.Fatalf("%d entries held, bound is 3", size)
	}
	if v, err := l.Get(ctx, "a"); err != nil || v != "a" {
		t.Fatalf("reload after eviction = %q, %v", v, err)
	}
}

func TestLocal_InvalidateDuringALoadIsNotLost(t *testing.T) {
	// A load that read SQL before a write must not be cached after the write's invalidation arrived,
	// or the node serves the old row for a whole TTL.
	ctx := context.Background()
	ld := &counter{gate: make(chan struct{})}
	l := NewLocal(time.Minute, 100, ld.load)
	got := make(chan string)
	go func() {
		v, _ := l.Get(ctx, "u") // reads "u" (the old row) and waits at the gate
		got <- v
	}()
	for ld.n("u") == 0 {
		time.Sleep(time.Millisecond)
	}
	ld.set("-new", nil) // the write lands in SQL ...
	l.Invalidate("u")   // ... and its invalidation arrives while the old load is in flight
	close(ld.gate)
	<-got
	ld.mu.Lock()
	ld.gate = nil
	ld.mu.Unlock()
	if v, _ := l.Get(ctx, "u"); v != "u-new" {
		t.Fatalf("after an invalidation during a load, Get = %q, want the new value %q", v, "u-new")
	}
}

package relay

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Every finishing handed over runs exactly once: queued, overflowing the queue while the finishers are
// blocked, and after close (and close while finishings are handed over does not panic).
func TestFinishers_RunEachOnceThroughQueueOverflowAndClose(t *testing.T) {
	var f finishers
	var ran atomic.Int64
	var wg sync.WaitGroup
	block := make(chan struct{})
	// Hold every finisher, then fill the queue and overflow it.
	for range finisherCount {
		wg.Add(1)
		f.run(func() { <-block; ran.Add(1); wg.Done() })
	}
	total := finisherCount + finishQueue + 50
	for range total - finisherCount {
		wg.Add(1)
		f.run(func() { ran.Add(1); wg.Done() })
	}
	// The overflow ran at once on goroutines of their own while the finishers were blocked.
	deadline := time.Now().Add(5 * time.Second)
	for ran.Load() < 50 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := ran.Load(); got < 50 {
		t.Fatalf("%d finishings ran while the finishers were blocked, want the 50 the queue had no room for", got)
	}
	close(block)
	var closers sync.WaitGroup
	closers.Add(1)
	go func() { defer closers.Done(); f.close() }()
	for range 100 { // handed over while closing
		wg.Add(1)
		f.run(func() { ran.Add(1); wg.Done() })
	}
	closers.Wait()
	f.close() // twice is fine
	wg.Add(1)
	f.run(func() { ran.Add(1); wg.Done() })
	wg.Wait()
	if got, want := ran.Load(), int64(total+101); got != want {
		t.Fatalf("ran %d finishings, want %d", got, want)
	}
}

// A pool closed before any use starts no finishers, and a finishing handed over afterwards still runs.
func TestFinishers_ClosedUnusedStillRuns(t *testing.T) {
	var f finishers
	f.close()
	if f.q != nil {
		t.Fatal("close started the finishers")
	}
	done := make(chan struct{})
	f.run(func() { close(done) })
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a finishing handed over after close never ran")
	}
}

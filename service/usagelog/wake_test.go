package usagelog_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"tollgate/model"
	"tollgate/service/usagelog"
)

// The writer sleeps until its tick unless a full batch waits or the queue is full: a queue smaller than a
// batch must not hold producers until the tick, and a full batch is committed without one.
func TestWriter_FullQueueAndFullBatchWakeTheWriter(t *testing.T) {
	st := openStore(t)
	threeUsers(t, st, 1_000_000)
	count := func() int64 {
		var n int64
		st.DB.Model(&model.UsageLog{}).Count(&n)
		return n
	}
	// A queue of 4 under batches of 100, and a tick that never comes within the test.
	w := usagelog.NewWriter(st, 4, 100, time.Hour)
	done := make(chan struct{})
	go func() {
		for _, e := range entries(40, 1, "q") {
			w.Write(e)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("producers held by a full queue: the writer was not woken")
	}
	w.Flush()
	if n := count(); n != 40 {
		t.Fatalf("rows = %d, want 40", n)
	}
	w.Close(context.Background())

	// Batches of 10: ten entries are committed at once, without Flush or a tick.
	w2 := usagelog.NewWriter(st, 1024, 10, time.Hour)
	defer w2.Close(context.Background())
	for _, e := range entries(13, 1, "b") {
		w2.Write(e)
	}
	deadline := time.Now().Add(20 * time.Second)
	for count() < 50 {
		if time.Now().After(deadline) {
			t.Fatalf("rows = %d, want the full batch (50) committed without a tick", count())
		}
		time.Sleep(10 * time.Millisecond)
	}
	w2.Flush()
	if n := count(); n != 53 {
		t.Fatalf("rows = %d after Flush, want 53", n)
	}
}

// Under load that keeps full batches queued, a flush still gets its turn (the writer goes back to its select
// after the batches queued when it woke).
func TestWriter_FlushIsServedUnderSustainedLoad(t *testing.T) {
	st := openStore(t)
	threeUsers(t, st, 1_000_000_000)
	w := usagelog.NewWriter(st, 64, 5, time.Hour)
	defer w.Close(context.Background())
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			for _, e := range entries(5, 1, fmt.Sprintf("s%d", i)) {
				w.Write(e)
			}
		}
	}()
	time.Sleep(50 * time.Millisecond)
	done := make(chan struct{})
	go func() { w.Flush(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Flush not served while full batches kept coming")
	}
}

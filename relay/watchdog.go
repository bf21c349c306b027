package relay

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// watchdog enforces one upstream call's deadlines — total, connect, first byte, then idle between reads —
// with a single timer: it sleeps until the earliest deadline still in force, and on waking either cancels
// the call with that deadline's cause or sleeps again until the next one. A read only records its time (an
// atomic store, no timer change); the idle deadline is checked against it when the timer wakes. Four timers
// set and stopped per call cost more than the rest of building the upstream request.
type watchdog struct {
	cancel context.CancelCauseFunc
	start  time.Time
	idle   time.Duration
	// lastRead is when the last read returned data, as time since start (monotonic).
	lastRead atomic.Int64

	mu         sync.Mutex
	t          *time.Timer
	total      time.Time
	totalCause error
	connect    time.Time // zero once a connection is held
	firstByte  time.Time
	fbCause    error
	reading    bool // the answer's headers arrived: the idle deadline replaces connect and first byte
	done       bool
}

// newWatchdog arms the deadlines of a call that starts at start.
func newWatchdog(cancel context.CancelCauseFunc, start time.Time, total time.Duration, totalCause error,
	connect, firstByte time.Duration, fbCause error, idle time.Duration) *watchdog {
	w := &watchdog{cancel: cancel, start: start, idle: idle, total: start.Add(total), totalCause: totalCause,
		connect: start.Add(connect), firstByte: start.Add(firstByte), fbCause: fbCause}
	w.mu.Lock() // a deadline already past fires at once: fire waits for t to be set
	at, _ := w.nextLocked()
	w.t = time.AfterFunc(time.Until(at), w.fire)
	w.mu.Unlock()
	return w
}

// nextLocked is the earliest deadline in force and the cause it cancels the call with.
func (w *watchdog) nextLocked() (time.Time, error) {
	at, cause := w.total, w.totalCause
	earlier := func(t time.Time, c error) {
		if t.Before(at) {
			at, cause = t, c
		}
	}
	if w.reading {
		earlier(w.start.Add(time.Duration(w.lastRead.Load())+w.idle), errIdleTimeout)
		return at, cause
	}
	if !w.connect.IsZero() {
		earlier(w.connect, errConnectTimeout)
	}
	earlier(w.firstByte, w.fbCause)
	return at, cause
}

func (w *watchdog) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	at, cause := w.nextLocked()
	if d := time.Until(at); d > 0 {
		w.t.Reset(d) // a read, a connection or the headers moved the deadline since the timer was set
		return
	}
	w.done = true
	w.cancel(cause)
}

// connected lifts the connect deadline (the transport holds a connection).
func (w *watchdog) connected() {
	w.mu.Lock()
	w.connect = time.Time{}
	w.mu.Unlock()
}

// headers switches from the connect and first-byte deadlines to the idle one, counted from now.
func (w *watchdog) headers() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reading = true
	w.read()
	if !w.done {
		at, _ := w.nextLocked()
		w.t.Reset(max(time.Until(at), 0))
	}
}

// read records that a read returned data now.
func (w *watchdog) read() { w.lastRead.Store(int64(time.Since(w.start))) }

// stop ends the watch; no cause is set after it returns.
func (w *watchdog) stop() {
	w.mu.Lock()
	w.done = true
	w.t.Stop()
	w.mu.Unlock()
}

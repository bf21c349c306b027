package relay

import "sync"

// finishers run the finishing of answered requests (settlement, the log row, metrics) on a few long-lived
// goroutines instead of a new goroutine per request. A new goroutine starts on a small stack and the
// finishing grows it (each growth copies the stack and walks its frames): that made a finishing's first run
// ~160 µs, and a stream's next chunk, woken meanwhile on two cores, waited behind it. Paced A/Bs in one run
// (three runs each): 3–4 % less CPU per stream with 2 finishers, 0.3–1.7 % with these 8 (a faster hour of the
// machine). When every finisher is busy (a slow ledger or
// database) and the queue is full, the finishing gets a goroutine of its own as before, so a stall never
// holds up the handler that hands it over. The zero value is ready; its goroutines start with the first
// finishing and end at close (Relay.Close), after running what was queued.
type finishers struct {
	once   sync.Once
	mu     sync.RWMutex // held shared to queue, exclusively to close
	q      chan func()
	closed bool
}

// The pool's size: finishers (a finishing may wait on a remote ledger, so more than the CPUs) and how many
// finishings may wait for one before new ones get goroutines of their own.
const (
	finisherCount = 8
	finishQueue   = 256
)

// run hands fn to a finisher, or to a goroutine of its own when the queue is full or the pool closed.
func (f *finishers) run(fn func()) {
	f.once.Do(f.start)
	f.mu.RLock()
	defer f.mu.RUnlock()
	if !f.closed {
		select {
		case f.q <- fn:
			return
		default:
		}
	}
	go fn()
}

func (f *finishers) start() {
	f.q = make(chan func(), finishQueue)
	for range finisherCount {
		go func() {
			for fn := range f.q {
				fn()
			}
		}()
	}
}

// close lets the finishers end once the queue is empty; later finishings get goroutines of their own.
func (f *finishers) close() {
	f.once.Do(func() {}) // a pool never used is not started, now or by a later run
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		f.closed = true
		if f.q != nil {
			close(f.q)
		}
	}
}

package health

import "time"

// verdict is what one outcome means to a breaker.
type verdict int

const (
	neutral verdict = iota // says nothing about the upstream's health (client, canceled, 429, auth, ...)
	success
	failure
)

func verdictOf(c Class) verdict {
	switch {
	case c == ClassSuccess:
		return success
	case c.Failure():
		return failure
	}
	return neutral
}

// breaker is one three-state machine. It is guarded by its channel's mutex.
type breaker struct {
	state     State
	until     time.Time // end of the OPEN cooldown
	trips     int       // trips since the last close; sets the next cooldown
	changedAt int64     // stamp of the last transition (local or adopted), orders remote updates
	consec    int       // consecutive failures while CLOSED
	win       window
	probes    []time.Time // admission times of probes in flight (channel breakers only)
	probeOK   int         // consecutive probe successes in HALF_OPEN
	recovered int64       // stamp of the last close from OPEN/HALF_OPEN: the start of the traffic ramp
	forced    bool        // OPEN held by an admin: no cooldown end, no probes, until the next Force
	forceAt   int64       // stamp of the last Force (0: never forced); keeps the shared record long-lived
}

func newBreaker(cfg *Config) breaker {
	return breaker{state: StateClosed, win: newWindow(cfg.Window)}
}

// effective is the state an observer should see: an OPEN breaker past its cooldown is half open (a forced
// one stays OPEN).
func (b *breaker) effective(now time.Time) State {
	if b.state == StateOpen && !b.forced && !now.Before(b.until) {
		return StateHalfOpen
	}
	return b.state
}

// allow admits or refuses one request. limitProbes caps concurrent HALF_OPEN admissions (channels); key
// breakers admit everything in HALF_OPEN because KeyAllowed is a query, not a reservation.
func (b *breaker) allow(now time.Time, cfg *Config, at func() int64, limitProbes bool) (ok, probe bool, from State, moved bool) {
	from = b.state
	if b.state == StateOpen {
		if b.forced || now.Before(b.until) {
			return false, false, from, false
		}
		b.toHalfOpen(at())
		moved = true
	}
	if b.state == StateClosed {
		return true, false, from, moved
	}
	if !limitProbes {
		return true, true, from, moved
	}
	b.expireProbes(now, cfg)
	if len(b.probes) >= cfg.HalfOpenProbes {
		return false, false, from, moved
	}
	b.probes = append(b.probes, now)
	return true, true, from, moved
}

// expireProbes reclaims probe slots whose Record never came (a panic, a lost goroutine) after one window.
func (b *breaker) expireProbes(now time.Time, cfg *Config) {
	i := 0
	for i < len(b.probes) && now.Sub(b.probes[i]) >= cfg.Window {
		i++
	}
	if i > 0 {
		b.probes = append(b.probes[:0], b.probes[i:]...)
	}
}

// record feeds one outcome. probe is the Outcome's flag; keyMode treats every outcome in HALF_OPEN as a probe.
func (b *breaker) record(now time.Time, cfg *Config, at func() int64, v verdict, probe, keyMode bool) (from State, moved bool) {
	from = b.state
	if probe && len(b.probes) > 0 {
		b.probes = b.probes[1:]
	}
	switch b.state {
	case StateClosed:
		switch v {
		case success:
			b.consec = 0
			b.win.add(now, false)
		case failure:
			b.consec++
			total, fails := b.win.add(now, true)
			if b.consec >= cfg.ConsecutiveFails ||
				(total >= cfg.MinRequests && float64(fails) >= cfg.FailureRatio*float64(total)) {
				b.trip(now, cfg, at())
				return from, true
			}
		}
	case StateHalfOpen:
		if v == neutral || !(probe || keyMode) {
			// A request admitted before the trip says nothing about the recovery being probed.
			return from, false
		}
		if v == failure {
			b.trip(now, cfg, at())
			return from, true
		}
		b.probeOK++
		if b.probeOK >= cfg.CloseAfter {
			b.close(at())
			return from, true
		}
	case StateOpen:
		// Stragglers admitted before the trip finish here; they neither extend nor shorten the cooldown.
	}
	return from, false
}

func (b *breaker) trip(now time.Time, cfg *Config, at int64) {
	b.trips++
	cd := cfg.BaseCooldown
	for i := 1; i < b.trips && cd < cfg.MaxCooldown; i++ {
		cd *= 2
	}
	if cd > cfg.MaxCooldown {
		cd = cfg.MaxCooldown
	}
	b.state = StateOpen
	b.until = now.Add(cd)
	b.changedAt = at
	b.forced = false
	b.clearCounts()
}

func (b *breaker) toHalfOpen(at int64) {
	b.state = StateHalfOpen
	b.changedAt = at
	b.forced = false
	b.clearCounts()
}

// forceOpen holds the breaker OPEN with no cooldown end until the next Force (or a Reset).
func (b *breaker) forceOpen(at int64) {
	b.state = StateOpen
	b.until = time.Time{}
	b.changedAt = at
	b.forced = true
	b.forceAt = at
	b.clearCounts()
}

// testPassed takes a passing channel test: an OPEN breaker skips the rest of its cooldown and turns
// HALF_OPEN (live probes, or further tests, then close it after CloseAfter successes); in HALF_OPEN the test
// counts as one probe success; in CLOSED as one success. The test took no probe slot, so none is returned.
func (b *breaker) testPassed(now time.Time, cfg *Config, at func() int64) (from State, moved bool) {
	from = b.state
	if b.forced {
		return from, false // an admin holds it OPEN: only another Force lets traffic back
	}
	switch b.state {
	case StateOpen:
		b.toHalfOpen(at())
		return from, true
	case StateHalfOpen:
		if b.probeOK++; b.probeOK >= cfg.CloseAfter {
			b.close(at())
			return from, true
		}
	case StateClosed:
		b.consec = 0
		b.win.add(now, false)
	}
	return from, false
}

func (b *breaker) close(at int64) {
	if b.state != StateClosed {
		b.recovered = at
	}
	b.state = StateClosed
	b.trips = 0
	b.until = time.Time{}
	b.changedAt = at
	b.forced = false
	b.clearCounts()
}

func (b *breaker) clearCounts() {
	b.consec = 0
	b.probes = b.probes[:0]
	b.probeOK = 0
	b.win.clear()
}

// adopt takes a state decided elsewhere (another node, the cache) and reports whether the state changed.
// forced is meaningful with StateOpen only; forceAt is the sender's last Force stamp.
func (b *breaker) adopt(state State, until time.Time, trips int, at int64, forced bool, forceAt int64) (from State, moved bool) {
	from = b.state
	if at <= b.changedAt {
		return from, false
	}
	switch state {
	case StateOpen:
		b.state, b.until, b.trips = StateOpen, until, trips
		b.clearCounts()
	case StateHalfOpen:
		if b.state != StateHalfOpen {
			b.clearCounts()
		}
		b.state, b.until, b.trips = StateHalfOpen, until, trips
	case StateClosed:
		if b.state != StateClosed {
			b.clearCounts()
		}
		b.state, b.until, b.trips = StateClosed, time.Time{}, 0
	default:
		return from, false
	}
	b.forceAt = max(b.forceAt, forceAt)
	b.forced = forced && state == StateOpen
	b.changedAt = at
	return from, from != b.state
}

// window counts outcomes in fixed-width buckets covering the sliding window.
type window struct {
	width   int64 // bucket width in ns
	buckets []winBucket
}

type winBucket struct {
	slot         int64
	total, fails int
}

const maxWindowBuckets = 600

func newWindow(d time.Duration) window {
	width := time.Second
	if d > maxWindowBuckets*time.Second {
		width = d / maxWindowBuckets
	}
	n := int((d + width - 1) / width)
	if n < 1 {
		n = 1
	}
	return window{width: int64(width), buckets: make([]winBucket, n)}
}

// add counts one outcome and returns the window's totals, which are only summed on failures.
func (w *window) add(now time.Time, fail bool) (total, fails int) {
	slot := now.UnixNano() / w.width
	n := int64(len(w.buckets))
	b := &w.buckets[((slot%n)+n)%n]
	if b.slot != slot {
		*b = winBucket{slot: slot}
	}
	b.total++
	if !fail {
		return 0, 0
	}
	b.fails++
	for i := range w.buckets {
		if s := w.buckets[i].slot; s > slot-n && s <= slot {
			total += w.buckets[i].total
			fails += w.buckets[i].fails
		}
	}
	return total, fails
}

func (w *window) clear() {
	clear(w.buckets)
}

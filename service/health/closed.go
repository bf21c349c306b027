package health

import "time"

// ClosedSince reports whether the breaker of id is CLOSED and since when: the time of its last close after
// being OPEN, on any node (zero: it has not been opened on record, so it has been healthy as far as anyone
// knows). The routing engine reads it for return-to-primary on route breakers.
func (t *Tracker) ClosedSince(id int64) (closed bool, since time.Time) {
	cs := t.channel(id)
	now := t.now()
	t.refreshChannel(cs, now)
	cs.mu.Lock()
	rec, state := cs.br.recovered, cs.br.state
	cs.mu.Unlock()
	if state != StateClosed {
		return false, time.Time{}
	}
	if rec == 0 {
		return true, time.Time{}
	}
	return true, time.Unix(0, rec)
}

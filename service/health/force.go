package health

import "fmt"

// Breaker actions an admin can force (Tracker.Force).
const (
	// ForceOpen holds the breaker OPEN until the next Force: no cooldown end, no probes, tests do not lift it.
	ForceOpen = "open"
	// ForceClose closes the breaker now with its counts cleared; it is a normal breaker from then on. A channel
	// that was not CLOSED ramps back (RampShare) like one closed by probes.
	ForceClose = "close"
	// ForceHalfOpen turns the breaker HALF_OPEN now; probes decide between CLOSED and OPEN.
	ForceHalfOpen = "half_open"
	// ForceReset is Reset for the channel (key -1), or clears one key's cooldown, disable and breaker.
	ForceReset = "reset"
)

// ValidForce reports whether action is one Force accepts.
func ValidForce(action string) bool {
	switch action {
	case ForceOpen, ForceClose, ForceHalfOpen, ForceReset:
		return true
	}
	return false
}

// Force applies an admin's action to the channel's breaker (key -1) or to one key's (key ≥ 0) and shares it
// with every node on the cache and bus, like any transition. A key's close and half_open move its breaker
// only; its cooldown and disable stay until reset.
func (t *Tracker) Force(channelID int64, key int, action string) error {
	if !ValidForce(action) {
		return fmt.Errorf("health: force channel %d: unknown action %q", channelID, action)
	}
	if key < -1 {
		return fmt.Errorf("health: force channel %d: bad key index %d", channelID, key)
	}
	if key == -1 && action == ForceReset {
		t.Reset(channelID)
		return nil
	}
	cs := t.channel(channelID)
	now := t.now()
	var trs []transition
	cs.mu.Lock()
	at := t.stamp(now)
	b := &cs.br
	var ks *keyState
	if key >= 0 {
		ks = cs.keyState(key)
		b = &ks.br
	}
	from := b.state
	switch action {
	case ForceOpen:
		b.forceOpen(at)
	case ForceClose:
		b.close(at)
	case ForceHalfOpen:
		b.toHalfOpen(at)
	case ForceReset: // a key: the channel's reset returned above
		trs = ks.clear(channelID, key, at)
	}
	b.forceAt = at
	if action != ForceReset && from != b.state {
		trs = append(trs, transition{channelID, key, from, b.state})
	}
	var sh share
	if ks != nil {
		sh = t.keyShare(cs, key, ks, now)
	} else {
		sh = t.chShare(cs, now)
	}
	cs.mu.Unlock()
	t.after(trs, []share{sh})
	return nil
}

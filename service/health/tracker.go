package health

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"tollgate/model"
)

// channelState is everything one node knows about one channel; its mutex guards all of it (breakers, keys,
// models, metrics) so that channels never contend with each other.
type channelState struct {
	id      int64
	mu      sync.Mutex
	br      breaker
	resetAt int64 // stamp of the last Reset; older shared records are ignored
	memo    memo
	keys    map[int]*keyState
	models  map[string]*modelState
	m       *metrics
	cfg     *Config
}

type keyState struct {
	br      breaker
	cool    time.Time // 429 cooldown end
	off     time.Time // auth / upstream_quota disable end
	pubCool time.Time // last cooldown end announced, to stay quiet during 429 storms
	lastErr string
	memo    memo
	m       *metrics
	// clearedAt is the stamp of the last passing test of this key: older shared records of the key are void.
	clearedAt int64
}

// clear forgets the key's cooldown, disable and breaker as of stamp at (a test with this key passed) and
// returns the breaker transition, if any. Called under the channel's mutex.
func (ks *keyState) clear(ch int64, k int, at int64) []transition {
	var trs []transition
	if ks.br.state != StateClosed {
		trs = append(trs, transition{ch, k, ks.br.state, StateClosed})
	}
	ks.br.close(at)
	ks.cool, ks.off, ks.pubCool, ks.lastErr = time.Time{}, time.Time{}, time.Time{}, ""
	ks.clearedAt = at
	return trs
}

type modelState struct {
	until time.Time // excluded until
	at    int64     // stamp of the last change
	memo  memo
}

func (t *Tracker) channel(id int64) *channelState {
	if v, ok := t.channels.Load(id); ok {
		return v.(*channelState)
	}
	cs := &channelState{
		id: id, br: newBreaker(&t.cfg), keys: map[int]*keyState{}, models: map[string]*modelState{},
		m: newMetrics(), cfg: &t.cfg,
	}
	v, _ := t.channels.LoadOrStore(id, cs)
	return v.(*channelState)
}

// keyState returns key k's state, creating it. Called under cs.mu.
func (cs *channelState) keyState(k int) *keyState {
	ks := cs.keys[k]
	if ks == nil {
		ks = &keyState{br: newBreaker(cs.cfg), m: newMetrics()}
		cs.keys[k] = ks
	}
	return ks
}

// model returns the model's exclusion state, creating it. Called under cs.mu.
func (cs *channelState) model(name string) *modelState {
	ms := cs.models[name]
	if ms == nil {
		ms = &modelState{}
		cs.models[name] = ms
	}
	return ms
}

// resetLocal forgets breaker, key and model state as of stamp at (metrics stay). It returns the breaker
// transitions and the keys and models that had state. Called under cs.mu.
func (cs *channelState) resetLocal(at int64) (trs []transition, keys []int, models []string) {
	cs.resetAt = at
	if cs.br.state != StateClosed {
		trs = append(trs, transition{cs.id, -1, cs.br.state, StateClosed})
	}
	cs.br.close(at)
	for k, ks := range cs.keys {
		if ks.br.state != StateClosed {
			trs = append(trs, transition{cs.id, k, ks.br.state, StateClosed})
		}
		ks.br.close(at)
		ks.cool, ks.off, ks.pubCool, ks.lastErr = time.Time{}, time.Time{}, time.Time{}, ""
		keys = append(keys, k)
	}
	for name, ms := range cs.models {
		ms.until, ms.at = time.Time{}, at
		models = append(models, name)
	}
	return trs, keys, models
}

// Allow reports whether the channel may take a request now and whether that request is a HALF_OPEN probe.
// CLOSED admits everything; OPEN refuses until the cooldown ends, then turns HALF_OPEN; HALF_OPEN admits up
// to HalfOpenProbes concurrent probes on this node. A probe's slot comes back with the Record of that attempt
// (Outcome.Probe set), or after one Window if that Record never comes.
func (t *Tracker) Allow(channelID int64) (ok bool, probe bool) {
	cs := t.channel(channelID)
	now := t.now()
	t.refreshChannel(cs, now)
	var trs []transition
	var sh []share
	cs.mu.Lock()
	ok, probe, from, moved := cs.br.allow(now, cs.cfg, func() int64 { return t.stamp(now) }, true)
	if moved {
		trs = append(trs, transition{channelID, -1, from, cs.br.state})
		sh = append(sh, t.chShare(cs, now))
	}
	cs.mu.Unlock()
	if moved {
		t.after(trs, sh)
	}
	return ok, probe
}

// Available reports whether Allow would admit a request now, without taking a probe slot: for filtering and
// ordering candidates. Call Allow only for the candidate about to be tried.
func (t *Tracker) Available(channelID int64) bool {
	cs := t.channel(channelID)
	now := t.now()
	t.refreshChannel(cs, now)
	cs.mu.Lock()
	defer cs.mu.Unlock()
	switch cs.br.state {
	case StateOpen:
		return !cs.br.forced && !now.Before(cs.br.until)
	case StateHalfOpen:
		cs.br.expireProbes(now, cs.cfg)
		return len(cs.br.probes) < cs.cfg.HalfOpenProbes
	}
	return true
}

// KeyAllowed reports whether key (an index into the channel's keys) may be used now: false while it cools
// down after a 429 or an exhausted rate-limit budget (remaining 0), while it is disabled after auth or
// upstream_quota, or while its own breaker is OPEN (or forced OPEN).
func (t *Tracker) KeyAllowed(channelID int64, key int) bool {
	cs := t.channel(channelID)
	now := t.now()
	t.refreshChannel(cs, now)
	t.refreshKey(cs, key, now)
	var trs []transition
	var sh []share
	cs.mu.Lock()
	ks := cs.keyState(key)
	ok := !now.Before(ks.cool) && !now.Before(ks.off)
	if ok {
		var from State
		var moved bool
		ok, _, from, moved = ks.br.allow(now, cs.cfg, func() int64 { return t.stamp(now) }, false)
		if moved {
			trs = append(trs, transition{channelID, key, from, ks.br.state})
			sh = append(sh, t.keyShare(cs, key, ks, now))
		}
	}
	cs.mu.Unlock()
	if len(sh) > 0 {
		t.after(trs, sh)
	}
	return ok
}

// ModelAllowed reports whether the channel may be asked for model: false after a model_unsupported on that
// channel, until MarkModelOK, Reset or ModelDisable passes.
func (t *Tracker) ModelAllowed(channelID int64, model string) bool {
	cs := t.channel(channelID)
	now := t.now()
	t.refreshChannel(cs, now)
	t.refreshModel(cs, model, now)
	cs.mu.Lock()
	defer cs.mu.Unlock()
	ms := cs.models[model]
	return ms == nil || !now.Before(ms.until)
}

// Begin counts one active request on the channel and, when key ≥ 0, on the key; call the returned func
// (once; later calls do nothing) when the attempt ends.
func (t *Tracker) Begin(channelID int64, key int) func() {
	cs, km := t.counters(channelID, key)
	cs.m.active.Add(1)
	if km != nil {
		km.active.Add(1)
	}
	return ender(cs, km)
}

// TryBegin is Begin under caps: it refuses (ok false, nothing counted, end a no-op) when this node already
// carries chCap attempts on the channel or keyCap on the key (0 = no cap). The check and the count are one
// compare-and-swap per counter, so concurrent callers never exceed a cap; no lock is held across the attempt.
// Caps are per node.
func (t *Tracker) TryBegin(channelID int64, key int, chCap, keyCap int) (end func(), ok bool) {
	cs, km := t.counters(channelID, key)
	if !acquire(&cs.m.active, chCap) {
		return func() {}, false
	}
	if km != nil && !acquire(&km.active, keyCap) {
		cs.m.active.Add(-1)
		return func() {}, false
	}
	return ender(cs, km), true
}

// counters returns the channel's state and the key's metrics (nil for key < 0), whose active counters
// Begin and TryBegin move.
func (t *Tracker) counters(channelID int64, key int) (*channelState, *metrics) {
	cs := t.channel(channelID)
	if key < 0 {
		return cs, nil
	}
	cs.mu.Lock()
	km := cs.keyState(key).m
	cs.mu.Unlock()
	return cs, km
}

// acquire adds one to n unless it already reached limit (≤ 0: no limit).
func acquire(n *atomic.Int64, limit int) bool {
	if limit <= 0 {
		n.Add(1)
		return true
	}
	for {
		v := n.Load()
		if v >= int64(limit) {
			return false
		}
		if n.CompareAndSwap(v, v+1) {
			return true
		}
	}
}

// ender undoes one Begin, once.
func ender(cs *channelState, km *metrics) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			cs.m.active.Add(-1)
			if km != nil {
				km.active.Add(-1)
			}
		})
	}
}

// Record feeds one attempt's outcome to the channel's and the key's breakers and metrics. Only server,
// timeout, reset and bad_reply count as breaker failures; rate_limited cools the key, auth and upstream_quota
// disable the key, model_unsupported excludes the model, client and canceled only show in the counts.
// A reported budget of 0 (RateLimitRemaining 0, whatever the class) cools the key until its reset.
func (t *Tracker) Record(o Outcome) {
	cs := t.channel(o.ChannelID)
	now := t.now()
	at := func() int64 { return t.stamp(now) }
	v := verdictOf(o.Class)
	var trs []transition
	var sh []share
	cs.mu.Lock()
	cs.m.record(now, &o)
	if from, moved := cs.br.record(now, cs.cfg, at, v, o.Probe, false); moved {
		trs = append(trs, transition{o.ChannelID, -1, from, cs.br.state})
		sh = append(sh, t.chShare(cs, now))
	}
	if o.Key >= 0 {
		ks := cs.keyState(o.Key)
		ks.m.record(now, &o)
		changed := false
		if from, moved := ks.br.record(now, cs.cfg, at, v, o.Probe, true); moved {
			trs = append(trs, transition{o.ChannelID, o.Key, from, ks.br.state})
			changed = true
		}
		if o.Class != ClassSuccess {
			ks.lastErr = cs.m.lastErr
		}
		var cool time.Time // a 429's Retry-After is more precise than its budget headers
		if o.Class == ClassRateLimited {
			cool = t.coolUntil(now, &o)
		} else if u, spent := t.budgetUntil(now, &o); spent {
			cool = u
		}
		if cool.After(ks.cool) {
			ks.cool = cool
			if cool.Sub(ks.pubCool) >= time.Second {
				ks.pubCool, changed = cool, true
			}
		}
		switch o.Class {
		case ClassAuth, ClassUpstreamQuota:
			until := now.Add(t.cfg.AuthDisable)
			if until.Sub(ks.off) >= time.Minute {
				changed = true
			}
			ks.off = until
		}
		if changed {
			sh = append(sh, t.keyShare(cs, o.Key, ks, now))
		}
	}
	if o.Class == ClassModelUnsupported && o.Model != "" {
		ms := cs.model(o.Model)
		until := now.Add(t.cfg.ModelDisable)
		announce := until.Sub(ms.until) >= time.Minute
		ms.until = until
		if announce {
			ms.at = t.stamp(now)
			sh = append(sh, t.modelShare(cs, o.Model, ms, now))
		}
	}
	cs.mu.Unlock()
	if len(trs)+len(sh) > 0 {
		t.after(trs, sh)
	}
}

// coolUntil is when a 429'd key may be used again: Retry-After, else the upstream's reset time, else the
// default cooldown; never longer than AuthDisable.
func (t *Tracker) coolUntil(now time.Time, o *Outcome) time.Time {
	d := t.cfg.RateLimitCooldown
	switch {
	case o.RetryAfter > 0:
		d = o.RetryAfter
	case o.RateLimitReset.After(now):
		d = o.RateLimitReset.Sub(now)
	}
	return now.Add(min(d, t.cfg.AuthDisable))
}

// budgetUntil is when a key whose upstream budget read 0 may be used again: the upstream's reset, or
// RateLimitCooldown without one; never longer than AuthDisable. spent is false when the budget is not known
// to be 0 (-1, > 0) or its reset has already passed.
func (t *Tracker) budgetUntil(now time.Time, o *Outcome) (until time.Time, spent bool) {
	if o.RateLimitRemaining != 0 {
		return time.Time{}, false
	}
	switch {
	case o.RateLimitReset.IsZero():
		return now.Add(min(t.cfg.RateLimitCooldown, t.cfg.AuthDisable)), true
	case o.RateLimitReset.After(now):
		return now.Add(min(o.RateLimitReset.Sub(now), t.cfg.AuthDisable)), true
	}
	return time.Time{}, false
}

// AllKeysDisabled reports whether every one of the channel's keys (indexes 0..keys-1) is disabled by auth or
// upstream_quota; the relay then auto-disables the channel. It is false for keys ≤ 0.
func (t *Tracker) AllKeysDisabled(channelID int64, keys int) bool {
	if keys <= 0 {
		return false
	}
	cs := t.channel(channelID)
	now := t.now()
	t.refreshChannel(cs, now)
	for k := range keys {
		t.refreshKey(cs, k, now)
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for k := range keys {
		if ks := cs.keys[k]; ks == nil || !now.Before(ks.off) {
			return false
		}
	}
	return true
}

// Reset forgets the channel's breaker, key and model state on every node. Metrics are kept. A channel that
// was not CLOSED ramps back like one closed by probes. (A passing channel test uses TestPassed instead, which
// clears only the tested key.)
func (t *Tracker) Reset(channelID int64) {
	cs := t.channel(channelID)
	now := t.now()
	cs.mu.Lock()
	trs, keys, models := cs.resetLocal(t.stamp(now))
	sh := []share{t.chShare(cs, now)}
	for _, k := range keys {
		sh = append(sh, share{key: t.keyKey(channelID, k)})
	}
	for _, m := range models {
		sh = append(sh, share{key: t.modelKey(channelID, m)})
	}
	cs.mu.Unlock()
	t.after(trs, sh)
}

// TestPassed takes a passing channel test with key on every node. Only that key is cleared (cooldown,
// disable, breaker): a sibling key that was refused stays refused until a test of its own passes. The
// channel's breaker does not jump to CLOSED: an OPEN channel turns HALF_OPEN at once (skipping the rest of
// its cooldown) and closes after CloseAfter probe successes (live probes or further tests), then ramps back
// (RampShare). A breaker an admin forced OPEN (Force) stays so: the test changes neither it nor its key.
func (t *Tracker) TestPassed(channelID int64, key int) {
	cs := t.channel(channelID)
	now := t.now()
	t.refreshChannel(cs, now)
	if key >= 0 {
		t.refreshKey(cs, key, now)
	}
	at := func() int64 { return t.stamp(now) }
	var trs []transition
	var sh []share
	cs.mu.Lock()
	if from, moved := cs.br.testPassed(now, cs.cfg, at); moved {
		trs = append(trs, transition{channelID, -1, from, cs.br.state})
		sh = append(sh, t.chShare(cs, now))
	}
	if key >= 0 {
		if ks := cs.keyState(key); !ks.br.forced { // an admin's hold outlasts a test
			trs = append(trs, ks.clear(channelID, key, at())...)
			sh = append(sh, t.keyShare(cs, key, ks, now))
		}
	}
	cs.mu.Unlock()
	t.after(trs, sh)
}

// rampFloor is the share of its weight a channel gets right after it recovers from OPEN.
const rampFloor = 0.1

// RampShare is the share of its configured weight the channel should get now: 1 normally; for a channel
// that closed after being OPEN (on any node), rising linearly from 10 % at the close to 100 % after ramp.
// ramp ≤ 0 turns the ramp off.
func (t *Tracker) RampShare(channelID int64, ramp time.Duration) float64 {
	if ramp <= 0 {
		return 1
	}
	cs := t.channel(channelID)
	now := t.now()
	cs.mu.Lock()
	rec, state := cs.br.recovered, cs.br.state
	cs.mu.Unlock()
	if rec == 0 || state != StateClosed {
		return 1
	}
	el := now.Sub(time.Unix(0, rec))
	if el >= ramp {
		return 1
	}
	return rampFloor + (1-rampFloor)*float64(max(el, 0))/float64(ramp)
}

// MarkModelOK lets the channel serve model again on every node (a test with that model passed).
func (t *Tracker) MarkModelOK(channelID int64, model string) {
	cs := t.channel(channelID)
	now := t.now()
	cs.mu.Lock()
	ms := cs.model(model)
	ms.until, ms.at = time.Time{}, t.stamp(now)
	sh := []share{t.modelShare(cs, model, ms, now)}
	cs.mu.Unlock()
	t.after(nil, sh)
}

// Snapshot renders the channel and its keys 0..keys-1 for the admin API. An OPEN breaker past its cooldown
// shows as half_open.
func (t *Tracker) Snapshot(channelID int64, keys int) ChannelHealth {
	cs := t.channel(channelID)
	now := t.now()
	t.refreshChannel(cs, now)
	for k := range keys {
		t.refreshKey(cs, k, now)
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	h := ChannelHealth{
		State: cs.br.effective(now), Trips: cs.br.trips, Metrics: cs.m.view(now), Forced: cs.br.forced,
		Keys: make([]KeyHealth, 0, max(keys, 0)), UnsupportedModels: []string{},
	}
	if cs.br.state == StateOpen && now.Before(cs.br.until) {
		h.CooldownUntil = timePtr(cs.br.until)
	}
	if cs.br.recovered > 0 {
		h.RecoveredAt = timePtr(time.Unix(0, cs.br.recovered).UTC())
	}
	for k := range keys {
		ks := cs.keyState(k)
		kh := KeyHealth{Index: k, State: "ok", LastError: ks.lastErr, Metrics: ks.m.view(now), Forced: ks.br.forced}
		switch st := ks.br.effective(now); {
		case ks.br.forced:
			kh.State = string(StateOpen)
		case now.Before(ks.off):
			kh.State, kh.CooldownUntil = "disabled", timePtr(ks.off)
		case now.Before(ks.cool):
			kh.State, kh.CooldownUntil = "cooling", timePtr(ks.cool)
		case st == StateOpen:
			kh.State, kh.CooldownUntil = string(StateOpen), timePtr(ks.br.until)
		case st == StateHalfOpen:
			kh.State = string(StateHalfOpen)
		}
		h.Keys = append(h.Keys, kh)
	}
	for name, ms := range cs.models {
		if now.Before(ms.until) {
			h.UnsupportedModels = append(h.UnsupportedModels, name)
		}
	}
	slices.Sort(h.UnsupportedModels)
	return h
}

func timePtr(t time.Time) *time.Time { return &t }

// Overrides are per-channel breaker thresholds (stored on the channel row); zero fields keep the default.
type Overrides = model.BreakerOverrides

// SetChannelConfig applies a channel's own thresholds over the global ones (the window length stays global).
func (t *Tracker) SetChannelConfig(channelID int64, o Overrides) {
	c := t.cfg
	if o.MinRequests > 0 {
		c.MinRequests = o.MinRequests
	}
	if o.FailureRatio > 0 && o.FailureRatio <= 1 {
		c.FailureRatio = o.FailureRatio
	}
	if o.ConsecutiveFails > 0 {
		c.ConsecutiveFails = o.ConsecutiveFails
	}
	if o.BaseCooldownMs > 0 {
		c.BaseCooldown = time.Duration(o.BaseCooldownMs) * time.Millisecond
	}
	if o.MaxCooldownMs > 0 {
		c.MaxCooldown = time.Duration(o.MaxCooldownMs) * time.Millisecond
	}
	if c.MaxCooldown < c.BaseCooldown {
		c.MaxCooldown = c.BaseCooldown
	}
	if o.HalfOpenProbes > 0 {
		c.HalfOpenProbes = o.HalfOpenProbes
	}
	if o.CloseAfter > 0 {
		c.CloseAfter = o.CloseAfter
	}
	cs := t.channel(channelID)
	cs.mu.Lock()
	cs.cfg = &c
	cs.mu.Unlock()
}

package health

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"time"

	"tollgate/service/bus"
)

// record is one piece of shared state: the value under a cache key and the payload of a bus message.
// Times are Unix nanoseconds, 0 meaning none.
type record struct {
	Node    string `json:"n,omitempty"` // publishing node, so a node skips its own messages
	Kind    string `json:"k"`           // "ch", "key" or "model"
	Ch      int64  `json:"c"`
	Key     int    `json:"i,omitempty"`
	Model   string `json:"m,omitempty"`
	State   State  `json:"s,omitempty"`
	Until   int64  `json:"u,omitempty"` // end of the OPEN cooldown
	Trips   int    `json:"t,omitempty"`
	At      int64  `json:"a,omitempty"` // stamp of the breaker's last transition (ch, key) or of the change (model)
	ResetAt int64  `json:"z,omitempty"` // ch: stamp of the last Reset
	Rec     int64  `json:"v,omitempty"` // ch: stamp of the last recovery from OPEN (the ramp's start)
	Clr     int64  `json:"x,omitempty"` // key: stamp of the last passing test, which cleared the key
	W       int64  `json:"w,omitempty"` // key: stamp of this write
	Cool    int64  `json:"r,omitempty"` // key: rate-limit cooldown end
	Off     int64  `json:"d,omitempty"` // key: disabled until; model: excluded until (0 = allowed again)
	Err     string `json:"e,omitempty"` // key: last error
	Forced  bool   `json:"f,omitempty"` // ch, key: the OPEN state is held by an admin (Force)
	Force   int64  `json:"g,omitempty"` // ch, key: stamp of the breaker's last Force
}

const (
	kindChannel = "ch"
	kindKey     = "key"
	kindModel   = "model"

	// memoTTL is how long a cache read stands before the next Allow/KeyAllowed/ModelAllowed reads again.
	memoTTL = time.Second
	// readTimeout bounds the lazy cache read on the request path.
	readTimeout = 250 * time.Millisecond
	// writeTimeout bounds writing and announcing one transition.
	writeTimeout = 500 * time.Millisecond
	// warnEvery rate-limits warnings about the cache and the bus, which repeat for as long as Redis is down.
	warnEvery = 10 * time.Second
	// forcedHold is how long a breaker's record stays in the cache after an admin forced it: a forced OPEN
	// has no end of its own, and the Force that ends it must outlive it for nodes that read late.
	forcedHold = 365 * 24 * time.Hour
)

func (t *Tracker) chKey(id int64) string { return t.ns + ":ch:" + strconv.FormatInt(id, 10) }

func (t *Tracker) keyKey(id int64, k int) string {
	return t.ns + ":key:" + strconv.FormatInt(id, 10) + ":" + strconv.Itoa(k)
}

func (t *Tracker) modelKey(id int64, m string) string {
	return t.ns + ":model:" + strconv.FormatInt(id, 10) + ":" + m
}

func ns(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNs(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// share is one write to the cache (Set with ttl, Del when ttl ≤ 0) and optionally one bus announcement.
type share struct {
	key     string
	rec     record
	ttl     time.Duration
	publish bool
}

// memo remembers when a target was last read from the cache.
type memo struct {
	at    time.Time
	epoch int64
	done  bool
}

// claim reports whether the caller should read the cache now, and marks the read as taken. Guarded by the
// channel's mutex; the read itself happens outside it.
func (t *Tracker) claim(m *memo, now time.Time) bool {
	if t.cache == nil {
		return false
	}
	e := t.epoch.Load()
	if age := now.Sub(m.at); m.done && m.epoch == e && age >= 0 && age < memoTTL {
		return false
	}
	m.at, m.epoch, m.done = now, e, true
	return true
}

func (t *Tracker) fetch(key string) (record, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	b, ok, err := t.cache.Get(ctx, key)
	if err != nil {
		t.warn("health: cache read failed", "key", key, "err", err)
		return record{}, false
	}
	if !ok {
		return record{}, false
	}
	var rec record
	if err := json.Unmarshal(b, &rec); err != nil {
		slog.Warn("health: bad cache record", "key", key, "err", err)
		return record{}, false
	}
	return rec, true
}

func (t *Tracker) refreshChannel(cs *channelState, now time.Time) {
	cs.mu.Lock()
	due := t.claim(&cs.memo, now)
	cs.mu.Unlock()
	if !due {
		return
	}
	if rec, ok := t.fetch(t.chKey(cs.id)); ok && rec.Kind == kindChannel {
		t.applyRecord(cs, rec, now)
	}
}

func (t *Tracker) refreshKey(cs *channelState, k int, now time.Time) {
	cs.mu.Lock()
	due := t.claim(&cs.keyState(k).memo, now)
	cs.mu.Unlock()
	if !due {
		return
	}
	if rec, ok := t.fetch(t.keyKey(cs.id, k)); ok && rec.Kind == kindKey {
		t.applyRecord(cs, rec, now)
	}
}

func (t *Tracker) refreshModel(cs *channelState, model string, now time.Time) {
	cs.mu.Lock()
	due := t.claim(&cs.model(model).memo, now)
	cs.mu.Unlock()
	if !due {
		return
	}
	if rec, ok := t.fetch(t.modelKey(cs.id, model)); ok && rec.Kind == kindModel {
		t.applyRecord(cs, rec, now)
	}
}

// onMessage applies another node's announcement. An empty payload means the bus lost messages: every
// memoized cache read is void, so the next check of each target reads the cache again.
func (t *Tracker) onMessage(msg bus.Message) {
	if msg.Payload == "" {
		t.epoch.Add(1)
		return
	}
	var rec record
	if err := json.Unmarshal([]byte(msg.Payload), &rec); err != nil {
		slog.Warn("health: bad bus message", "err", err)
		return
	}
	if rec.Node == t.node {
		return
	}
	t.applyRecord(t.channel(rec.Ch), rec, t.now())
}

func (t *Tracker) applyRecord(cs *channelState, rec record, now time.Time) {
	var trs []transition
	cs.mu.Lock()
	switch rec.Kind {
	case kindChannel:
		if rec.ResetAt > cs.resetAt {
			trs, _, _ = cs.resetLocal(rec.ResetAt)
		}
		if rec.At > cs.resetAt {
			if from, moved := cs.br.adopt(rec.State, fromNs(rec.Until), rec.Trips, rec.At, rec.Forced, rec.Force); moved {
				trs = append(trs, transition{cs.id, -1, from, cs.br.state})
			}
		}
		cs.br.recovered = max(cs.br.recovered, rec.Rec)
	case kindKey:
		if rec.W <= cs.resetAt || rec.Key < 0 {
			break
		}
		ks := cs.keyState(rec.Key)
		if rec.Clr > ks.clearedAt {
			trs = append(trs, ks.clear(cs.id, rec.Key, rec.Clr)...)
		}
		if rec.W <= ks.clearedAt {
			break
		}
		if rec.At > cs.resetAt && rec.At > ks.clearedAt {
			if from, moved := ks.br.adopt(rec.State, fromNs(rec.Until), rec.Trips, rec.At, rec.Forced, rec.Force); moved {
				trs = append(trs, transition{cs.id, rec.Key, from, ks.br.state})
			}
		}
		if c := fromNs(rec.Cool); c.After(ks.cool) {
			ks.cool, ks.pubCool = c, c
		}
		if d := fromNs(rec.Off); d.After(ks.off) {
			ks.off = d
		}
		if rec.Err != "" {
			ks.lastErr = rec.Err
		}
	case kindModel:
		if rec.At <= cs.resetAt || rec.Model == "" {
			break
		}
		if ms := cs.model(rec.Model); rec.At > ms.at {
			ms.until, ms.at = fromNs(rec.Off), rec.At
		}
	}
	cs.mu.Unlock()
	t.fire(trs)
}

// after runs the hooks and shares the changes, outside every lock.
func (t *Tracker) after(trs []transition, sh []share) {
	t.fire(trs)
	if len(sh) == 0 || (t.cache == nil && t.bus == nil) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	for _, s := range sh {
		s.rec.Node = t.node
		b, _ := json.Marshal(s.rec)
		if t.cache != nil {
			var err error
			if s.ttl > 0 {
				err = t.cache.Set(ctx, s.key, b, s.ttl)
			} else {
				err = t.cache.Del(ctx, s.key)
			}
			if err != nil {
				t.warn("health: cache write failed", "key", s.key, "err", err)
			}
		}
		if s.publish && t.bus != nil {
			if err := t.bus.Publish(ctx, t.ns, string(b)); err != nil {
				t.warn("health: publish failed", "key", s.key, "err", err)
			}
		}
	}
}

// longest is how long a Reset marker matters: until everything it cleared would have expired anyway.
func (t *Tracker) longest() time.Duration {
	return max(t.cfg.AuthDisable, t.cfg.ModelDisable, t.cfg.MaxCooldown+t.cfg.Window)
}

// breakerTTL is how long a breaker's state matters to a node that reads it late.
func (t *Tracker) breakerTTL(b *breaker, now time.Time) time.Duration {
	if b.forceAt > 0 {
		return max(time.Unix(0, b.forceAt).Add(forcedHold).Sub(now), t.cfg.Window)
	}
	switch b.state {
	case StateOpen:
		return b.until.Sub(now) + t.cfg.Window
	case StateHalfOpen:
		return t.cfg.Window
	}
	return 0
}

// chShare renders the channel's breaker for the cache and the bus. Called under cs.mu.
func (t *Tracker) chShare(cs *channelState, now time.Time) share {
	ttl := t.breakerTTL(&cs.br, now)
	if cs.resetAt > 0 {
		ttl = max(ttl, time.Unix(0, cs.resetAt).Add(t.longest()).Sub(now))
	}
	if cs.br.recovered > 0 {
		ttl = max(ttl, time.Unix(0, cs.br.recovered).Add(t.cfg.RampHold).Sub(now))
	}
	return share{key: t.chKey(cs.id), ttl: ttl, publish: true, rec: record{
		Kind: kindChannel, Ch: cs.id, State: cs.br.state, Until: ns(cs.br.until), Trips: cs.br.trips,
		At: cs.br.changedAt, ResetAt: cs.resetAt, Rec: cs.br.recovered, Forced: cs.br.forced, Force: cs.br.forceAt,
	}}
}

// keyShare renders a key's whole state. Called under cs.mu.
func (t *Tracker) keyShare(cs *channelState, k int, ks *keyState, now time.Time) share {
	ttl := max(t.breakerTTL(&ks.br, now), ks.cool.Sub(now), ks.off.Sub(now))
	if ks.clearedAt > 0 {
		ttl = max(ttl, time.Unix(0, ks.clearedAt).Add(t.longest()).Sub(now))
	}
	return share{key: t.keyKey(cs.id, k), ttl: ttl, publish: true, rec: record{
		Kind: kindKey, Ch: cs.id, Key: k, State: ks.br.state, Until: ns(ks.br.until), Trips: ks.br.trips,
		At: ks.br.changedAt, W: t.stamp(now), Cool: ns(ks.cool), Off: ns(ks.off), Err: ks.lastErr, Clr: ks.clearedAt,
		Forced: ks.br.forced, Force: ks.br.forceAt,
	}}
}

// modelShare renders a model exclusion (or its end). Called under cs.mu.
func (t *Tracker) modelShare(cs *channelState, model string, ms *modelState, now time.Time) share {
	return share{key: t.modelKey(cs.id, model), ttl: ms.until.Sub(now), publish: true, rec: record{
		Kind: kindModel, Ch: cs.id, Model: model, At: ms.at, Off: ns(ms.until),
	}}
}

// warn logs at most once per warnEvery of real time, so an outage does not flood the log.
func (t *Tracker) warn(msg string, args ...any) {
	now := time.Now().UnixNano()
	last := t.lastWarn.Load()
	if now-last < int64(warnEvery) || !t.lastWarn.CompareAndSwap(last, now) {
		return
	}
	slog.Warn(msg, args...)
}

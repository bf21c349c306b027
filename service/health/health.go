// Package health keeps a three-state circuit breaker (CLOSED → OPEN → HALF_OPEN) per channel and per key,
// key cooldowns and disables, per-channel model exclusions and live metrics. Counting is per node; every
// transition is written to the shared cache and announced on the bus so all nodes avoid a bad channel at once.
//
// One attempt in the relay:
//
//	if !t.ModelAllowed(ch, model) || !t.Available(ch) { skip }      // filtering: takes no probe slot
//	ok, probe := t.Allow(ch)                                          // the candidate about to be tried
//	if !ok { next candidate }
//	key := first k with t.KeyAllowed(ch, k)                         // skips cooling, disabled, spent budgets
//	end, ok := t.TryBegin(ch, key, chCap, keyCap)                     // or Begin, uncapped; !ok: next key
//	... send ...
//	end(); t.Record(Outcome{ChannelID: ch, Key: key, Class: class, Probe: probe, RateLimitRemaining: -1 or the header, ...})
//
// A passing channel test (TestPassed) clears only the tested key and turns an OPEN channel HALF_OPEN; a channel
// that closes after being OPEN ramps back: RampShare is the share of its weight the relay should give it.
//
// Every attempt admitted by Allow must be recorded (Probe copied from Allow), or its probe slot is held for one
// Window. HALF_OPEN admits HalfOpenProbes probes per node, so N nodes probe with up to N×HalfOpenProbes.
// A node reads the cache lazily, at most once a second per channel, key and model, and again after the bus
// reports missed messages. An admin can Force a breaker open (held until the next Force), closed, half open
// or reset; that travels the same way. Config.Namespace keeps trackers of different things (channels, routes)
// apart on one cache and bus.
package health

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"sync/atomic"
	"time"

	"tollgate/service/bus"
	"tollgate/service/cache"
)

// State is a breaker state.
type State string

// Breaker states.
const (
	// StateClosed lets all traffic through.
	StateClosed State = "closed"
	// StateOpen refuses traffic until the cooldown ends.
	StateOpen State = "open"
	// StateHalfOpen admits a few probe requests that decide between CLOSED and OPEN.
	StateHalfOpen State = "half_open"
)

// Class is the relay's error class of one attempt; the empty class is a success.
type Class string

// Error classes, spelled as the relay spells them.
const (
	// ClassSuccess is a successful attempt.
	ClassSuccess Class = ""
	// ClassRateLimited is an upstream 429: cools the key only.
	ClassRateLimited Class = "rate_limited"
	// ClassAuth is a 401/403 or invalid-key reply: disables the key only.
	ClassAuth Class = "auth"
	// ClassUpstreamQuota is an exhausted upstream balance: disables the key like ClassAuth.
	ClassUpstreamQuota Class = "upstream_quota"
	// ClassServer is an upstream 5xx: a breaker failure.
	ClassServer Class = "server"
	// ClassTimeout is a connect, first-byte or idle timeout: a breaker failure.
	ClassTimeout Class = "timeout"
	// ClassReset is a dropped connection: a breaker failure.
	ClassReset Class = "reset"
	// ClassClient is a 4xx caused by the request: no health impact.
	ClassClient Class = "client"
	// ClassModelUnsupported means the channel does not serve the model: the model is excluded on that channel.
	ClassModelUnsupported Class = "model_unsupported"
	// ClassBadReply is an unparseable upstream reply: a breaker failure.
	ClassBadReply Class = "bad_reply"
	// ClassCanceled is a client that went away: no health impact.
	ClassCanceled Class = "canceled"
)

// Failure reports whether the class counts as a breaker failure.
func (c Class) Failure() bool {
	switch c {
	case ClassServer, ClassTimeout, ClassReset, ClassBadReply:
		return true
	}
	return false
}

// Config tunes the breakers; zero fields take the defaults noted.
type Config struct {
	Window            time.Duration // sliding window for failure counting (default 60s)
	MinRequests       int           // minimum outcomes in window before the ratio can trip (default 5)
	FailureRatio      float64       // trip when failures/total ≥ this in window (default 0.5) ...
	ConsecutiveFails  int           // ... or after this many consecutive failures (default 5)
	BaseCooldown      time.Duration // first OPEN duration (default 30s); doubles on each re-trip
	MaxCooldown       time.Duration // cap of the OPEN duration (default 10m)
	HalfOpenProbes    int           // concurrent probes admitted in HALF_OPEN per node (default 1)
	CloseAfter        int           // consecutive probe successes that close (default 2)
	RateLimitCooldown time.Duration // key cooldown after a 429 with no reset hint (default 30s)
	AuthDisable       time.Duration // how long auth/upstream_quota disables a key (default 24h)
	ModelDisable      time.Duration // how long model_unsupported excludes a model (default 24h)
	RampHold          time.Duration // how long a channel's recovery time stays shared: the longest ramp (default 1h)
	// Namespace prefixes every cache key the tracker writes and names its bus topic (default "health"), so
	// trackers of different things (channels, routes) on one cache and bus share nothing.
	Namespace string
}

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	defInt := func(d *int, v int) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.Window, 60*time.Second)
	defInt(&c.MinRequests, 5)
	if c.FailureRatio <= 0 || c.FailureRatio > 1 {
		c.FailureRatio = 0.5
	}
	defInt(&c.ConsecutiveFails, 5)
	def(&c.BaseCooldown, 30*time.Second)
	def(&c.MaxCooldown, 10*time.Minute)
	if c.MaxCooldown < c.BaseCooldown {
		c.MaxCooldown = c.BaseCooldown
	}
	defInt(&c.HalfOpenProbes, 1)
	defInt(&c.CloseAfter, 2)
	def(&c.RateLimitCooldown, 30*time.Second)
	def(&c.AuthDisable, 24*time.Hour)
	def(&c.ModelDisable, 24*time.Hour)
	def(&c.RampHold, time.Hour)
	if c.Namespace == "" {
		c.Namespace = Topic
	}
	return c
}

// Target names a channel (Key -1) or one key of a channel.
type Target struct {
	ChannelID int64
	Key       int
}

// Outcome is what the relay learned from one attempt.
type Outcome struct {
	ChannelID  int64
	Key        int // -1 when no key is known
	Model      string
	Class      Class
	Status     int
	Latency    time.Duration
	FirstByte  time.Duration
	RetryAfter time.Duration // from Retry-After on a 429
	Probe      bool          // the attempt was admitted as a HALF_OPEN probe by Allow
	Err        string
	// RateLimitRemaining is the upstream's remaining-requests header, -1 when the reply had none. 0 is an
	// exhausted budget: the key is skipped until RateLimitReset (or for RateLimitCooldown without one), so a
	// caller that does not know must say -1.
	RateLimitRemaining int64
	RateLimitReset     time.Time // upstream's reset time, zero if unknown
}

// ChannelHealth is the admin view of one channel.
type ChannelHealth struct {
	State             State       `json:"state"`
	CooldownUntil     *time.Time  `json:"cooldown_until,omitempty"`
	Trips             int         `json:"trips"`
	RecoveredAt       *time.Time  `json:"recovered_at,omitempty"` // last close from OPEN: the traffic ramp's start
	Forced            bool        `json:"forced"`                 // held OPEN by an admin (Force) until the next Force
	Keys              []KeyHealth `json:"keys"`
	Metrics           Metrics     `json:"metrics"`
	UnsupportedModels []string    `json:"unsupported_models"`
}

// KeyHealth is the admin view of one key; State is "ok", "cooling", "disabled", "open" or "half_open".
type KeyHealth struct {
	Index         int        `json:"index"`
	State         string     `json:"state"`
	CooldownUntil *time.Time `json:"cooldown_until,omitempty"`
	LastError     string     `json:"last_error,omitempty"`
	Forced        bool       `json:"forced"` // the key's breaker is held OPEN by an admin (Force)
	Metrics       Metrics    `json:"metrics"`
}

// Metrics are the live numbers of a channel or key.
type Metrics struct {
	Counts             map[string]WindowCounts `json:"counts"`       // "1m", "1h", "24h"
	SuccessRate        float64                 `json:"success_rate"` // over 1h, 1 when no traffic
	LatencyEWMAms      float64                 `json:"latency_ewma_ms"`
	FirstByteEWMAms    float64                 `json:"first_byte_ewma_ms"`
	LatencyP50ms       float64                 `json:"latency_p50_ms"`
	LatencyP95ms       float64                 `json:"latency_p95_ms"`
	LatencyP99ms       float64                 `json:"latency_p99_ms"`
	FirstByteP50ms     float64                 `json:"first_byte_p50_ms"`
	FirstByteP95ms     float64                 `json:"first_byte_p95_ms"`
	FirstByteP99ms     float64                 `json:"first_byte_p99_ms"`
	Active             int64                   `json:"active"`
	LastError          string                  `json:"last_error,omitempty"`
	LastErrorAt        *time.Time              `json:"last_error_at,omitempty"`
	RateLimitRemaining int64                   `json:"rate_limit_remaining"` // last known budget, -1 if never reported
	RateLimitReset     *time.Time              `json:"rate_limit_reset,omitempty"`
}

// WindowCounts counts outcomes in one window; ByClass keys are class names, "success" for successes.
type WindowCounts struct {
	Total   int64            `json:"total"`
	ByClass map[string]int64 `json:"by_class"`
}

// TransitionFunc observes a breaker transition; key is -1 for the channel breaker.
type TransitionFunc func(channelID int64, key int, from, to State)

// Tracker holds the health of every channel this node has seen. All methods are safe for concurrent use.
type Tracker struct {
	cfg   Config
	cache cache.Cache // may be nil: no sharing
	bus   bus.Bus     // may be nil: no sharing
	now   func() time.Time
	node  string
	ns    string // cache key prefix and bus topic (Config.Namespace)

	channels sync.Map     // int64 → *channelState
	epoch    atomic.Int64 // bumped when the bus says messages were missed: memoized cache reads are void
	lastAt   atomic.Int64 // last change stamp, strictly increasing
	lastWarn atomic.Int64 // real time of the last cache/bus warning

	hookMu sync.RWMutex
	hooks  []TransitionFunc
}

// New builds a Tracker and subscribes it to its namespace's topic on b ("health" by default); call it before
// b.Start. c and b may be nil for a single node that shares nothing; now defaults to time.Now.
func New(cfg Config, c cache.Cache, b bus.Bus, now func() time.Time) *Tracker {
	if now == nil {
		now = time.Now
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	t := &Tracker{cfg: cfg.withDefaults(), cache: c, bus: b, now: now, node: hex.EncodeToString(id[:])}
	t.ns = t.cfg.Namespace
	if b != nil {
		b.Subscribe(t.ns, t.onMessage)
	}
	return t
}

// Topic is the bus topic health transitions travel on, and the default Namespace.
const Topic = "health"

// OnTransition registers fn for every breaker transition this node sees, local or received from another node.
// fn runs outside the tracker's locks and must be quick.
func (t *Tracker) OnTransition(fn func(channelID int64, key int, from, to State)) {
	t.hookMu.Lock()
	t.hooks = append(t.hooks, fn)
	t.hookMu.Unlock()
}

// States returns the state of every channel this node tracks (for /metrics). An OPEN channel whose cooldown
// has ended is reported as half_open.
func (t *Tracker) States() map[int64]State {
	now := t.now()
	out := map[int64]State{}
	t.channels.Range(func(k, v any) bool {
		cs := v.(*channelState)
		cs.mu.Lock()
		out[k.(int64)] = cs.br.effective(now)
		cs.mu.Unlock()
		return true
	})
	return out
}

// stamp returns a strictly increasing change time in Unix nanoseconds, so that two changes on one node are
// always ordered even when the clock stands still.
func (t *Tracker) stamp(now time.Time) int64 {
	n := now.UnixNano()
	for {
		last := t.lastAt.Load()
		if n <= last {
			n = last + 1
		}
		if t.lastAt.CompareAndSwap(last, n) {
			return n
		}
	}
}

func (t *Tracker) fire(trs []transition) {
	if len(trs) == 0 {
		return
	}
	t.hookMu.RLock()
	hooks := t.hooks
	t.hookMu.RUnlock()
	for _, tr := range trs {
		for _, h := range hooks {
			h(tr.ch, tr.key, tr.from, tr.to)
		}
	}
}

type transition struct {
	ch       int64
	key      int
	from, to State
}

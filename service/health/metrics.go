package health

import (
	"math"
	"slices"
	"sync/atomic"
	"time"
)

// classSlots orders the classes counted in buckets; the last slot takes any class this package does not know.
var classSlots = []Class{
	ClassSuccess, ClassRateLimited, ClassAuth, ClassUpstreamQuota, ClassServer, ClassTimeout, ClassReset,
	ClassClient, ClassModelUnsupported, ClassBadReply, ClassCanceled,
}

const (
	nSlots     = 12 // classSlots + "other"
	otherSlot  = nSlots - 1
	nSamples   = 512
	ewmaAlpha  = 0.2
	tenSeconds = int64(10 * time.Second)
	oneMinute  = int64(time.Minute)
	oneHour    = int64(time.Hour)
)

func slotOf(c Class) int {
	for i, k := range classSlots {
		if k == c {
			return i
		}
	}
	return otherSlot
}

func slotName(i int) string {
	if i == otherSlot {
		return "other"
	}
	if i == 0 {
		return "success"
	}
	return string(classSlots[i])
}

// countBucket counts outcomes by class in one period (10 s, 1 min or 1 h).
type countBucket struct {
	period int64
	n      [nSlots]int64
}

// ring is a set of equal-width count buckets: 6×10 s for "1m", 60×1 min for "1h", 24×1 h for "24h".
type ring struct {
	width   int64
	buckets []countBucket
}

func (r *ring) add(now int64, slot int) {
	p := now / r.width
	b := &r.buckets[int(p%int64(len(r.buckets)))]
	if b.period != p {
		*b = countBucket{period: p}
	}
	b.n[slot]++
}

// sum adds the buckets of the current period and the len-1 before it.
func (r *ring) sum(now int64) (out [nSlots]int64) {
	p := now / r.width
	n := int64(len(r.buckets))
	for i := range r.buckets {
		if b := &r.buckets[i]; b.period > p-n && b.period <= p {
			for s := range out {
				out[s] += b.n[s]
			}
		}
	}
	return out
}

// samples keeps the last nSamples values; percentiles are computed on read.
type samples struct {
	v    [nSamples]float64
	n    int
	next int
	ewma float64
}

func (s *samples) add(ms float64) {
	if s.n == 0 {
		s.ewma = ms
	} else {
		s.ewma = ewmaAlpha*ms + (1-ewmaAlpha)*s.ewma
	}
	s.v[s.next] = ms
	s.next = (s.next + 1) % nSamples
	if s.n < nSamples {
		s.n++
	}
}

// percentiles returns nearest-rank p50, p95 and p99.
func (s *samples) percentiles() (p50, p95, p99 float64) {
	if s.n == 0 {
		return 0, 0, 0
	}
	v := slices.Clone(s.v[:s.n])
	slices.Sort(v)
	rank := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(v)))) - 1
		return v[max(0, min(i, len(v)-1))]
	}
	return rank(0.50), rank(0.95), rank(0.99)
}

// metrics are the live numbers of one channel or key, guarded by the channel's mutex except active.
type metrics struct {
	active      atomic.Int64
	min, hr, dy ring
	lat, fb     samples
	succ        float64 // EWMA of success (1) and failure (0) over outcomes the upstream answers for
	succN       int64   // outcomes in succ
	lastErr     string
	lastErrAt   time.Time
	rlRemaining int64
	rlReset     time.Time
}

func newMetrics() *metrics {
	return &metrics{
		min:         ring{width: tenSeconds, buckets: make([]countBucket, 6)},
		hr:          ring{width: oneMinute, buckets: make([]countBucket, 60)},
		dy:          ring{width: oneHour, buckets: make([]countBucket, 24)},
		rlRemaining: -1, // unknown until an upstream reports a budget
	}
}

// record counts o. Latency is sampled for successes only (a timeout's latency is the deadline, not the
// upstream's speed); first byte whenever the upstream sent one.
func (m *metrics) record(now time.Time, o *Outcome) {
	ns := now.UnixNano()
	s := slotOf(o.Class)
	m.min.add(ns, s)
	m.hr.add(ns, s)
	m.dy.add(ns, s)
	if o.Class == ClassSuccess && o.Latency > 0 {
		m.lat.add(ms(o.Latency))
	}
	if o.FirstByte > 0 {
		m.fb.add(ms(o.FirstByte))
	}
	if o.Class != ClassClient && o.Class != ClassCanceled {
		x := 0.0
		if o.Class == ClassSuccess {
			x = 1
		}
		if m.succN == 0 {
			m.succ = x
		} else {
			m.succ = ewmaAlpha*x + (1-ewmaAlpha)*m.succ
		}
		m.succN++
	}
	if o.Class != ClassSuccess {
		m.lastErr = o.Err
		if m.lastErr == "" {
			m.lastErr = string(o.Class)
		}
		m.lastErrAt = now
	}
	if o.RateLimitRemaining >= 0 { // a reply without the header leaves the last known budget standing
		m.rlRemaining = o.RateLimitRemaining
		m.rlReset = o.RateLimitReset
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// view renders the metrics. SuccessRate is successes over the last hour's outcomes that the upstream is
// answerable for (client errors and cancellations excluded); 1 with no such traffic.
func (m *metrics) view(now time.Time) Metrics {
	ns := now.UnixNano()
	out := Metrics{Counts: map[string]WindowCounts{
		"1m":  counts(m.min.sum(ns)),
		"1h":  counts(m.hr.sum(ns)),
		"24h": counts(m.dy.sum(ns)),
	}, SuccessRate: 1, Active: m.active.Load(), LastError: m.lastErr, RateLimitRemaining: m.rlRemaining}
	h := m.hr.sum(ns)
	var denom int64
	for i, n := range h {
		if i != slotOf(ClassClient) && i != slotOf(ClassCanceled) {
			denom += n
		}
	}
	if denom > 0 {
		out.SuccessRate = float64(h[0]) / float64(denom)
	}
	out.LatencyEWMAms, out.FirstByteEWMAms = m.lat.ewma, m.fb.ewma
	out.LatencyP50ms, out.LatencyP95ms, out.LatencyP99ms = m.lat.percentiles()
	out.FirstByteP50ms, out.FirstByteP95ms, out.FirstByteP99ms = m.fb.percentiles()
	if !m.lastErrAt.IsZero() {
		at := m.lastErrAt
		out.LastErrorAt = &at
	}
	if !m.rlReset.IsZero() {
		r := m.rlReset
		out.RateLimitReset = &r
	}
	return out
}

func counts(n [nSlots]int64) WindowCounts {
	wc := WindowCounts{ByClass: map[string]int64{}}
	for i, v := range n {
		if v > 0 {
			wc.ByClass[slotName(i)] = v
			wc.Total += v
		}
	}
	return wc
}

// Live is a channel's live numbers on this node, cheap to read on the request path (no percentiles).
type Live struct {
	LatencyEWMAms   float64 // of successes (0: none yet)
	FirstByteEWMAms float64
	SuccessEWMA     float64 // of outcomes the upstream answers for (client errors and cancellations left out)
	Samples         int64   // outcomes in SuccessEWMA
	Active          int64   // attempts in flight
}

// Live returns the channel's live numbers on this node.
func (t *Tracker) Live(channelID int64) Live {
	v, ok := t.channels.Load(channelID)
	if !ok {
		return Live{}
	}
	cs := v.(*channelState)
	cs.mu.Lock()
	out := Live{LatencyEWMAms: cs.m.lat.ewma, FirstByteEWMAms: cs.m.fb.ewma, SuccessEWMA: cs.m.succ, Samples: cs.m.succN}
	cs.mu.Unlock()
	out.Active = cs.m.active.Load()
	return out
}

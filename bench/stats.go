package main

import (
	"math"
	"slices"
	"time"
)

// Summary condenses one target's samples in one phase.
type Summary struct {
	N      int     `json:"n"`
	Errors int     `json:"errors"`
	RPS    float64 `json:"rps,omitempty"`
	P50    float64 `json:"p50_ms"`
	P90    float64 `json:"p90_ms"`
	P99    float64 `json:"p99_ms"`
	Mean   float64 `json:"mean_ms"`
	Max    float64 `json:"max_ms"`
	// FirstError is one error message, to show why requests failed.
	FirstError string `json:"first_error,omitempty"`
}

// percentile returns the nearest-rank p-th percentile (0 < p ≤ 100) of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// summarize sorts ds in place and computes its summary.
func summarize(ds []time.Duration) Summary {
	slices.Sort(ds)
	s := Summary{N: len(ds)}
	if len(ds) == 0 {
		return s
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	s.P50, s.P90, s.P99 = ms(percentile(ds, 50)), ms(percentile(ds, 90)), ms(percentile(ds, 99))
	s.Mean, s.Max = ms(sum/time.Duration(len(ds))), ms(ds[len(ds)-1])
	return s
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// ratio is a/b, or NaN when b is zero (shown as "n/a").
func ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

// medianAt is the median, over streams, of the i-th event's arrival offset; ok is false when fewer than half
// the streams have that event.
func medianAt(arrivals [][]time.Duration, i int) (time.Duration, bool) {
	var col []time.Duration
	for _, a := range arrivals {
		if i < len(a) {
			col = append(col, a[i])
		}
	}
	if len(col) == 0 || len(col)*2 < len(arrivals) {
		return 0, false
	}
	slices.Sort(col)
	return percentile(col, 50), true
}

// gaps collects the pauses before events from..to (inclusive) of every stream.
func gaps(arrivals [][]time.Duration, from, to int) []time.Duration {
	var out []time.Duration
	for _, a := range arrivals {
		for i := max(from, 1); i < len(a) && i <= to; i++ {
			out = append(out, a[i]-a[i-1])
		}
	}
	return out
}

// maxLag is the largest, over event indexes, of how much later the median stream of t saw event i than the
// median stream of ref did.
func maxLag(t, ref [][]time.Duration) time.Duration {
	var worst time.Duration
	for i := 0; ; i++ {
		a, ok1 := medianAt(t, i)
		b, ok2 := medianAt(ref, i)
		if !ok1 || !ok2 {
			return worst
		}
		worst = max(worst, a-b)
	}
}

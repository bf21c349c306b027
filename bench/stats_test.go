package main

import (
	"math"
	"testing"
	"time"
)

func TestPercentile_NearestRank(t *testing.T) {
	ds := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	tests := []struct {
		p    float64
		want time.Duration
	}{{50, 5}, {90, 9}, {99, 10}, {100, 10}, {1, 1}, {0, 1}}
	for _, tt := range tests {
		if got := percentile(ds, tt.p); got != tt.want {
			t.Errorf("p%v = %v, want %v", tt.p, got, tt.want)
		}
	}
	if percentile(nil, 50) != 0 {
		t.Error("empty")
	}
}

func TestSummarize_SortsAndReportsMilliseconds(t *testing.T) {
	s := summarize([]time.Duration{3 * time.Millisecond, time.Millisecond, 2 * time.Millisecond})
	if s.N != 3 || s.P50 != 2 || s.Max != 3 || s.Mean != 2 || s.P99 != 3 {
		t.Fatalf("%+v", s)
	}
	if z := summarize(nil); z.N != 0 || z.P50 != 0 {
		t.Fatalf("%+v", z)
	}
}

func TestRatio_ZeroDenominatorIsNaN(t *testing.T) {
	if !math.IsNaN(ratio(1, 0)) || ratio(3, 2) != 1.5 {
		t.Fatal("ratio")
	}
}

func TestMaxLag_DetectsAStreamOneFrameBehind(t *testing.T) {
	ms := time.Millisecond
	ref := [][]time.Duration{{1 * ms, 6 * ms, 11 * ms}, {1 * ms, 6 * ms, 11 * ms}}
	onTime := [][]time.Duration{{2 * ms, 7 * ms, 12 * ms}, {2 * ms, 7 * ms, 12 * ms}}
	behind := [][]time.Duration{{6 * ms, 11 * ms, 12 * ms}, {6 * ms, 11 * ms, 12 * ms}}
	if got := maxLag(onTime, ref); got != ms {
		t.Errorf("on time lag %v", got)
	}
	if got := maxLag(behind, ref); got != 5*ms {
		t.Errorf("one frame behind lag %v", got)
	}
	if g := gaps(ref, 1, 99); len(g) != 4 || g[0] != 5*ms {
		t.Errorf("gaps %v", g)
	}
}

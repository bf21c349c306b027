package pricing

import (
	"testing"

	"github.com/shopspring/decimal"
)

func TestUnitsFor(t *testing.T) {
	for _, c := range []struct {
		amount, rate string
		want         int64
		ok           bool
	}{
		{"10.00", "7.3", 1_369_863, true}, // 1,369,863.01…
		{"10.00", "1", 10_000_000, true},
		{"0.0000005", "1", 1, true},  // exactly half a unit rounds away from zero
		{"0.00000049", "1", 0, true}, // below half
		{"1", "3", 333_333, true},    // 333,333.33…
		{"2", "3", 666_667, true},    // 666,666.66…
		{"0.000001", "0.000002", 500_000, true},
		{"1", "0", 0, false},
		{"1", "-1", 0, false},
		{"-1", "1", 0, false},
		{"99999999999999999999", "1", 0, false}, // past MaxCost
	} {
		got, ok := UnitsFor(decimal.RequireFromString(c.amount), decimal.RequireFromString(c.rate))
		if got != c.want || ok != c.ok {
			t.Errorf("UnitsFor(%s, %s) = %d, %v; want %d, %v", c.amount, c.rate, got, ok, c.want, c.ok)
		}
	}
}

func TestPercent_RoundsHalfAwayFromZeroOnce(t *testing.T) {
	for _, c := range []struct {
		units   int64
		percent string
		want    int64
	}{
		{1_369_863, "5", 68_493},   // 68,493.15
		{1_369_865, "10", 136_987}, // 136,986.5: half away from zero
		{1_369_863, "10", 136_986}, // 136,986.3
		{3, "50", 2},               // 1.5
		{1, "50", 1},               // 0.5
		{1, "49.99", 0},            // 0.4999
		{10_000_000, "12.34", 1_234_000},
		{7, "0.01", 0}, // 0.0007
		{50, "1", 1},   // 0.5
		{1_000_000, "100", 1_000_000},
		{1_000_000, "0", 0},
		{0, "5", 0},
		{-100, "5", 0},
		{100, "-5", 0},
		{1 << 62, "100", MaxCost}, // clamped
	} {
		if got := Percent(c.units, decimal.RequireFromString(c.percent)); got != c.want {
			t.Errorf("Percent(%d, %s) = %d, want %d", c.units, c.percent, got, c.want)
		}
	}
}

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

package pricing

import (
	"testing"

	"github.com/shopspring/decimal"
)

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func TestCost_ExactUnits(t *testing.T) {
	cases := []struct {
		name  string
		p     Price
		ratio string
		u     Usage
		want  int64
	}{
		{"contract example", Price{Input: d("1"), Output: d("2")}, "1", Usage{Input: 10, Output: 20}, 50},
		{"group ratio", Price{Input: d("1"), Output: d("2")}, "1.5", Usage{Input: 10, Output: 20}, 75},
		{"cache prices", Price{Input: d("3"), Output: d("15"), CacheRead: d("0.3"), CacheWrite: d("3.75")}, "1", Usage{Input: 100, Output: 10, CacheRead: 1000, CacheWrite: 200}, 300 + 150 + 300 + 750},
		{"per call wins", Price{Input: d("1"), PerCall: d("0.01")}, "1", Usage{Input: 1000}, 10000},
		{"rounds half away from zero once", Price{Input: d("0.15")}, "1", Usage{Input: 3}, 0},
		{"sub-unit sums round once not per part", Price{Input: d("0.25"), Output: d("0.25")}, "1", Usage{Input: 1, Output: 1}, 1},
		{"zero ratio", Price{Input: d("1")}, "0", Usage{Input: 10}, 0},
		{"2^62 output tokens saturate", Price{Input: d("1"), Output: d("2")}, "1", Usage{Input: 10, Output: 1 << 62}, MaxCost},
		{"2^63-1 output tokens saturate", Price{Input: d("1"), Output: d("15")}, "1.5", Usage{Output: 1<<63 - 1}, MaxCost},
		{"negative usage costs nothing", Price{Input: d("1"), Output: d("2")}, "1", Usage{Input: 10, Output: -100}, 0},
	}
	for _, tc := range cases {
		if got := Cost(tc.p, d(tc.ratio), tc.u); got != tc.want {
			t.Errorf("%s: got %d want %d", tc.name, got, tc.want)
		}
	}
}

// MulRatio is the product in every case, also when it skips the multiplication for a one on either side.
func TestMulRatio(t *testing.T) {
	for _, c := range [][3]string{{"1", "0.8", "0.8"}, {"1.5", "1", "1.5"}, {"1.5", "0.8", "1.2"}, {"1.0", "1.00", "1"}, {"0", "1", "0"}} {
		if got := MulRatio(d(c[0]), d(c[1])); !got.Equal(d(c[2])) {
			t.Errorf("MulRatio(%s, %s) = %s, want %s", c[0], c[1], got, c[2])
		}
	}
}

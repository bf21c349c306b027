package fleet

import (
	"math"
	"time"
)

// The latency sketch is a fixed histogram with exponential bounds: bucket i counts values ≤ 2^i ms (the last
// one everything above). Histograms of any nodes and minutes merge by adding counts, so percentiles of a
// fleet and a day come from the same data as a minute's, at the cost of a factor-2 bucket width (reported as
// the geometric middle of the bucket).
const histBuckets = 23 // 1 ms … 2^21 ms (35 min), then +Inf

func bucketOf(d time.Duration) int {
	ms := d.Milliseconds()
	i := 0
	for i < histBuckets-1 && ms > int64(1)<<i {
		i++
	}
	return i
}

func addHist(dst *[]int64, src []int64) {
	if len(*dst) < histBuckets {
		grown := make([]int64, histBuckets)
		copy(grown, *dst)
		*dst = grown
	}
	for i := 0; i < len(src) && i < histBuckets; i++ {
		(*dst)[i] += src[i]
	}
}

// quantile estimates the q-quantile (0 < q ≤ 1) in milliseconds from a histogram (0 when it is empty).
func quantile(h []int64, q float64) float64 {
	var n int64
	for _, c := range h {
		n += c
	}
	if n == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(n)))
	var seen int64
	for i, c := range h {
		if seen += c; seen >= rank {
			if i == 0 {
				return 1
			}
			return math.Sqrt(float64(int64(1)<<(i-1)) * float64(int64(1)<<i)) // between 2^(i-1) and 2^i
		}
	}
	return float64(int64(1) << (histBuckets - 1))
}

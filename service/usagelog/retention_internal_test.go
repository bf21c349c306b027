package usagelog

import (
	"testing"
	"time"
)

func TestNextChunk_FollowsTheStatementTime(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		size       int
		took       time.Duration
		most, want int
	}{
		{200, 10 * ms, 5000, 300},    // well under half the budget: ×1.5
		{4000, 10 * ms, 5000, 5000},  // never over the most
		{1000, 200 * ms, 5000, 1000}, // between half and the whole budget: kept
		{1000, 500 * ms, 5000, 500},  // twice the budget: halved
		{1000, 2000 * ms, 5000, 125}, // 8× the budget: in proportion
		{1000, 300 * ms, 5000, 500},  // just over: at least halved
		{30, 2000 * ms, 5000, 20},    // never under the floor
		{10, 2000 * ms, 10, 10},      // unless the most is under it
		{5000, 250 * ms, 5000, 5000}, // exactly the budget: kept
		{minChunk, 1 * ms, 5000, 30}, // grows back from the floor
		{3, 1 * ms, 5000, minChunk},  // a first chunk under the floor is lifted to it
	} {
		if got := nextChunk(c.size, c.took, 250*ms, c.most); got != c.want {
			t.Errorf("nextChunk(%d, %s, 250ms, %d) = %d, want %d", c.size, c.took, c.most, got, c.want)
		}
	}
}

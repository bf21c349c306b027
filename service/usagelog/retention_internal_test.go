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

func TestRestAfter_DeletesNoFasterThanTheServerAbsorbs(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct{ took, pause, want time.Duration }{
		{10 * ms, 100 * ms, 100 * ms},   // a quick chunk: the set pause
		{200 * ms, 100 * ms, 200 * ms},  // within the budget: as long as it took (busy half the time at most)
		{250 * ms, 100 * ms, 250 * ms},  // exactly the budget: still half the time
		{600 * ms, 100 * ms, 2400 * ms}, // over the budget: 4× as long, to let the server flush
		{10 * ms, 0, 10 * ms},           // no pause set: still never busier than half the time
	} {
		if got := restAfter(c.took, 250*ms, c.pause); got != c.want {
			t.Errorf("restAfter(%s, 250ms, %s) = %s, want %s", c.took, c.pause, got, c.want)
		}
	}
}

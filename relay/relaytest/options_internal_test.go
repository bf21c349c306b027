package relaytest

import "testing"

// FailShare fails exactly fail of every of requests, spread out (no two failures in a row at 3 of 10).
func TestFailShare_SetsASuccessRate(t *testing.T) {
	b := defaultBehavior().apply(FailShare(3, 10, Fault{Kind: FaultStatus, Status: 500}))
	var got []bool
	for range 100 {
		got = append(got, b.shouldFail())
	}
	n := 0
	for i, f := range got {
		if f {
			n++
			if i > 0 && got[i-1] {
				t.Fatalf("two failures in a row at %d", i)
			}
		}
	}
	if n != 30 {
		t.Fatalf("failed %d of 100, want 30", n)
	}
}

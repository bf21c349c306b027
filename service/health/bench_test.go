package health

import (
	"testing"
	"time"

	"tollgate/service/bus"
	"tollgate/service/cache"
)

// BenchmarkHotPath is one routed attempt on a healthy channel: Allow, KeyAllowed, ModelAllowed, Begin, Record.
func BenchmarkHotPath(b *testing.B) {
	tr := New(testConfig(), cache.NewMemory(), bus.NewMemory(), time.Now)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if ok, _ := tr.Allow(1); !ok || !tr.KeyAllowed(1, 0) || !tr.ModelAllowed(1, "m") {
				b.Fatal("refused")
			}
			end := tr.Begin(1, 0)
			tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 0, Model: "m", Latency: time.Millisecond, FirstByte: time.Millisecond})
			end()
		}
	})
}

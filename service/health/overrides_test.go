package health

import (
	"testing"
	"time"
)

func TestSetChannelConfig_ChannelThresholdsOverrideDefaults(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	tr := New(Config{}, nil, nil, func() time.Time { return now })
	tr.SetChannelConfig(1, Overrides{ConsecutiveFails: 2, BaseCooldownMs: 1000})
	for _, id := range []int64{1, 2} {
		for i := 0; i < 2; i++ {
			tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: id, Key: 0, Class: ClassServer, Status: 500, Latency: time.Millisecond})
		}
	}
	if tr.Available(1) {
		t.Fatal("channel 1 opens after its own 2 consecutive failures")
	}
	if !tr.Available(2) {
		t.Fatal("channel 2 keeps the default threshold (5) and stays closed")
	}
	now = now.Add(1100 * time.Millisecond)
	if !tr.Available(1) {
		t.Fatal("channel 1's own 1 s cooldown has passed: it admits a probe")
	}
}

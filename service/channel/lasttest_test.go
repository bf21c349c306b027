package channel

import (
	"context"
	"testing"
	"time"

	"tollgate/service/cache"
)

func TestLastTests_RemembersTheLatestPerChannel(t *testing.T) {
	ctx := context.Background()
	l := LastTests{Cache: cache.NewMemory()}
	if got, err := l.Get(ctx, 1); got != nil || err != nil {
		t.Fatalf("untested = %+v, %v", got, err)
	}
	at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	if err := l.Remember(ctx, TestResult{ChannelID: 1, OK: false, LatencyMs: 30, ErrorClass: "reset"}, at); err != nil {
		t.Fatal(err)
	}
	if err := l.Remember(ctx, TestResult{ChannelID: 2, OK: true, LatencyMs: 12}, at); err != nil {
		t.Fatal(err)
	}
	if err := l.Remember(ctx, TestResult{ChannelID: 1, OK: true, LatencyMs: 40}, at.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	got, err := l.Get(ctx, 1)
	if err != nil || got == nil || !got.OK || got.LatencyMs != 40 || got.ErrorClass != "" || !got.At.Equal(at.Add(time.Minute)) {
		t.Fatalf("channel 1 = %+v, %v (want the later pass)", got, err)
	}
	if got, _ := l.Get(ctx, 2); got == nil || got.LatencyMs != 12 {
		t.Fatalf("channel 2 = %+v", got)
	}
	if got, err := (LastTests{}).Get(ctx, 1); got != nil || err != nil {
		t.Fatalf("no cache = %+v, %v", got, err)
	}
}

package health

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestTryBegin_NeverExceedsTheCapsUnderConcurrency runs 50 goroutines against one channel with two keys:
// at no moment may a key carry more than keyCap attempts or the channel more than chCap.
func TestTryBegin_NeverExceedsTheCapsUnderConcurrency(t *testing.T) {
	const chCap, keyCap, workers, rounds = 5, 3, 50, 40
	tr, _ := newSolo(t, testConfig())
	var inKey [2]atomic.Int64
	var inCh, peakKey, peakCh, admitted, refused atomic.Int64
	peak := func(p *atomic.Int64, v int64) {
		for {
			old := p.Load()
			if v <= old || p.CompareAndSwap(old, v) {
				return
			}
		}
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				k := (w + r) % 2
				end, ok := tr.TryBegin(1, k, chCap, keyCap)
				if !ok {
					refused.Add(1)
					end() // a refusal's end is a harmless no-op
					continue
				}
				admitted.Add(1)
				peak(&peakKey, inKey[k].Add(1))
				peak(&peakCh, inCh.Add(1))
				time.Sleep(50 * time.Microsecond)
				inCh.Add(-1)
				inKey[k].Add(-1)
				end()
				end() // ending twice counts once
			}
		})
	}
	wg.Wait()
	if peakKey.Load() > keyCap || peakCh.Load() > chCap {
		t.Fatalf("peak %d per key (cap %d), %d per channel (cap %d)", peakKey.Load(), keyCap, peakCh.Load(), chCap)
	}
	if admitted.Load() == 0 || refused.Load() == 0 {
		t.Fatalf("admitted %d, refused %d: the caps were not exercised", admitted.Load(), refused.Load())
	}
	h := tr.Snapshot(1, 2)
	if h.Metrics.Active != 0 || h.Keys[0].Metrics.Active != 0 || h.Keys[1].Metrics.Active != 0 {
		t.Fatalf("active counters leaked: %d / %d / %d", h.Metrics.Active, h.Keys[0].Metrics.Active, h.Keys[1].Metrics.Active)
	}
	t.Logf("admitted %d, refused %d, peak %d per key, %d per channel", admitted.Load(), refused.Load(), peakKey.Load(), peakCh.Load())
}

func TestTryBegin_RefusalCountsNothing(t *testing.T) {
	tr, _ := newSolo(t, testConfig())
	end1, ok := tr.TryBegin(1, 0, 0, 1)
	if !ok {
		t.Fatal("first attempt refused")
	}
	if _, ok := tr.TryBegin(1, 0, 0, 1); ok {
		t.Fatal("key cap 1 admitted a second attempt")
	}
	if end, ok := tr.TryBegin(1, 1, 0, 1); !ok { // the sibling key has its own cap
		t.Fatal("sibling key refused")
	} else {
		end()
	}
	if h := tr.Snapshot(1, 1); h.Metrics.Active != 1 || h.Keys[0].Metrics.Active != 1 {
		t.Fatalf("a refusal was counted: channel %d, key %d", h.Metrics.Active, h.Keys[0].Metrics.Active)
	}
	// The channel cap refuses before the key is looked at; Begin (uncapped) still counts.
	endB := tr.Begin(1, 2)
	if _, ok := tr.TryBegin(1, 3, 2, 0); ok {
		t.Fatal("channel cap 2 admitted a third attempt")
	}
	if h := tr.Snapshot(1, 4); h.Metrics.Active != 2 || h.Keys[3].Metrics.Active != 0 {
		t.Fatalf("after channel refusal: channel %d, key 3 %d", h.Metrics.Active, h.Keys[3].Metrics.Active)
	}
	end1()
	endB()
	if end, ok := tr.TryBegin(1, 0, 1, 1); !ok {
		t.Fatal("caps did not free up after the attempts ended")
	} else {
		end()
	}
	// 0 means no cap, and a channel-level attempt (key -1) has no key cap.
	var ends []func()
	for range 100 {
		end, ok := tr.TryBegin(1, -1, 0, 1)
		if !ok {
			t.Fatal("uncapped attempt refused")
		}
		ends = append(ends, end)
	}
	for _, e := range ends {
		e()
	}
	if h := tr.Snapshot(1, 0); h.Metrics.Active != 0 {
		t.Fatalf("active %d after all ended", h.Metrics.Active)
	}
}

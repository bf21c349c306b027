package apptest

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// RSSKB reads a field of /proc/self/status in KiB: VmRSS (resident now) or VmHWM (the peak since the last
// reset). It skips the test where there is no /proc.
func RSSKB(t testing.TB, field string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status on this system")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			return n
		}
	}
	t.Fatalf("%s not in /proc/self/status", field)
	return 0
}

// SkipUnlessMemoryPass skips a test that measures the process's memory unless it runs in make test's memory
// pass (no race detector, whose shadow memory makes RSS meaningless; nothing else of the package at the
// same time). The pass selects these tests by name: each has "RSS" in it.
func SkipUnlessMemoryPass(t testing.TB) {
	t.Helper()
	if testing.Short() || RaceEnabled {
		t.Skip("measures RSS: runs in make test-go-memory (no -race, no -short)")
	}
}

// RSSRise measures how far the process's RSS rises above where it stands now, until the returned function is
// called: it collects garbage first, samples VmRSS every 2 ms and, where the kernel lets it reset the peak
// (clear_refs 5), also reads VmHWM so a spike between samples is counted. It returns the rise in KiB.
func RSSRise(t testing.TB) (base int64, stop func() (rise int64)) {
	t.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	base = RSSKB(t, "VmRSS")
	resetPeak := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil // VmHWM := VmRSS
	var peak atomic.Int64
	peak.Store(base)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tk := time.NewTicker(2 * time.Millisecond)
		defer tk.Stop()
		for {
			if v := RSSKB(t, "VmRSS"); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-tk.C:
			}
		}
	}()
	return base, func() int64 {
		close(done)
		wg.Wait()
		top := max(peak.Load(), RSSKB(t, "VmRSS"))
		if resetPeak {
			top = max(top, RSSKB(t, "VmHWM"))
		}
		return top - base
	}
}

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"
)

// The stream-load phases: stream throughput (streams of burstChunks chunks with no pause, closed loop), many
// concurrent paced streams (frames, errors and billing rows counted), and the gateway's memory idle and under
// that load.
const (
	modelBurst  = "bench-burst" // streams of burstChunks chunks, no pause
	burstChunks = 20
)

// StreamLoad is what one target did under manyStreams concurrent paced streams.
type StreamLoad struct {
	Workers int     `json:"workers"`
	Streams int     `json:"streams"` // streams that finished inside the measuring window
	RPS     float64 `json:"streams_per_s"`
	// Sent counts every request sent in the phase (warm-up and the tail after the window included), Errors those
	// that got a non-2xx or a broken stream, LostFrames the 2xx streams that delivered a different number of
	// data events than the direct upstream's streams carry.
	Sent       int64 `json:"sent"`
	Errors     int64 `json:"errors"`
	LostFrames int64 `json:"lost_frames"`
	// BillingRows is how many usage log rows the gateway wrote for the phase (-1: not a gateway, or unread).
	BillingRows int64  `json:"billing_rows"`
	FirstError  string `json:"first_error,omitempty"`
}

// Memory is a process's resident set size, in MB, idle and under the many-streams load.
type Memory struct {
	IdleMB  float64 `json:"rss_idle_mb"`
	PeakMB  float64 `json:"rss_peak_under_load_mb"` // the highest VmRSS sampled during the phase
	AfterMB float64 `json:"rss_after_load_mb"`      // two seconds after the phase ended
}

// burstShot is a stream of burstChunks chunks sent back to back.
func burstShot() Shot { return shotStream(modelBurst) }

// streamThroughput runs the burst stream load on each target alone, in rounds like the non-stream phase.
func streamThroughput(ctx context.Context, g *Gen, cfg config, targets []Target) map[string]Summary {
	return roundsAlone(ctx, g, cfg, targets, burstShot())
}

// roundsAlone drives each target alone with cfg.concurrency closed-loop workers, cfg.rounds times, alternating.
func roundsAlone(ctx context.Context, g *Gen, cfg config, targets []Target, s Shot) map[string]Summary {
	acc := map[string]*Result{}
	for round := range cfg.rounds {
		warm := cfg.warmup
		if round > 0 {
			warm = min(cfg.warmup, 250*time.Millisecond)
		}
		for _, t := range targets {
			r := g.Closed(ctx, t, s, Phase{cfg.concurrency, warm, cfg.duration / time.Duration(cfg.rounds)})
			g.Close()
			if acc[t.Name] == nil {
				acc[t.Name] = &Result{}
			}
			acc[t.Name].merge(r)
		}
	}
	out := map[string]Summary{}
	for name, r := range acc {
		out[name] = r.Summary()
	}
	return out
}

// eventsPerStream is the number of data events one paced stream of the direct upstream carries.
func eventsPerStream(ctx context.Context, g *Gen, direct Target) (int, error) {
	s := g.Do(ctx, direct, shotStream(modelPaced))
	if s.Err != nil {
		return 0, s.Err
	}
	return len(s.Arrivals), nil
}

// manyPaced runs workers concurrent paced streams against one target alone and samples its memory.
func manyPaced(ctx context.Context, g *Gen, t Target, workers int, ph Phase, events int, mem *Memory) StreamLoad {
	before := billedRequests(ctx, t)
	begin := time.Now()
	from, end := begin.Add(ph.Warmup), begin.Add(ph.Warmup+ph.Duration)
	ctx, cancel := context.WithDeadline(ctx, end.Add(60*time.Second))
	defer cancel()
	var sent, errs, lost, inWindow atomic.Int64
	var firstErr atomic.Value
	stopSampling := sampleRSS(t.Pid, &mem.PeakMB)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil && time.Now().Before(end) {
				sent.Add(1)
				smp := g.Do(ctx, t, shotStream(modelPaced))
				switch {
				case smp.Err != nil:
					errs.Add(1)
					firstErr.CompareAndSwap(nil, smp.Err.Error())
				case len(smp.Arrivals) != events:
					lost.Add(1)
					firstErr.CompareAndSwap(nil, fmt.Sprintf("%d data events, want %d", len(smp.Arrivals), events))
				}
				if fin := time.Now(); smp.Err == nil && !fin.Before(from) && !fin.After(end) {
					inWindow.Add(1)
				}
			}
		})
	}
	wg.Wait()
	stopSampling()
	g.Close()
	st := StreamLoad{Workers: workers, Streams: int(inWindow.Load()), RPS: float64(inWindow.Load()) / ph.Duration.Seconds(),
		Sent: sent.Load(), Errors: errs.Load(), LostFrames: lost.Load(), BillingRows: -1}
	if e, ok := firstErr.Load().(string); ok {
		st.FirstError = e
	}
	if before >= 0 {
		st.BillingRows = waitBilled(ctx, t, before, st.Sent)
	}
	if t.Pid > 0 {
		time.Sleep(2 * time.Second)
		mem.AfterMB = rssMB(t.Pid)
	}
	return st
}

// sampleRSS records the highest VmRSS of pid every 100 ms into peak until the returned stop is called.
func sampleRSS(pid int, peak *float64) (stop func()) {
	if pid <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			*peak = max(*peak, rssMB(pid))
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// rssMB is the resident set size of pid in MB (VmRSS), or 0 when it cannot be read.
func rssMB(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}

// cpuSeconds is the CPU time (user + system) pid has used so far, or 0 when it cannot be read or pid is 0 (a
// target in this process, whose figure would include the load generator's own).
func cpuSeconds(pid int) float64 {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The fields after the command name (which may hold spaces) start at state: utime and stime are the 12th
	// and 13th of them, in clock ticks (USER_HZ, 100 on Linux).
	_, rest, ok := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100
}

// billedRequests is the number of relayed requests the gateway's usage logs hold for today (UTC) and the
// day before, or -1 for a target that is not a gateway.
func billedRequests(ctx context.Context, t Target) int64 {
	if t.API == nil {
		return -1
	}
	var out struct {
		Totals struct {
			Requests int64 `json:"requests"`
		} `json:"totals"`
	}
	from := time.Now().UTC().Add(-24 * time.Hour).Truncate(24 * time.Hour).Format(time.RFC3339)
	if err := t.API.call(ctx, "GET", "/api/logs/stats?from="+from, nil, &out); err != nil {
		logf("%s: read usage stats: %v", t.Name, err)
		return -1
	}
	return out.Totals.Requests
}

// waitBilled polls the gateway's usage stats until want rows more than before were written (the log writer
// batches) or 20 s pass, and returns how many were.
func waitBilled(ctx context.Context, t Target, before, want int64) int64 {
	var got int64 = -1
	for deadline := time.Now().Add(20 * time.Second); ; {
		if n := billedRequests(ctx, t); n >= 0 {
			got = n - before
		}
		if got >= want || time.Now().After(deadline) || ctx.Err() != nil {
			return got
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// printStreamLoad writes the stream throughput, many-streams and memory tables.
func (r *Report) printStreamLoad(w io.Writer, tw *tabwriter.Writer) {
	if len(r.StreamThroughput) > 0 {
		fmt.Fprintf(w, "\n4. Stream throughput: streams of %d chunks without pauses, %d workers, each target alone\n", burstChunks, r.Concurrency)
		fmt.Fprintln(tw, "target\tstreams/s\tp50 ms\tp99 ms\terrors\tstreams/s / proxy\t")
		for _, t := range r.Targets {
			s, ok := r.StreamThroughput[t]
			if !ok {
				continue
			}
			rr := num(ratio(s.RPS, r.StreamThroughput["proxy"].RPS), 2)
			if c, ok := r.check(t, "stream throughput"); ok {
				rr = verdict(c, "≥")
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t\n", t, num(s.RPS, 0), num(s.P50, 3), num(s.P99, 3), s.Errors, rr)
		}
		tw.Flush()
	}
	if len(r.ManyStreams) > 0 {
		var workers int
		for _, m := range r.ManyStreams {
			workers = m.Workers
		}
		fmt.Fprintf(w, "\n5. %d concurrent streams of %d chunks %v apart, each target alone\n", workers, pacedChunks, pacedDelay)
		fmt.Fprintln(tw, "target\tstreams/s\tsent\terrors\tlost frames\tbilling rows\tstreams/s / proxy\tRSS idle MB\tRSS peak MB\tRSS after MB\t")
		for _, t := range r.Targets {
			m, ok := r.ManyStreams[t]
			if !ok {
				continue
			}
			rr := num(ratio(m.RPS, r.ManyStreams["proxy"].RPS), 2)
			if c, ok := r.check(t, "many streams"); ok {
				rr = verdict(c, "≥")
			}
			mem := r.Memory[t]
			idle, peak := num(mem.IdleMB, 1), num(mem.PeakMB, 1)
			if c, ok := r.check(t, "RSS idle"); ok {
				idle = verdict(c, "≤")
			}
			if c, ok := r.check(t, "RSS under"); ok {
				peak = verdict(c, "≤")
			}
			rows := "-"
			if m.BillingRows >= 0 {
				rows = strconv.FormatInt(m.BillingRows, 10)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t\n", t, num(m.RPS, 0), m.Sent, m.Errors, m.LostFrames,
				rows, rr, idle, peak, num(mem.AfterMB, 1))
		}
		tw.Flush()
	}
}

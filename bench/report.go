package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Targets of the performance issue, as ratios to the plain proxy measured in the same run (memory in MB).
const (
	minRPSRatio      = 0.75 // non-stream throughput, SQLite + memory (and the translated path)
	minRPSRatioRedis = 0.80 // non-stream throughput, MariaDB + Redis
	minStreamRatio   = 0.80 // streams of burstChunks chunks, closed loop
	minManyRatio     = 0.75 // manyStreams concurrent paced streams
	maxAddedGapP99   = 0.05 // ms the gateway may add to the paced stream's inter-chunk gap p99
	maxIdleMB        = 40
	maxLoadedMB      = 200
	maxAddedRatio    = 1.3
	// maxConvertedRatio: a translated answer (OpenAI chat caller, Anthropic channel) may add up to twice
	// the latency the plain proxy adds.
	maxConvertedRatio = 2.0
	maxFramesLag      = 0.5
)

// StreamStats describes how a paced stream reached the client.
type StreamStats struct {
	Streams int     `json:"streams"`
	Errors  int     `json:"errors"`
	GapP50  float64 `json:"gap_p50_ms"`
	GapP99  float64 `json:"gap_p99_ms"`
	// PathGapP99 is the p99 of the gap the path added between consecutive chunks (each chunk's transit from
	// the upstream's send stamp minus the one before it), PathGaps how many were measured.
	PathGapP99 float64 `json:"path_gap_p99_ms"`
	PathGaps   int     `json:"path_gaps"`
	MaxLag     float64 `json:"max_lag_vs_direct_ms"`
	// CPUPerStream is the CPU time (ms) the target's process used in the phase per stream it served.
	CPUPerStream float64 `json:"cpu_ms_per_stream,omitempty"`
	FirstError   string  `json:"first_error,omitempty"`
}

// Check is one target verdict.
type Check struct {
	Target string  `json:"target"`
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Limit  float64 `json:"limit"`
	Pass   bool    `json:"pass"`
	// NA is set when the value could not be measured (for example no proxy overhead to compare with).
	NA bool `json:"na,omitempty"`
}

// Report is everything one run measured; it is printed as tables and optionally written as JSON.
type Report struct {
	Started       time.Time              `json:"started"`
	GoVersion     string                 `json:"go_version"`
	CPUs          int                    `json:"cpus"`
	Duration      string                 `json:"duration"`
	Concurrency   int                    `json:"concurrency"`
	StreamWorkers int                    `json:"stream_workers"`
	PacedFor      string                 `json:"paced_duration"`
	Targets       []string               `json:"targets"`
	Throughput    map[string]Summary     `json:"throughput"`
	Latency1      map[string]Summary     `json:"latency_c1"`
	TTFB1         map[string]Summary     `json:"stream_ttfb_c1"`
	Paced         map[string]StreamStats `json:"paced_stream"`
	// StreamThroughput is streams of burstChunks chunks per second (RPS) with Concurrency workers.
	StreamThroughput map[string]Summary    `json:"stream_throughput"`
	ManyStreams      map[string]StreamLoad `json:"many_streams"`
	Memory           map[string]Memory     `json:"memory"`
	idle             map[string]float64
	Checks           []Check  `json:"checks"`
	Notes            []string `json:"notes,omitempty"`
}

// transits are the per-stream transits of the chunks (see Sample.Transits).
func transits(r Result) [][]time.Duration {
	var tr [][]time.Duration
	for _, smp := range r.Samples {
		tr = append(tr, smp.Transits)
	}
	return tr
}

// writeGapsByChunk prints the path gap before each content chunk of the paced streams, per target: which
// chunk of a stream the added gap falls on (the last one is followed at once by the stream's end).
func writeGapsByChunk(w io.Writer, res map[string]Result) {
	names := make([]string, 0, len(res))
	for name := range res {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		tr := transits(res[name])
		var all []time.Duration
		for _, st := range tr {
			all = append(all, st...)
		}
		slices.Sort(all)
		pg := gaps(tr, 1, pacedChunks)
		slices.Sort(pg)
		q := func(ds []time.Duration, p float64) float64 { return ms(percentile(ds, p)) }
		fmt.Fprintf(w, "%s transit p50 %.3f p90 %.3f p99 %.3f p99.9 %.3f ms; path gap p95 %.3f p99 %.3f p99.5 %.3f ms\n", name,
			q(all, 50), q(all, 90), q(all, 99), q(all, 99.9), q(pg, 95), q(pg, 99), q(pg, 99.5))
		for i := 1; i < pacedChunks; i++ {
			s := summarize(gaps(tr, i, i))
			fmt.Fprintf(w, "%s chunk %d: path gap p50 %.3f p90 %.3f p99 %.3f ms\n", name, i, s.P50, s.P90, s.P99)
		}
	}
}

// pacedStats turns the paced-stream results into gaps and lag against the direct target.
func pacedStats(res map[string]Result) map[string]StreamStats {
	out := map[string]StreamStats{}
	ref := res["direct"].arrivals()
	for name, r := range res {
		arr := r.arrivals()
		// event 0 is the role chunk; content chunks are 1..pacedChunks and 2..pacedChunks follow a pause
		g := summarize(gaps(arr, 2, pacedChunks))
		pg := gaps(transits(r), 1, pacedChunks) // the path gap: each chunk's transit minus the one before it
		st := StreamStats{Streams: len(arr), Errors: r.Errors, GapP50: g.P50, GapP99: g.P99,
			MaxLag: ms(maxLag(arr, ref)), PathGapP99: summarize(pg).P99, PathGaps: len(pg)}
		if r.Err != nil {
			st.FirstError = r.Err.Error()
		}
		out[name] = st
	}
	return out
}

// isGateway reports whether a target is one the targets apply to.
func isGateway(name string) bool { return strings.HasPrefix(name, "tollgate") }

// isConverted says a target is a gateway translating the caller's protocol (its name ends in convSuffix).
func isConverted(name string) bool { return strings.HasSuffix(name, convSuffix) }

// computeChecks compares every Tollgate target with the proxy.
func (r *Report) computeChecks() {
	r.Checks = nil
	for _, t := range r.Targets {
		if !isGateway(t) {
			continue
		}
		add := func(name string, v, limit float64, pass bool) {
			c := Check{Target: t, Name: name, Value: v, Limit: limit, Pass: pass}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				c.Value, c.Pass, c.NA = 0, false, true
			}
			r.Checks = append(r.Checks, c)
		}
		if s, ok := r.Throughput[t]; ok {
			v := ratio(s.RPS, r.Throughput["proxy"].RPS)
			minRPS := minRPSRatio
			if strings.HasSuffix(t, "-mysql") {
				minRPS = minRPSRatioRedis
			}
			add("non-stream RPS / proxy", v, minRPS, v >= minRPS)
		}
		limit := maxAddedRatio
		if isConverted(t) {
			limit = maxConvertedRatio
		}
		if r.Latency1 != nil {
			v := r.addedRatio(r.Latency1, t)
			add("added latency c=1 / proxy's", v, limit, v <= limit)
		}
		if r.TTFB1 != nil {
			v := r.addedRatio(r.TTFB1, t)
			add("added stream TTFB c=1 / proxy's", v, limit, v <= limit)
		}
		if p, ok := r.Paced[t]; ok {
			v := (p.MaxLag - r.Paced["proxy"].MaxLag) / ms(pacedDelay)
			add("frames behind proxy (paced stream)", v, maxFramesLag, v < maxFramesLag && p.Errors == 0 && p.Streams > 0)
			v = p.PathGapP99 - r.Paced["proxy"].PathGapP99
			add("added gap p99 ms (paced stream)", v, maxAddedGapP99, v <= maxAddedGapP99 && p.PathGaps > 0)
		}
		r.streamChecks(t, add)
	}
}

// streamChecks adds the stream-load and memory verdicts of gateway t.
func (r *Report) streamChecks(t string, add func(name string, v, limit float64, pass bool)) {
	if s, ok := r.StreamThroughput[t]; ok {
		v := ratio(s.RPS, r.StreamThroughput["proxy"].RPS)
		add("stream throughput / proxy", v, minStreamRatio, v >= minStreamRatio && s.Errors == 0)
	}
	if m, ok := r.ManyStreams[t]; ok {
		v := ratio(m.RPS, r.ManyStreams["proxy"].RPS)
		whole := m.Errors == 0 && m.LostFrames == 0 && m.BillingRows == m.Sent
		add("many streams / proxy", v, minManyRatio, v >= minManyRatio && whole)
	}
	if m, ok := r.Memory[t]; ok {
		add("RSS idle MB", m.IdleMB, maxIdleMB, m.IdleMB > 0 && m.IdleMB <= maxIdleMB)
		add("RSS under many streams MB", m.PeakMB, maxLoadedMB, m.PeakMB > 0 && m.PeakMB <= maxLoadedMB)
	}
}

// added is a target's p50 minus the direct upstream's.
func added(m map[string]Summary, t string) float64 { return m[t].P50 - m["direct"].P50 }

func (r *Report) addedRatio(m map[string]Summary, t string) float64 {
	a := added(m, "proxy")
	if a <= 0 {
		return math.NaN()
	}
	return added(m, t) / a
}

// cpuMs prints a CPU time per stream, blank for a target whose process was not measured.
func cpuMs(v float64) string {
	if v <= 0 {
		return ""
	}
	return num(v, 3)
}

func num(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.*f", prec, v)
}

func verdict(c Check, cmp string) string {
	if c.NA {
		return "n/a"
	}
	mark := "ok"
	if !c.Pass {
		mark = "MISS"
	}
	return fmt.Sprintf("%s %s (target %s %s)", num(c.Value, 2), mark, cmp, num(c.Limit, 2))
}

func (r *Report) check(t, prefix string) (Check, bool) {
	for _, c := range r.Checks {
		if c.Target == t && strings.HasPrefix(c.Name, prefix) {
			return c, true
		}
	}
	return Check{}, false
}

// Print writes the report as tables.
func (r *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "\nTollgate benchmark  %s  %s, %d CPUs, %s per phase\n", r.Started.Format(time.RFC3339),
		r.GoVersion, r.CPUs, r.Duration)
	fmt.Fprintln(w, "All ratios are to the plain httputil.ReverseProxy measured in the same run.")

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "\n1. Non-stream chat completions, %d concurrent workers\n", r.Concurrency)
	fmt.Fprintln(tw, "target\trps\tp50 ms\tp99 ms\terrors\trps/proxy\tp50/proxy\tp99/proxy\t")
	px := r.Throughput["proxy"]
	for _, t := range r.Targets {
		s := r.Throughput[t]
		rr := num(ratio(s.RPS, px.RPS), 2)
		if c, ok := r.check(t, "non-stream RPS"); ok {
			rr = verdict(c, "≥")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t\n", t, num(s.RPS, 0), num(s.P50, 3), num(s.P99, 3),
			s.Errors, rr, num(ratio(s.P50, px.P50), 2), num(ratio(s.P99, px.P99), 2))
	}
	tw.Flush()

	fmt.Fprintln(w, "\n2. Latency added at concurrency 1 over the direct upstream (p50; targets interleaved)")
	fmt.Fprintln(tw, "target\tplain p50 ms\tadded ms\tadded/proxy's\tstream TTFB p50 ms\tadded ms\tadded/proxy's\t")
	for _, t := range r.Targets {
		l, f := r.Latency1[t], r.TTFB1[t]
		lr, fr := "", ""
		if t != "direct" {
			lr, fr = num(r.addedRatio(r.Latency1, t), 2), num(r.addedRatio(r.TTFB1, t), 2)
		}
		if c, ok := r.check(t, "added latency"); ok {
			lr = verdict(c, "≤")
		}
		if c, ok := r.check(t, "added stream TTFB"); ok {
			fr = verdict(c, "≤")
		}
		la, fa := num(added(r.Latency1, t), 3), num(added(r.TTFB1, t), 3)
		if t == "direct" {
			la, fa = "", ""
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", t, num(l.P50, 3), la, lr, num(f.P50, 3), fa, fr)
	}
	tw.Flush()

	fmt.Fprintf(w, "\n3. Streams of %d chunks %v apart, %d workers, targets interleaved, %s\n", pacedChunks, pacedDelay, r.StreamWorkers, r.PacedFor)
	fmt.Fprintln(tw, "target\tstreams\terrors\tgap p50 ms\tgap p99 ms\tgap p99/proxy\tpath gap p99 ms\tpath gap p99 − proxy's ms\tmax lag vs direct ms\tframes behind proxy\tCPU ms/stream\t")
	pp := r.Paced["proxy"]
	for _, t := range r.Targets {
		s := r.Paced[t]
		fb, pg := "", ""
		if c, ok := r.check(t, "frames behind"); ok {
			fb = verdict(c, "<")
		}
		if c, ok := r.check(t, "added gap"); ok {
			pg = verdict(c, "≤")
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", t, s.Streams, s.Errors, num(s.GapP50, 3),
			num(s.GapP99, 3), num(ratio(s.GapP99, pp.GapP99), 2), num(s.PathGapP99, 3), pg, num(s.MaxLag, 3), fb,
			cpuMs(s.CPUPerStream))
	}
	tw.Flush()
	fmt.Fprintln(w, "   path gap: how much later a chunk reached the client than the one before it, minus how much later the")
	fmt.Fprintln(w, "   upstream wrote it (send stamps in the chunks): what the path added to the gap, without the upstream's jitter")

	r.printStreamLoad(w, tw)
	r.printErrors(w)
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note:", n)
	}
}

func (r *Report) printErrors(w io.Writer) {
	for _, t := range r.Targets {
		for _, pe := range [][2]string{
			{"throughput", r.Throughput[t].FirstError}, {"latency c=1", r.Latency1[t].FirstError},
			{"stream TTFB c=1", r.TTFB1[t].FirstError}, {"paced stream", r.Paced[t].FirstError},
		} {
			if pe[1] != "" {
				fmt.Fprintf(w, "errors: %s in %s, e.g. %s\n", t, pe[0], pe[1])
			}
		}
	}
}

// WriteJSON writes the report to path.
func (r *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

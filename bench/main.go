// Command bench measures Tollgate against a plain reverse proxy, both in front of the same fake upstream.
//
// Run it from the repository root (this is what `make bench` calls):
//
//	go run ./bench                                   # SQLite + memory, and MariaDB + Redis when reachable
//	go run ./bench -duration 5s -concurrency 32 -shapes sqlite -json bench.json
//	go run ./bench -tollgate-bin ./tollgate          # skip the build (build it as `make build` does: static)
//
// It starts a relaytest fake upstream (no artificial delay) in process, a plain httputil.ReverseProxy with a
// tuned transport as a separate process, and Tollgate built as `make build` builds it (`CGO_ENABLED=0 go build
// -trimpath`) and started with PORT, SQLITE_PATH (or SQL_DSN + REDIS_URL for the mysql shape: database
// tollgate_bench is recreated and Redis db 9 flushed), SECRET_KEY, ROOT_PASSWORD and LOG_LEVEL=warn. Each
// Tollgate is set up through its API (login as root, channel → fake upstream, prices, balance, an unlimited sk-
// key). Then the same load drives every target:
//
//  1. non-stream chat completions, -concurrency closed-loop workers, each target alone for -duration in total,
//     split into -rounds slices that alternate between targets;
//  2. concurrency 1, targets interleaved request by request: plain call latency and stream time to first
//     event, reported as latency added over the direct upstream, Tollgate's added / the proxy's added;
//  3. streams of 20 chunks 5 ms apart, -stream-workers (16) interleaved for -paced-duration (60 s: a p99 of the
//     gaps from ~1,300 of them a target, as a 4-worker 8 s phase had, moved ±0.2 ms between runs of one binary;
//     from ~17,000 (30 s) the added p99 of one build still read −0.05 to +0.09 ms in four default runs, about
//     its 0.05 bar either way; ~34,000 halve the estimate's sampling variance): inter-chunk gaps, the gap the
//     path added (send stamps), how many frames behind the proxy's client Tollgate's client sees each chunk, and
//     the CPU time each target's process used per stream (/proc/<pid>/stat);
//  4. stream throughput: streams of 20 chunks without pauses, -concurrency workers, each target alone;
//  5. -many-streams (1,000) concurrent paced streams on each target alone: streams/s, errors, streams that lost
//     a frame, usage log rows written (read back through /api/logs/stats) against requests sent, and the
//     process's RSS idle (before any load), at its peak under this load and two seconds after.
//
// Targets printed next to the figures are the performance issue's (report.go): non-stream RPS ≥ 0.75 of the
// proxy (0.80 on MariaDB + Redis), stream throughput ≥ 0.80, many streams ≥ 0.75 with nothing lost, added
// latency and stream first byte ≤ 1.3× the proxy's, added gap p99 ≤ 50 µs, RSS idle ≤ 40 MB and under load
// ≤ 200 MB. The default run takes about 6 minutes on 2 cores (plus the
// first build). Subprocesses are killed on exit, also on Ctrl-C.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"tollgate/relay/relaytest"
)

// config is the command line.
type config struct {
	duration      time.Duration
	warmup        time.Duration
	concurrency   int
	rounds        int
	streamWorkers int
	pacedFor      time.Duration // the paced phase's measured time (-paced-duration)
	manyStreams   int
	shapes        []string
	jsonPath      string
	repo          string
	bin           string
	strategy      string          // routing strategy of every model on the measured nodes ("" = priority, the default)
	channels      int             // copies of the bench channel (the routing decision then ranks this many candidates)
	phases        map[string]bool // the phases to run (-phases); all when empty
	compare       string          // a second Tollgate binary, measured as tollgate-sqlite-b in the same run (-compare)
	limitedKey    bool            // the bench key has its own quota (-limited-key) instead of spending the balance alone
	noConv        bool            // no translated target (-no-conv): one node fewer, a shorter run
	gapByChunk    bool            // print the paced path gap per chunk index (-gap-by-chunk)
}

// phaseNames are the measuring phases, in the order they run.
var phaseNames = []string{"throughput", "latency", "ttfb", "paced", "streams", "many"}

// runs says whether phase p is to run.
func (c config) runs(p string) bool { return len(c.phases) == 0 || c.phases[p] }

func main() {
	serve := flag.String("serve-proxy", "", "internal: serve the plain proxy to this upstream URL")
	proxyAddr := flag.String("proxy-addr", "", "internal: listen address for -serve-proxy")
	var cfg config
	flag.DurationVar(&cfg.duration, "duration", 8*time.Second, "measured time per phase (and per target for throughput)")
	flag.DurationVar(&cfg.warmup, "warmup", time.Second, "unmeasured warm-up before each phase")
	flag.IntVar(&cfg.concurrency, "concurrency", 64, "workers for the non-stream throughput phase")
	flag.IntVar(&cfg.rounds, "rounds", 4, "throughput rounds: each target runs duration/rounds per round, targets alternating")
	flag.IntVar(&cfg.streamWorkers, "stream-workers", 16, "workers for the paced-stream phase")
	flag.DurationVar(&cfg.pacedFor, "paced-duration", 60*time.Second, "measured time of the paced-stream phase (~34k gaps a target: at 30 s the added gap p99 of one build moved ±0.07 ms between runs)")
	flag.IntVar(&cfg.manyStreams, "many-streams", 1000, "concurrent paced streams in the stream-load phase (0 skips it)")
	shapes := flag.String("shapes", "sqlite,mysql", "Tollgate shapes to run: sqlite, mysql (skipped when MariaDB/Redis are unreachable); empty for none")
	flag.StringVar(&cfg.jsonPath, "json", "", "also write the report as JSON to this file")
	flag.StringVar(&cfg.repo, "repo", "", "repository root to build Tollgate from (default: the module root of the working directory)")
	flag.StringVar(&cfg.bin, "tollgate-bin", "", "use this Tollgate binary instead of building one")
	flag.StringVar(&cfg.strategy, "strategy", "", "routing strategy for every model: priority, performance, cost, balanced, round_robin, least_busy (empty: the default)")
	flag.IntVar(&cfg.channels, "channels", 1, "copies of the bench channel on the same fake upstream (candidates per routing decision)")
	flag.StringVar(&cfg.compare, "compare", "", "also measure this Tollgate binary on SQLite + memory, as target tollgate-sqlite-b (A/B of two builds in one run)")
	flag.BoolVar(&cfg.limitedKey, "limited-key", false, "bench with a key that has its own quota (on MariaDB + Redis its holds go to Redis: no node-local lease)")
	flag.BoolVar(&cfg.gapByChunk, "gap-by-chunk", false, "also print the paced streams' path gap p50/p90/p99 before each chunk, per target (stderr)")
	flag.BoolVar(&cfg.noConv, "no-conv", false, "skip the translated target (OpenAI chat in, Anthropic channel) and the node that serves it")
	phases := flag.String("phases", "", "only these phases, comma-separated: "+strings.Join(phaseNames, ", ")+" (empty: all; for profiling one)")
	flag.Parse()
	for _, p := range strings.Split(*phases, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		} else if !slices.Contains(phaseNames, p) {
			fmt.Fprintln(os.Stderr, "bench: unknown phase", p)
			os.Exit(2)
		}
		if cfg.phases == nil {
			cfg.phases = map[string]bool{}
		}
		cfg.phases[p] = true
	}
	cfg.rounds = max(cfg.rounds, 1)
	if *serve != "" {
		if err := serveProxy(*proxyAddr, *serve); err != nil {
			fmt.Fprintln(os.Stderr, "bench proxy:", err)
			os.Exit(1)
		}
		return
	}
	for _, s := range strings.Split(*shapes, ",") {
		if s = strings.TrimSpace(s); s != "" {
			cfg.shapes = append(cfg.shapes, s)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, cfg)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...) }

// run sets up every target, measures, and prints the report. A Tollgate shape that fails to start is reported
// and makes the run fail, after the other targets were measured.
func run(ctx context.Context, cfg config) error {
	tmp, err := os.MkdirTemp("", "tollgate-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	paced := []relaytest.Option{relaytest.WithChunks(pacedChunks), relaytest.WithChunkDelay(pacedDelay), relaytest.WithSendStamps()}
	up := relaytest.New(relaytest.ForModel(modelPaced, paced...), relaytest.ForModel(modelPaced+convSuffix, paced...),
		relaytest.ForModel(modelBurst, relaytest.WithChunks(burstChunks)))
	defer up.Close()
	targets := []Target{{Name: "direct", URL: up.URL, Key: "bench-upstream-key"}}

	var procs []*Proc
	defer func() {
		for _, p := range procs {
			p.Stop()
		}
	}()
	proxy, purl, err := startProxy(ctx, up.URL)
	if err != nil {
		return err
	}
	procs = append(procs, proxy)
	targets = append(targets, Target{Name: "proxy", URL: purl, Key: "bench-upstream-key", Pid: proxy.Pid()})

	rep := &Report{Started: time.Now(), GoVersion: runtime.Version(), CPUs: runtime.NumCPU(),
		Duration: cfg.duration.String(), Concurrency: cfg.concurrency, StreamWorkers: cfg.streamWorkers,
		PacedFor: cfg.pacedFor.String()}
	var failed []string
	if len(cfg.shapes) > 0 {
		tg, notes, err := startTollgates(ctx, cfg, tmp, up, &procs)
		if err != nil {
			return err
		}
		targets = append(targets, tg...)
		for _, n := range notes {
			rep.Notes = append(rep.Notes, n.msg)
			if n.failed {
				failed = append(failed, n.msg)
			}
		}
	}
	up.Set(relaytest.WithRecording(false))
	up.ClearRequests()

	time.Sleep(2 * time.Second) // let start-up garbage be collected before the idle reading
	rep.idle = map[string]float64{}
	for _, t := range targets {
		if t.Pid > 0 {
			rep.idle[t.Name] = rssMB(t.Pid)
		}
	}
	before := loadAvg()
	measure(ctx, cfg, targets, rep)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if l := max(before, loadAvg()); l > float64(runtime.NumCPU()) {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the machine was busy (1-minute load average %.1f on %d CPUs): "+
			"absolute figures are noisy; the interleaved ratios hold up best", l, runtime.NumCPU()))
	}
	rep.computeChecks()
	rep.Print(os.Stdout)
	if cfg.jsonPath != "" {
		if err := rep.WriteJSON(cfg.jsonPath); err != nil {
			return err
		}
		logf("wrote %s", cfg.jsonPath)
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d Tollgate shape(s) could not be measured", len(failed))
	}
	return nil
}

// measure runs the three phases over every target.
func measure(ctx context.Context, cfg config, targets []Target, rep *Report) {
	g := NewGen(30 * time.Second)
	defer g.Close()
	for _, t := range targets {
		rep.Targets = append(rep.Targets, t.Name)
	}
	// Throughput runs each target alone, in rounds that alternate the targets, so a neighbour's burst on a
	// shared machine does not land on one target only.
	if cfg.runs("throughput") {
		logf("throughput: %d workers, %v per target in %d rounds", cfg.concurrency, cfg.duration, cfg.rounds)
		rep.Throughput = roundsAlone(ctx, g, cfg, targets, shotPlain())
	}
	one := Phase{1, cfg.warmup, cfg.duration}
	if cfg.runs("latency") {
		logf("latency at concurrency 1, all targets interleaved, %v", cfg.duration)
		rep.Latency1 = map[string]Summary{}
		for name, r := range g.Interleaved(ctx, targets, shotPlain(), one) {
			rep.Latency1[name] = r.Summary()
		}
	}
	if cfg.runs("ttfb") {
		logf("stream time to first event at concurrency 1, %v", cfg.duration)
		rep.TTFB1 = map[string]Summary{}
		for name, r := range g.Interleaved(ctx, targets, shotStream(modelFast), one) {
			rep.TTFB1[name] = r.TTFB()
		}
	}
	if cfg.runs("paced") {
		logf("paced streams, %d workers, %v", cfg.streamWorkers, cfg.pacedFor)
		cpu0 := map[string]float64{}
		for _, t := range targets {
			cpu0[t.Name] = cpuSeconds(t.Pid)
		}
		res := g.Interleaved(ctx, targets, shotStream(modelPaced), Phase{cfg.streamWorkers, cfg.warmup, cfg.pacedFor})
		rep.Paced = pacedStats(res)
		for _, t := range targets {
			if s, ok := rep.Paced[t.Name]; ok && t.Pid > 0 && s.Streams > 0 {
				// the warm-up's streams are in the CPU time but not in the count: a slight overestimate, alike for all
				s.CPUPerStream = (cpuSeconds(t.Pid) - cpu0[t.Name]) * 1000 / float64(s.Streams)
				rep.Paced[t.Name] = s
			}
		}
		if cfg.gapByChunk {
			writeGapsByChunk(os.Stderr, res)
		}
	}

	plain := withoutConverted(targets)
	if cfg.runs("streams") {
		logf("stream throughput: %d workers, streams of %d chunks, %v per target in %d rounds", cfg.concurrency, burstChunks, cfg.duration, cfg.rounds)
		rep.StreamThroughput = streamThroughput(ctx, g, cfg, plain)
	}
	if cfg.manyStreams <= 0 || !cfg.runs("many") {
		return
	}
	events, err := eventsPerStream(ctx, g, targets[0])
	if err != nil {
		rep.Notes = append(rep.Notes, "many streams skipped: the direct upstream's stream failed: "+err.Error())
		return
	}
	rep.ManyStreams, rep.Memory = map[string]StreamLoad{}, map[string]Memory{}
	for _, t := range plain {
		if t.Name == "direct" {
			continue
		}
		logf("%d concurrent paced streams on %s alone, %v", cfg.manyStreams, t.Name, cfg.duration)
		mem := rep.Memory[t.Name]
		rep.ManyStreams[t.Name] = manyPaced(ctx, g, t, cfg.manyStreams, Phase{cfg.manyStreams, cfg.warmup, cfg.duration}, events, &mem)
		mem.IdleMB = rep.idle[t.Name]
		rep.Memory[t.Name] = mem
	}
}

// withoutConverted drops the translated targets (the stream-load phases measure the pass-through path).
func withoutConverted(ts []Target) []Target {
	var out []Target
	for _, t := range ts {
		if !isConverted(t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// startProxy re-executes this program as the plain proxy on a free port.
func startProxy(ctx context.Context, upstream string) (*Proc, string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	p, err := startProc("plain proxy", exe, []string{"-serve-proxy", upstream, "-proxy-addr", addr}, nil, "")
	if err != nil {
		return nil, "", err
	}
	url := "http://" + addr
	if err := p.waitHTTP(ctx, url+"/v1/models", 15*time.Second); err != nil {
		p.Stop()
		return nil, "", err
	}
	return p, url, nil
}

// note is a message about a shape; failed ones make the run fail.
type note struct {
	msg    string
	failed bool
}

// startTollgates builds Tollgate once and starts and sets up one instance per shape.
func startTollgates(ctx context.Context, cfg config, tmp string, up *relaytest.Upstream, procs *[]*Proc) ([]Target, []note, error) {
	bin := cfg.bin
	if bin == "" {
		repo, err := repoRoot(cfg.repo)
		if err != nil {
			return nil, nil, err
		}
		logf("building Tollgate in %s", repo)
		if bin, err = buildTollgate(ctx, repo, tmp); err != nil {
			return nil, []note{{msg: err.Error(), failed: true}}, nil
		}
	}
	var targets []Target
	var notes []note
	for _, shape := range cfg.shapes {
		var sh shapeEnv
		var err error
		switch shape {
		case "sqlite":
			sh = sqliteShape(tmp)
		case "mysql":
			sh, err = mysqlShape(ctx)
		default:
			err = fmt.Errorf("unknown shape %q (want sqlite or mysql)", shape)
		}
		if errors.Is(err, errSkipped) {
			notes = append(notes, note{msg: "shape " + shape + " " + err.Error()})
			logf("shape %s %v", shape, err)
			continue
		}
		if err == nil {
			logf("starting Tollgate (%s)", shape)
			var t Target
			if t, err = startNode(ctx, cfg, bin, tmp, sh, up, procs, false); err == nil {
				targets = append(targets, t)
				continue
			}
		}
		msg := fmt.Sprintf("Tollgate %s: %v", shape, err)
		logf("%s", msg)
		notes = append(notes, note{msg: msg, failed: true})
	}
	if cfg.compare != "" {
		dir := filepath.Join(tmp, "b")
		if err := os.Mkdir(dir, 0o700); err != nil {
			return nil, nil, err
		}
		logf("starting the comparison Tollgate %s (sqlite)", cfg.compare)
		sh := sqliteShape(dir)
		sh.name = "sqlite-b"
		t, err := startNode(ctx, cfg, cfg.compare, dir, sh, up, procs, false)
		if err != nil {
			return nil, nil, err
		}
		targets = append(targets, t)
	}
	if !cfg.noConv && slices.Contains(cfg.shapes, "sqlite") {
		// The translated path, measured once (the protocol work is the same on both shapes), on a node of its
		// own: a node serving both targets would carry twice the proxy's share of every interleaved phase.
		dir := filepath.Join(tmp, "conv")
		if err := os.Mkdir(dir, 0o700); err != nil {
			return nil, nil, err
		}
		logf("starting Tollgate (sqlite) for the translated target")
		t, err := startNode(ctx, cfg, bin, dir, sqliteShape(dir), up, procs, true)
		if err != nil {
			msg := fmt.Sprintf("Tollgate sqlite%s: %v", convSuffix, err)
			logf("%s", msg)
			notes = append(notes, note{msg: msg, failed: true})
		} else {
			targets = append(targets, t)
		}
	}
	return targets, notes, nil
}

// startNode starts bin in dir with the shape's environment, sets it up through its API and returns its
// target: tollgate-<shape>, or with conv the translated tollgate-<shape>-conv.
func startNode(ctx context.Context, cfg config, bin, dir string, sh shapeEnv, up *relaytest.Upstream, procs *[]*Proc, conv bool) (Target, error) {
	p, base, err := startTollgate(ctx, bin, dir, sh)
	if err != nil {
		return Target{}, err
	}
	*procs = append(*procs, p)
	up.ClearRequests()
	key, api, err := setupTollgate(ctx, base, up, cfg.strategy, cfg.channels, cfg.limitedKey)
	if err != nil {
		return Target{}, p.failure("setup failed: " + err.Error())
	}
	if conv {
		return Target{Name: "tollgate-" + sh.name + convSuffix, URL: base, Key: key, ModelSuffix: convSuffix}, nil
	}
	return Target{Name: "tollgate-" + sh.name, URL: base, Key: key, Pid: p.Pid(), API: api}, nil
}

// loadAvg is the 1-minute load average, or 0 where /proc/loadavg is missing.
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var l float64
	_, _ = fmt.Sscanf(string(b), "%f", &l)
	return l
}

// repoRoot is dir, or the directory of the main module's go.mod.
func repoRoot(dir string) (string, error) {
	if dir != "" {
		return filepath.Abs(dir)
	}
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside the Tollgate module; run from the repository root or pass -repo")
	}
	return filepath.Dir(mod), nil
}

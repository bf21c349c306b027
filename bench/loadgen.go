package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"tollgate/relay/relaytest"
)

// Target is one endpoint under load: the fake upstream itself, the plain proxy, or a Tollgate.
type Target struct {
	Name string
	URL  string // base URL, without /v1
	Key  string // sent as Authorization: Bearer
	// ModelSuffix is appended to the shot's model: the converted targets call the same load on models only
	// an anthropic channel serves, so the gateway translates OpenAI chat ⇄ Anthropic Messages.
	ModelSuffix string
	// Pid is the target's process (0: in this process), for its memory; API is a signed-in console client of a
	// gateway (nil for the others), for its usage stats.
	Pid int
	API *apiClient
}

// body is the shot's body for t.
func (s Shot) body(t Target) []byte {
	if t.ModelSuffix == "" {
		return s.Body
	}
	m := `"model":"`
	i := bytes.Index(s.Body, []byte(m))
	if i < 0 {
		return s.Body
	}
	j := i + len(m) + bytes.IndexByte(s.Body[i+len(m):], '"')
	out := make([]byte, 0, len(s.Body)+len(t.ModelSuffix))
	out = append(append(append(out, s.Body[:j]...), t.ModelSuffix...), s.Body[j:]...)
	return out
}

// Shot is the request every worker sends.
type Shot struct {
	Path   string
	Body   []byte
	Stream bool
}

// Sample is one measured request.
type Sample struct {
	Latency time.Duration
	// Arrivals are the offsets since sending at which each SSE data line was read (streams only).
	Arrivals []time.Duration
	// Transits are, for each data line carrying the fake upstream's send stamp (relaytest.WithSendStamps), how
	// long it took from being written by the upstream to being read here (same process, same clock).
	Transits []time.Duration
	Err      error
}

// Gen sends measured requests through one shared, tuned client.
type Gen struct {
	client *http.Client
}

// tunedTransport keeps enough idle connections per host for the concurrency used (Go's default is 2).
func tunedTransport() *http.Transport {
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        4096,
		MaxIdleConnsPerHost: 4096,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
}

// NewGen returns a generator whose requests time out after timeout.
func NewGen(timeout time.Duration) *Gen {
	return &Gen{client: &http.Client{Transport: tunedTransport(), Timeout: timeout}}
}

// Close drops idle connections.
func (g *Gen) Close() { g.client.CloseIdleConnections() }

// Do sends one request and measures it; a stream must end with data: [DONE] to count as a success.
func (g *Gen) Do(ctx context.Context, t Target, s Shot) Sample {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL+s.Path, bytes.NewReader(s.body(t)))
	if err != nil {
		return Sample{Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+t.Key)
	start := time.Now()
	resp, err := g.client.Do(req)
	if err != nil {
		return Sample{Err: err, Latency: time.Since(start)}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return Sample{Err: fmt.Errorf("status %d: %s", resp.StatusCode, strings.TrimSpace(string(body))),
			Latency: time.Since(start)}
	}
	if !s.Stream {
		_, err = io.Copy(io.Discard, resp.Body)
		return Sample{Err: err, Latency: time.Since(start)}
	}
	smp := Sample{Arrivals: make([]time.Duration, 0, 32)}
	br := bufio.NewReaderSize(resp.Body, 16<<10)
	lineStart, done := true, false
	for {
		line, err := br.ReadSlice('\n')
		if lineStart && bytes.HasPrefix(line, []byte("data:")) {
			smp.Arrivals = append(smp.Arrivals, time.Since(start))
			if sent, ok := relaytest.ParseSendStamp(line); ok {
				smp.Transits = append(smp.Transits, time.Since(sent))
			}
			done = bytes.Equal(bytes.TrimSpace(line), []byte("data: [DONE]"))
		}
		lineStart = err == nil
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				smp.Err = err
			}
			break
		}
	}
	smp.Latency = time.Since(start)
	if smp.Err == nil && !done {
		smp.Err = errors.New("stream ended without data: [DONE]")
	}
	return smp
}

// Phase is a measured load: warm up, then record for Duration.
type Phase struct {
	Workers  int
	Warmup   time.Duration
	Duration time.Duration
}

// Result is what one target produced during a phase.
type Result struct {
	Samples []Sample
	Errors  int
	Err     error // first error
	Elapsed time.Duration
}

func (r *Result) add(s Sample) {
	if s.Err != nil {
		r.Errors++
		if r.Err == nil {
			r.Err = s.Err
		}
		return
	}
	r.Samples = append(r.Samples, s)
}

// merge adds o's samples, errors and measured time to r.
func (r *Result) merge(o Result) {
	r.Samples = append(r.Samples, o.Samples...)
	r.Errors += o.Errors
	r.Elapsed += o.Elapsed
	if r.Err == nil {
		r.Err = o.Err
	}
}

// Closed drives one target with ph.Workers closed-loop workers and keeps the requests that finished inside
// the measuring window.
func (g *Gen) Closed(ctx context.Context, t Target, s Shot, ph Phase) Result {
	res := g.Interleaved(ctx, []Target{t}, s, ph)
	return res[t.Name]
}

// Interleaved drives several targets at once: each worker sends one request to each target per round, in an
// order shuffled every round, so slow drifts of the machine hit every target alike and no target always
// follows the same one (a gateway still finishing its last request in the background — logging, settling —
// would otherwise always slow the same neighbour). Used at low concurrency.
func (g *Gen) Interleaved(ctx context.Context, ts []Target, s Shot, ph Phase) map[string]Result {
	begin := time.Now()
	from, end := begin.Add(ph.Warmup), begin.Add(ph.Warmup+ph.Duration)
	ctx, cancel := context.WithDeadline(ctx, end.Add(30*time.Second))
	defer cancel()
	perWorker := make([]map[string]*Result, ph.Workers)
	var wg sync.WaitGroup
	for w := range ph.Workers {
		mine := map[string]*Result{}
		for _, t := range ts {
			mine[t.Name] = &Result{}
		}
		perWorker[w] = mine
		rng := rand.New(rand.NewPCG(uint64(begin.UnixNano()), uint64(w)))
		order := make([]int, len(ts))
		wg.Go(func() {
			for ctx.Err() == nil {
				for k := range order {
					order[k] = k
				}
				rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
				for _, k := range order {
					if time.Now().After(end) {
						return
					}
					t := ts[k]
					smp := g.Do(ctx, t, s)
					if fin := time.Now(); !fin.Before(from) && !fin.After(end) {
						mine[t.Name].add(smp)
					}
				}
			}
		})
	}
	wg.Wait()
	out := map[string]Result{}
	for _, t := range ts {
		var r Result
		for _, m := range perWorker {
			p := m[t.Name]
			r.Samples = append(r.Samples, p.Samples...)
			r.Errors += p.Errors
			if r.Err == nil {
				r.Err = p.Err
			}
		}
		r.Elapsed = ph.Duration
		out[t.Name] = r
	}
	return out
}

// Summary summarises whole-request latencies and the success rate per second.
func (r Result) Summary() Summary {
	ds := make([]time.Duration, len(r.Samples))
	for i, s := range r.Samples {
		ds[i] = s.Latency
	}
	sum := summarize(ds)
	sum.Errors = r.Errors
	if r.Elapsed > 0 {
		sum.RPS = float64(len(r.Samples)) / r.Elapsed.Seconds()
	}
	if r.Err != nil {
		sum.FirstError = r.Err.Error()
	}
	return sum
}

// TTFB summarises the time to the first SSE data line.
func (r Result) TTFB() Summary {
	var ds []time.Duration
	for _, s := range r.Samples {
		if len(s.Arrivals) > 0 {
			ds = append(ds, s.Arrivals[0])
		}
	}
	sum := summarize(ds)
	sum.Errors = r.Errors
	if r.Err != nil {
		sum.FirstError = r.Err.Error()
	}
	return sum
}

// arrivals lists every stream's event offsets.
func (r Result) arrivals() [][]time.Duration {
	out := make([][]time.Duration, len(r.Samples))
	for i, s := range r.Samples {
		out[i] = s.Arrivals
	}
	return out
}

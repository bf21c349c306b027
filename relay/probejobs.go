package relay

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"tollgate/middleware"
	"tollgate/model"
	"tollgate/service/channel"
	"tollgate/service/health"
)

// TestJob is a running or finished "test many channels" job.
type TestJob = channel.TestJob

// Prober runs channel tests: many at once with a bound, and on a schedule for channels that need recovery.
type Prober struct {
	relay *Relay
	limit int
	mu    sync.Mutex
	jobs  map[string]*TestJob
	stop  chan struct{}
	wg    sync.WaitGroup
}

// NewProber builds a prober running at most limit tests at once.
func NewProber(r *Relay, limit int) *Prober {
	return &Prober{relay: r, limit: limit, jobs: map[string]*TestJob{}, stop: make(chan struct{})}
}

// StartJob tests the given channels in the background and returns the job id.
func (p *Prober) StartJob(chs []*channel.Channel, actorID int64) *TestJob {
	job := &TestJob{ID: middleware.NewRequestID(), Total: len(chs), Started: time.Now().UTC(), Results: []TestResult{}}
	p.mu.Lock()
	p.jobs[job.ID] = job
	for id, j := range p.jobs { // keep the last hour of jobs
		if j.Ended != nil && time.Since(*j.Ended) > time.Hour {
			delete(p.jobs, id)
		}
	}
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.run(context.Background(), chs, actorID, nil, func(res TestResult) {
			p.mu.Lock()
			job.Done++
			job.Results = append(job.Results, res)
			p.mu.Unlock()
		})
		p.mu.Lock()
		now := time.Now().UTC()
		job.Ended = &now
		p.mu.Unlock()
	}()
	return p.Job(job.ID)
}

// Job returns a copy of a job's progress.
func (p *Prober) Job(id string) *TestJob {
	p.mu.Lock()
	defer p.mu.Unlock()
	j, ok := p.jobs[id]
	if !ok {
		return nil
	}
	cp := *j
	cp.Results = append([]TestResult{}, j.Results...)
	return &cp
}

// run tests chs with at most p.limit at once; keyOf (nil: the default key) picks the key each test uses.
func (p *Prober) run(ctx context.Context, chs []*channel.Channel, actorID int64, keyOf func(*channel.Channel) int, each func(TestResult)) {
	sem := make(chan struct{}, p.limit)
	var wg sync.WaitGroup
	for _, ch := range chs {
		key := -1
		if keyOf != nil {
			key = keyOf(ch)
		}
		sem <- struct{}{}
		wg.Add(1)
		go func(ch *channel.Channel, key int) {
			defer func() { <-sem; wg.Done() }()
			each(p.relay.TestChannel(ctx, ch, "", key, actorID))
		}(ch, key)
	}
	wg.Wait()
}

// NeedsRecovery lists channels a scheduled test should probe: auto-disabled, breaker not closed, or with a
// key disabled or whose breaker is not closed. A key that is only cooling down after a 429 does not count:
// its cooldown ends on its own at the upstream's reset time, and a probe would only earn another 429.
func (p *Prober) NeedsRecovery() []*channel.Channel {
	var out []*channel.Channel
	for _, ch := range p.relay.Channels.Snapshot().ByID {
		if ch.Status == model.StatusDisabled {
			continue // a manual disable is sticky: nothing automatic undoes it
		}
		h := p.relay.Health.Snapshot(ch.ID, len(ch.Keys))
		if ch.Status == model.StatusAutoDisabled || h.State != health.StateClosed || badKey(h) >= 0 {
			out = append(out, ch)
		}
	}
	return out
}

// badKey is the first key that needs a recovery test (disabled, or its breaker not closed), or -1.
func badKey(h health.ChannelHealth) int {
	for _, k := range h.Keys {
		if k.State != "ok" && k.State != "cooling" {
			return k.Index
		}
	}
	return -1
}

// recoveryKey is the key a scheduled test probes: the key that needs recovery (a pass clears only the key it
// tested), so a revoked key is never handed back to traffic because a healthy sibling answered.
func (p *Prober) recoveryKey(ch *channel.Channel) int {
	return badKey(p.relay.Health.Snapshot(ch.ID, len(ch.Keys)))
}

// StartSchedule runs the recovery tests every interval() (0 = paused), on one node at a time (a cache lock).
func (p *Prober) StartSchedule(interval func() time.Duration) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		var last time.Time
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
			}
			iv := interval()
			if iv <= 0 || time.Since(last) < iv {
				continue
			}
			last = time.Now()
			ctx := context.Background()
			if ok, err := p.relay.Cache.SetNX(ctx, "chtest:lock", []byte("1"), max(iv-time.Second, 500*time.Millisecond)); err != nil || !ok {
				continue
			}
			chs := p.NeedsRecovery()
			if len(chs) == 0 {
				continue
			}
			slog.Info("scheduled channel tests", "channels", len(chs))
			p.run(ctx, chs, 0, p.recoveryKey, func(res TestResult) {
				if res.OK {
					slog.Info("channel recovered by scheduled test", "channel", res.ChannelID)
				}
			})
		}
	}()
}

// Close stops the schedule and waits for running tests.
func (p *Prober) Close(context.Context) error {
	close(p.stop)
	p.wg.Wait()
	return nil
}

// TestChannel tests one channel now (the admin's "test" button).
func (p *Prober) TestChannel(ctx context.Context, ch *channel.Channel, model string, key int, actorID int64) TestResult {
	return p.relay.TestChannel(ctx, ch, model, key, actorID)
}

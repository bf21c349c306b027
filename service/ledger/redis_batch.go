package ledger

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// maxBatch bounds how many script calls share one pipeline.
const maxBatch = 128

type scriptCall struct {
	script *redis.Script
	keys   []string
	args   []any
	out    chan scriptRes
}

type scriptRes struct {
	res []any
	err error
}

// Batcher pipelines concurrent ledger scripts (reserve, settle) to Redis: under load, many requests share
// one round trip and one pair of syscalls instead of paying one each. It sends only what is already
// waiting, so a lone call is never delayed; every call stays its own atomic script.
type Batcher struct {
	rdb    redis.UniversalClient
	in     chan scriptCall
	stop   chan struct{}
	wg     sync.WaitGroup
	mu     sync.RWMutex // senders hold it shared; Close takes it to stop new sends before draining
	closed bool
	busy   atomic.Int64 // calls in flight: a call that is alone skips the batcher's goroutine hand-offs
}

// StartBatcher makes r's reserve and settle scripts go through a pipelining batcher until Close.
func (r *Redis) StartBatcher() *Batcher {
	b := &Batcher{rdb: r.rdb, in: make(chan scriptCall, 4096), stop: make(chan struct{})}
	r.batcher = b
	b.wg.Add(1)
	go b.run()
	return b
}

// Close stops batching after the calls already queued are sent.
func (b *Batcher) Close(context.Context) error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	close(b.stop)
	b.wg.Wait()
	return nil
}

// run executes script with keys and args: through the batcher when there is one, else directly. A script
// Redis does not know yet (first use, or after a restart) is loaded by the direct path.
func (r *Redis) run(ctx context.Context, script *redis.Script, keys []string, args ...any) ([]any, error) {
	if b := r.batcher; b != nil && b.busy.Add(1) > 1 {
		defer b.busy.Add(-1)
		call := scriptCall{script: script, keys: keys, args: args, out: make(chan scriptRes, 1)}
		b.mu.RLock()
		sent := !b.closed
		if sent {
			b.in <- call
		}
		b.mu.RUnlock()
		if sent {
			res := <-call.out
			if res.err == nil || !strings.HasPrefix(res.err.Error(), "NOSCRIPT") {
				return res.res, res.err
			}
		}
	} else if b != nil {
		defer b.busy.Add(-1)
	}
	return script.Run(ctx, r.rdb, keys, args...).Slice()
}

func (b *Batcher) run() {
	defer b.wg.Done()
	batch := make([]scriptCall, 0, maxBatch)
	for {
		select {
		case c := <-b.in:
			batch = append(batch[:0], c)
		drain:
			for len(batch) < maxBatch {
				select {
				case more := <-b.in:
					batch = append(batch, more)
				default:
					break drain
				}
			}
			b.flush(batch)
		case <-b.stop:
			for {
				select {
				case c := <-b.in:
					b.flush([]scriptCall{c})
				default:
					return
				}
			}
		}
	}
}

func (b *Batcher) flush(batch []scriptCall) {
	ctx := context.Background()
	cmds := make([]*redis.Cmd, len(batch))
	_, _ = b.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, c := range batch {
			cmds[i] = c.script.EvalSha(ctx, p, c.keys, c.args...)
		}
		return nil
	})
	for i, c := range batch {
		res, err := cmds[i].Slice()
		c.out <- scriptRes{res, err}
	}
}

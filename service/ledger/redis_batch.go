package ledger

import (
	"context"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"
)

// maxSettleBatch bounds how many settlements share one pipeline.
const maxSettleBatch = 128

type settleReq struct {
	ctx    context.Context
	reqID  string
	actual int64
	out    chan settleRes
}

type settleRes struct {
	s   Settlement
	err error
}

// SettleBatcher pipelines concurrent Settle calls to Redis: under load, many requests finishing together
// share one round trip (and one pair of syscalls) instead of paying one each. It batches only what is
// already waiting, so a lone settlement is never delayed. Each settlement stays its own atomic script.
type SettleBatcher struct {
	r    *Redis
	in   chan settleReq
	stop chan struct{}
	wg   sync.WaitGroup
}

// StartSettleBatcher makes r.Settle go through a batcher until Close.
func (r *Redis) StartSettleBatcher() *SettleBatcher {
	b := &SettleBatcher{r: r, in: make(chan settleReq, 4096), stop: make(chan struct{})}
	r.batcher = b
	b.wg.Add(1)
	go b.run()
	return b
}

// Close stops batching after the settlements already queued are done.
func (b *SettleBatcher) Close(context.Context) error {
	close(b.stop)
	b.wg.Wait()
	return nil
}

func (b *SettleBatcher) settle(ctx context.Context, reqID string, actual int64) (Settlement, error) {
	req := settleReq{ctx: ctx, reqID: reqID, actual: actual, out: make(chan settleRes, 1)}
	select {
	case b.in <- req:
	case <-b.stop:
		return b.r.settleOne(ctx, reqID, actual)
	}
	res := <-req.out
	return res.s, res.err
}

func (b *SettleBatcher) run() {
	defer b.wg.Done()
	batch := make([]settleReq, 0, maxSettleBatch)
	for {
		select {
		case req := <-b.in:
			batch = append(batch[:0], req)
		drain:
			for len(batch) < maxSettleBatch {
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
				case req := <-b.in:
					s, err := b.r.settleOne(req.ctx, req.reqID, req.actual)
					req.out <- settleRes{s, err}
				default:
					return
				}
			}
		}
	}
}

// flush runs a batch in one pipeline; anything that is not a plain result (an account to load from SQL, a
// script missing after a Redis restart, a network error) takes the one-by-one path, which handles it.
func (b *SettleBatcher) flush(batch []settleReq) {
	r := b.r
	now := r.nowMS()
	ctx := context.Background()
	cmds := make([]*redis.Cmd, len(batch))
	_, _ = r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, req := range batch {
			cmds[i] = settleScript.EvalSha(ctx, p, []string{r.prefix + "hold:" + req.reqID},
				r.prefix, req.reqID, req.actual, now, r.cfg.settledTTL.Milliseconds(), r.cfg.sweepLimit)
		}
		return nil
	})
	for i, req := range batch {
		res, err := cmds[i].Slice()
		if err == nil {
			switch code := asInt(res, 0); code {
			case 0, 1:
				s, perr := parseSettlement(asString(res, 1))
				if perr == nil {
					s.Duplicate = code == 1
					req.out <- settleRes{s, nil}
					continue
				}
			case -3:
				req.out <- settleRes{err: fmt.Errorf("settle %s: %w", req.reqID, ErrNoHold)}
				continue
			}
		}
		go func(req settleReq) {
			s, err := r.settleOne(req.ctx, req.reqID, req.actual)
			req.out <- settleRes{s, err}
		}(req)
	}
}

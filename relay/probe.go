package relay

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/tidwall/gjson"

	"tollgate/middleware"
	"tollgate/model"
	"tollgate/relay/adaptor"
	"tollgate/service/channel"
	"tollgate/service/health"
	"tollgate/service/usagelog"
)

// TestResult is what a channel test found.
type TestResult = channel.TestResult

// testTimeout bounds one channel test.
const testTimeout = 60 * time.Second

// testModel picks the model a test asks for.
func testModel(ch *channel.Channel, want string) string {
	switch {
	case want != "":
		return want
	case ch.TestModel != "":
		return ch.TestModel
	case len(ch.Models.V) > 0:
		return ch.Models.V[0]
	}
	return "gpt-4o-mini"
}

// TestChannel sends one tiny request to a channel with one key (key < 0 or out of range: the first key)
// through the same send path as live traffic: the channel's model mapping, body and header overrides and
// timeouts all apply, so a channel that serves live traffic passes its test. It is not billed; it is logged as
// a test (actorID may be 0 for scheduled tests) and fed to the health tracker: a pass clears the tested key
// (only that one) and moves an OPEN channel to HALF_OPEN (health.Tracker.TestPassed).
func (r *Relay) TestChannel(ctx context.Context, ch *channel.Channel, modelName string, key int, actorID int64) TestResult {
	modelName = testModel(ch, modelName)
	if key < 0 || key >= len(ch.Keys) {
		key = 0
	}
	res := TestResult{ChannelID: ch.ID, Model: modelName, KeyIndex: key}
	ad, ok := r.adaptorOf(ch, modelName)
	if !ok || len(ch.Keys) == 0 {
		res.ErrorClass, res.Error = string(ClassClient), "channel has no adaptor or no key"
		return res
	}
	ep, body := ad.TestCall(modelName)
	start := time.Now()
	// The body names the public model: it is mapped to the upstream model as for live traffic.
	rq := &request{ep: ep, proto: adaptor.ProtocolOf(ep), kind: adaptor.KindOf(ep), start: start, model: modelName, body: body,
		limits: deadlines{end: start.Add(testTimeout), firstByte: start.Add(testTimeout)}}
	lg := &leg{ep: ep, proto: rq.proto}
	var err error
	if lg.body, err = passBody(rq, ch.UpstreamModel(modelName)); err != nil {
		res.ErrorClass, res.Error = string(ClassClient), err.Error()
		return res
	}
	x, f := r.send(ctx, http.Header{}, rq, lg, ch, key)
	res.FirstByteMs = time.Since(start).Milliseconds()
	if f == nil {
		res.Status = x.resp.StatusCode
		b, err := io.ReadAll(io.LimitReader(x, 1<<20))
		switch {
		case err != nil:
			f = classifyErr(err, context.Cause(x.ctx), ctx.Err() != nil)
		case adaptor.Info(ep).Answer == adaptor.AnswerJSON && !gjson.ValidBytes(b): // speech answers audio
			f = &failure{class: ClassBadReply, err: errors.New("invalid JSON")}
		}
		x.close()
	} else {
		res.Status = f.status
	}
	res.LatencyMs = time.Since(start).Milliseconds()
	if f == nil {
		res.OK = true
		r.Health.TestPassed(ch.ID, key)
		r.Health.MarkModelOK(ch.ID, modelName)
		if ch.Status == model.StatusAutoDisabled {
			if err := r.Channels.SetStatus(ctx, ch.ID, model.StatusEnabled); err == nil {
				res.Error = "channel re-enabled"
			}
		}
	} else {
		res.ErrorClass, res.Error = string(f.class), f.message()
		o := health.Outcome{ChannelID: ch.ID, Key: key, Model: modelName, Class: f.class,
			Status: f.status, Latency: time.Since(start), RetryAfter: f.retryAfter, Probe: true, Err: f.message()}
		o.RateLimitRemaining, o.RateLimitReset = rateLimitOf(f.header) // -1 without headers: 0 would skip the key
		r.Health.Record(o)
	}
	r.logTest(ch, res, actorID)
	if err := (channel.LastTests{Cache: r.Cache}).Remember(ctx, res, time.Now()); err != nil {
		slog.Warn("remember channel test", "channel", ch.ID, "err", err)
	}
	return res
}

func (r *Relay) logTest(ch *channel.Channel, res TestResult, actorID int64) {
	status := "success"
	if !res.OK {
		status = "error"
	}
	l := model.UsageLog{RequestID: "test-" + middleware.NewRequestID(), CreatedAt: time.Now().UTC(), UserID: actorID, ChannelID: ch.ID,
		ChannelName: ch.Name, Model: res.Model, UpstreamModel: ch.UpstreamModel(res.Model), Endpoint: "test", Status: status,
		HTTPStatus: res.Status, ErrorClass: res.ErrorClass, Error: truncate(res.Error, 500), ElapsedMs: res.LatencyMs,
		FirstByteMs: res.FirstByteMs, IsTest: true, GroupRatio: "0"}
	l.Attempts.V = []model.Attempt{{ChannelID: ch.ID, KeyIndex: res.KeyIndex, Class: res.ErrorClass, Status: res.Status, LatencyMs: res.LatencyMs}}
	r.Logs.Write(usagelog.Entry{Log: l})
}

package relay

import (
	"log/slog"
	"strconv"
	"strings"
	"time"

	"tollgate/model"
	"tollgate/relay/adaptor"
	"tollgate/relay/meter"
	"tollgate/service/pricing"
	"tollgate/service/usagelog"
)

// meteredUsage is what the request is billed for: the upstream's own usage where it reported it, tokens
// counted locally where it did not (a stream cut short, an upstream that sends no usage). Nothing delivered
// means nothing billed.
func (r *Relay) meteredUsage(rq *request, out *outcome) (pricing.Usage, bool) {
	if !out.delivered || !rq.billable() {
		return pricing.Usage{}, false
	}
	if rq.kind.Media() {
		return r.mediaUsage(rq, out)
	}
	u, present := out.meter.Usage()
	if out.upstreamErr {
		return u, false // the upstream's own error: its reported usage (if any), nothing estimated on top
	}
	estimated := false
	if !present {
		switch rq.proto {
		case adaptor.Anthropic:
			u.Input = int64(r.Counter.AnthropicPrompt(rq.model, rq.body))
		case adaptor.Gemini:
			u.Input = int64(r.countCanonical(rq))
		default:
			u.Input = int64(r.Counter.OpenAIChatPrompt(rq.model, rq.body))
		}
		estimated = true
	}
	if !out.meter.OutputReported() && rq.kind != adaptor.KindEmbed {
		u.Output = int64(r.Counter.Text(rq.model, out.meter.Text()))
		estimated = true
	}
	return u, estimated
}

// finish settles (or releases) the hold and queues the usage log row.
func (r *Relay) finish(fin finishing, rq *request, out *outcome) {
	if out.meter == nil {
		out.meter = meter.New(rq.ep)
	}
	ctx := fin.ctx
	if rq.awaitReserve() != nil {
		// The overlapped reservation was refused: the client got the refusal like any refused request, the
		// upstream call was cancelled before anything came back, nothing is held. Refusals have no usage row.
		return
	}
	if r.Headroom != nil && rq.billable() {
		defer r.Headroom.Refresh(ctx, r, rq)
	}
	usage, estimated := r.meteredUsage(rq, out)
	r.countTokens(ctx, rq, usage)
	var charged int64
	// An answer the upstream ended with its own error and no usage costs nothing, not even a per-call price.
	billed := out.delivered && !(out.upstreamErr && usage == pricing.Usage{})
	if rq.held {
		if billed {
			cost := pricing.Cost(rq.price, rq.ratio, usage)
			s, err := r.Ledger.Settle(ctx, rq.id, cost)
			if err != nil {
				slog.Error("settle failed", "request_id", rq.id, "cost", cost, "err", err)
			}
			charged = s.Charged
			if s.Shortfall > 0 {
				slog.Warn("usage above balance: shortfall not charged", "request_id", rq.id, "shortfall", s.Shortfall)
			}
		} else if err := r.Ledger.Release(ctx, rq.id); err != nil {
			slog.Error("release failed", "request_id", rq.id, "err", err)
		}
	}
	status := "success"
	if !out.ok || out.class != ClassNone {
		status = "error"
	}
	l := model.UsageLog{
		RequestID: rq.id, ClientRequestID: rq.clientID, CreatedAt: rq.at.UTC(), UserID: rq.who.user.ID, TokenID: rq.who.tok.ID,
		Model: rq.model, Endpoint: rq.ep.String(), Stream: rq.stream,
		PromptTokens: usage.PromptTotal(), CompletionTokens: usage.Output, CacheReadTokens: usage.CacheRead,
		CacheWriteTokens: usage.CacheWrite, UsageEstimated: estimated, Cost: charged, GroupRatio: rq.ratio.String(),
		Status: status, HTTPStatus: out.status, ErrorClass: string(out.class), Error: truncate(out.errMsg, 500),
		ElapsedMs: time.Since(rq.start).Milliseconds(), ClientIP: fin.ip,
		Username: rq.who.user.Username, TokenName: rq.who.tok.Name,
	}
	if status == "error" {
		// Without a code of the relay's own, only an upstream client error was answered with the upstream's
		// text (failed passes it through); everything else the client got was written by the gateway.
		l.ErrorCode = logErrorCode(out)
		l.ErrorShown = out.errShown || (out.errCode == "" && out.class == ClassClient)
	}
	l.Price.V = pricing.Breakdown(rq.price, usage)
	l.Attempts.V = out.attempts
	if out.delivered {
		l.FirstByteMs = out.firstByte.Milliseconds()
	}
	if out.ch != nil {
		l.ChannelID, l.ChannelName, l.UpstreamModel = out.ch.ID, out.ch.Name, out.ch.UpstreamModel(rq.model)
		if billed && rq.billable() {
			// The same metered usage, priced at what this channel's upstream charges: snapshot fields only.
			l.UpstreamCost = pricing.UpstreamCost(&out.ch.Channel, rq.model, rq.price, usage)
		}
	}
	l.Sticky = out.sticky
	l.Group, l.Route = out.group, out.route
	if l.Group == "" {
		l.Group = rq.who.group
	}
	if out.decision != nil {
		l.Decision.V = out.decision.JSON()
	}
	l.ClientProtocol = rq.proto.String()
	if out.leg != nil {
		l.UpstreamProtocol = out.leg.proto.String()
	}
	r.Logs.Write(usagelog.Entry{Log: l, TokenLimited: !rq.who.tok.Unlimited})
	r.observe(&l, out)
	r.observeFleet(&l, out)
	r.logDecision(rq, out)
	if r.Alerts != nil {
		r.Alerts.Finished(rq.who.user, rq.model, upstreamFailure(out), charged)
	}
}

// logErrorCode is the gateway's code for how an error row ended, which the user's log view turns into a
// gateway-written message (never upstream text): the code the relay chose for the client's answer, else one
// derived from the failure class.
func logErrorCode(out *outcome) string {
	if out.errCode != "" {
		return out.errCode
	}
	return usagelog.ClassCode(string(out.class))
}

// observe updates the Prometheus collectors for one finished request.
func (r *Relay) observe(l *model.UsageLog, out *outcome) {
	if r.Metrics == nil {
		return
	}
	ch := strconv.FormatInt(l.ChannelID, 10)
	r.Metrics.Requests.WithLabelValues(l.Model, ch, strconv.Itoa(l.HTTPStatus), l.ErrorClass).Inc()
	r.Metrics.Latency.WithLabelValues(l.Model).Observe(float64(l.ElapsedMs) / 1000)
	if out.delivered {
		r.Metrics.FirstByte.WithLabelValues(l.Model).Observe(out.firstByte.Seconds())
	}
	for _, a := range l.Attempts.V {
		r.Metrics.Attempts.WithLabelValues(strconv.FormatInt(a.ChannelID, 10), a.Class).Inc()
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

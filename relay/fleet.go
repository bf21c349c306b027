package relay

import (
	"time"

	"tollgate/model"
	"tollgate/service/fleet"
)

// FleetRecorder takes finished requests into the fleet-wide metrics (implemented by service/fleet).
type FleetRecorder interface {
	Observe(fleet.Request)
}

// observeFleet hands a finished request to the fleet metrics: in-memory adds, after the answer.
func (r *Relay) observeFleet(l *model.UsageLog, out *outcome) {
	if (r.Fleet == nil && r.Routing.Book == nil) || len(out.attempts) == 0 || l.IsTest {
		return
	}
	q := fleet.Request{Model: l.Model, Prompt: l.PromptTokens, Output: l.CompletionTokens,
		Attempts: make([]fleet.Attempt, len(out.attempts))}
	for i, a := range out.attempts {
		q.Attempts[i] = fleet.Attempt{ChannelID: a.ChannelID, Class: a.Class, Latency: time.Duration(a.LatencyMs) * time.Millisecond}
	}
	if out.delivered {
		q.FirstByte = max(out.firstByte, time.Millisecond)
	}
	if r.Fleet != nil {
		r.Fleet.Observe(q)
	}
	if r.Routing.Book != nil {
		r.Routing.Book.Observe(q) // the same request feeds the routing scores' periods
	}
}

// logDecision queues the routing decision's row (1 in the decision_sample setting) for the decision log.
func (r *Relay) logDecision(rq *request, out *outcome) {
	if r.Decisions == nil || rq.routed == nil || rq.at.IsZero() || !r.Decisions.Sampled() {
		return
	}
	rt := rq.routed
	r.Decisions.Add(r.Routing.Row(rq.id, rq.who.user.ID, rt.pool, rt.plan, rq.route, out.decision))
}

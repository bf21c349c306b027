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
	if r.Fleet == nil || len(out.attempts) == 0 || l.IsTest {
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
	r.Fleet.Observe(q)
}

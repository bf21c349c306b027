package relay

import "tollgate/model"

// AlertSink hears what alerts are made of (service/alert implements it). Every method must return at once:
// the sink queues and does its cache, SQL and network work on its own goroutines, never on the request's.
type AlertSink interface {
	// Finished is called once per finished request after settlement: u is the per-node cached owner (its
	// balance_alert), failed whether the request failed for a reason that is not the caller's, charged the
	// units taken.
	Finished(u *model.User, model string, failed bool, charged int64)
	// KeyDisabled is called when an upstream key was refused for auth or quota (and is now disabled).
	KeyDisabled(channelID int64, channelName string, key int, class string)
	// ChannelAutoDisabled is called when every key of a channel was refused and the channel was switched off.
	ChannelAutoDisabled(channelID int64, channelName string)
}

// upstreamFailure reports whether a finished request counts against its model's error rate: failures of the
// upstream or the gateway, not the caller's own mistakes or cancellations.
func upstreamFailure(out *outcome) bool {
	switch out.class {
	case ClassNone, ClassClient, ClassCanceled:
		return false
	}
	return !out.ok || out.class != ClassNone
}

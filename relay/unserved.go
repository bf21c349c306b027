package relay

import (
	"net/http"
	"slices"
	"strings"

	"tollgate/relay/adaptor"
)

// unserved explains why no enabled channel serves the model on this endpoint for the group. Channels that
// could serve it (natively or translated) but are disabled (or keyless) right now: 503 no_channel, worth retrying.
// Channels of other endpoints only (a claude-* model called on /v1/chat/completions): 404
// model_wrong_endpoint naming where it is served, which no SDK retries. Otherwise: 404 model_not_found.
// It walks every channel, which is fine on this refusal path and keeps the hot path's index as it is.
func (r *Relay) unserved(group string, rq *request) *relayError {
	snap := r.Channels.Snapshot()
	if !snap.Known(group, rq.model) {
		return newErr(http.StatusNotFound, "model_not_found", rq.model)
	}
	var elsewhere []string
	for _, ch := range snap.ByID {
		ad, ok := r.Adaptors[ch.Type]
		if !ok || !ch.Serves(rq.model) || !slices.Contains(ch.Groups.V, group) {
			continue
		}
		if r.serves(ad, rq) {
			return newErr(http.StatusServiceUnavailable, "no_channel", rq.model)
		}
		for ep, path := range routes {
			if ad.Supports(adaptor.Endpoint(ep)) && !slices.Contains(elsewhere, path) {
				elsewhere = append(elsewhere, path)
			}
		}
	}
	if len(elsewhere) == 0 {
		return newErr(http.StatusNotFound, "model_not_found", rq.model)
	}
	slices.Sort(elsewhere)
	return newErr(http.StatusNotFound, "model_wrong_endpoint", rq.model, routes[rq.ep], strings.Join(elsewhere, ", "))
}

package relay

import (
	"net/http"
	"slices"
	"strings"

	"tollgate/model"
	"tollgate/relay/adaptor"
)

// unserved explains why no enabled channel of the caller's groups serves the model on this endpoint.
// Channels that could serve it (natively or translated) but are disabled (or keyless) right now: 503
// no_channel, worth retrying. Channels of other endpoints only (a claude-* model called on
// /v1/chat/completions): 404 model_wrong_endpoint naming where it is served, which no SDK retries. Otherwise:
// 404 model_not_found. It walks every channel, which is fine on this refusal path.
func (r *Relay) unserved(groups []string, rq *request) *relayError {
	snap := r.Channels.Snapshot()
	var elsewhere []string
	for _, name := range groups {
		if g, ok := r.Routing.Group(name); !ok || g.Status == model.StatusDisabled ||
			(len(g.Models.V) > 0 && !slices.Contains(g.Models.V, rq.model)) {
			continue
		}
		for _, ch := range snap.ByID {
			ad, ok := r.adaptorOf(ch, rq.model)
			if !ok || !ch.Serves(rq.model) || !r.Routing.Member(name, ch.ID) {
				continue
			}
			if r.serves(ad, rq) {
				return newErr(http.StatusServiceUnavailable, "no_channel", rq.model)
			}
			for _, ep := range adaptor.Endpoints() {
				if path := adaptor.Info(ep).Route; ad.Supports(ep) && !slices.Contains(elsewhere, path) {
					elsewhere = append(elsewhere, path)
				}
			}
		}
	}
	if len(elsewhere) == 0 {
		return newErr(http.StatusNotFound, "model_not_found", rq.model)
	}
	slices.Sort(elsewhere)
	return newErr(http.StatusNotFound, "model_wrong_endpoint", rq.model, adaptor.Info(rq.ep).Route, strings.Join(elsewhere, ", "))
}

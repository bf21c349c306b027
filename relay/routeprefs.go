package relay

import (
	"errors"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/routing"
)

// RouteHeader carries a request's routing preferences ("strategy=cost; avoid=tag:x; max_price=5").
const RouteHeader = "X-Tollgate-Route"

// bodyPrefsField is the top-level body field of a request's routing preferences ({"tollgate": {"route": …}}):
// read with gjson and cut out of the body with sjson (no JSON round trip) before anything is sent upstream.
const bodyPrefsField = "tollgate"

// DecisionSink keeps routing decisions (service/routing.DecisionLog).
type DecisionSink interface {
	Sampled() bool
	Add(model.RoutingDecision)
}

// routePrefs reads the request's own preferences (the header, then the body field, which wins field by
// field), strips the body field, and lays them over the owner's profile and the key's: the caller's
// preferences for this request only. A malformed preference is a 400 naming it.
func (r *Relay) routePrefs(h http.Header, rq *request) (model.RoutePrefs, *relayError) {
	levels := [3]model.RoutePrefs{rq.who.user.Routing.V, rq.who.tok.Routing.V}
	var own model.RoutePrefs
	if v := h.Get(RouteHeader); v != "" {
		p, err := routing.ParseHeader(v)
		if err != nil {
			return own, prefsError(err)
		}
		own = p
	}
	if f := gjson.GetBytes(rq.body, bodyPrefsField); f.Exists() {
		if !f.IsObject() {
			return own, newErr(http.StatusBadRequest, "validation_failed", "tollgate", `an object {"route": …}`)
		}
		var bad string
		f.ForEach(func(k, _ gjson.Result) bool {
			if k.String() != "route" {
				bad = k.String()
				return false
			}
			return true
		})
		if bad != "" {
			return own, newErr(http.StatusBadRequest, "validation_failed", "tollgate."+bad, "unknown field")
		}
		if rt := f.Get("route"); rt.Exists() {
			p, err := routing.ParseBody([]byte(rt.Raw))
			if err != nil {
				return own, prefsError(err)
			}
			own = routing.Merge(own, p)
		}
		body, err := sjson.DeleteBytes(rq.body, bodyPrefsField)
		if err != nil {
			return own, newErr(http.StatusBadRequest, "invalid_json")
		}
		rq.body = body
	}
	levels[2] = own
	rq.ownPrefs = !own.Empty()
	return routing.Merge(levels[:]...), nil
}

// prefsError turns a preference's validation error into the relay's 400 naming the field.
func prefsError(err error) *relayError {
	var ae *apperr.Error
	if errors.As(err, &ae) && len(ae.Args) == 2 {
		return newErr(http.StatusBadRequest, "validation_failed", ae.Args...)
	}
	return newErr(http.StatusBadRequest, "validation_failed", RouteHeader, err.Error())
}

// excludedAll is the answer when the caller's preferences left out every channel the pool had up: a 4xx
// naming the preferences, never a silent override.
func excludedAll(rt *routed, m string) *relayError {
	if len(rt.plan.Candidates) > 0 || len(rt.plan.Excluded) == 0 || len(rt.plan.Skipped) > 0 {
		return nil
	}
	return newErr(http.StatusBadRequest, "route_excluded_all", strings.Join(rt.plan.ExcludedBy(), ", "), m)
}

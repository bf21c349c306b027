package relay

import (
	"net/http"
	"slices"
	"testing"

	"tollgate/service/setting"
)

// FuzzClassifyStatus: any upstream status, body, headers and admin rule give a known class without a panic;
// a 2xx-free classification never calls a failure a success. Properties only: the rules themselves may change.
func FuzzClassifyStatus(f *testing.F) {
	f.Add(400, []byte(`{"error":{"message":"Invalid value: 'incorrect API key'"}}`), "", "", 0, "auth")
	f.Add(429, []byte(`{"error":{"code":"insufficient_quota"}}`), "12", "", 0, "")
	f.Add(401, []byte(`{"type":"error","error":{"type":"authentication_error"}}`), "", "", 401, "rate_limited")
	f.Add(529, []byte(`{"type":"error","error":{"type":"overloaded_error"}}`), "Wed, 21 Oct 2015 07:28:00 GMT", "1m2s", 0, "")
	f.Add(404, []byte("model_not_found"), "99999999999999999999", "-5s", 404, "model_unsupported")
	known := []Class{ClassRateLimited, ClassAuth, ClassUpstreamQuota, ClassServer, ClassTimeout, ClassReset,
		ClassClient, ClassModelUnsupported, ClassBadReply, ClassCanceled}
	var ruleClasses []string
	for c := range setting.ErrorClasses {
		ruleClasses = append(ruleClasses, c)
	}
	slices.Sort(ruleClasses)
	f.Fuzz(func(t *testing.T, status int, body []byte, retry, reset string, ruleStatus int, ruleContains string) {
		h := http.Header{}
		h.Set("Retry-After", retry)
		h.Set("x-ratelimit-reset-requests", reset)
		h.Set("anthropic-ratelimit-requests-reset", retry)
		var rules []setting.ErrorRule
		if ruleContains != "" { // admins save only known classes; pick one from the text
			rules = append(rules, setting.ErrorRule{Contains: ruleContains, Status: ruleStatus, Class: ruleClasses[len(ruleContains)%len(ruleClasses)]})
		}
		fl := classifyStatus(status, body, h, rules)
		if fl == nil || !slices.Contains(known, fl.class) {
			t.Fatalf("classifyStatus(%d, %q) = %+v: not a known failure class", status, body, fl)
		}
		_ = fl.message()
		_, _ = rateLimitOf(h)
	})
}

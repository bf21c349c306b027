package relay

import (
	"net/http"
	"testing"
	"time"

	"tollgate/service/setting"
)

func TestClassifyStatus_RulesThenStatusThenKeywords(t *testing.T) {
	rules := []setting.ErrorRule{
		{Contains: "Channel Suspended", Class: "auth"},
		{Contains: "busy", Status: 400, Class: "server"},
	}
	h := http.Header{}
	h.Set("Retry-After", "7")
	cases := []struct {
		name   string
		status int
		body   string
		rules  []setting.ErrorRule
		want   Class
	}{
		{"429 is rate limited", 429, `{"error":{"message":"slow down"}}`, nil, ClassRateLimited},
		{"429 with quota words is upstream quota", 429, `{"error":{"code":"insufficient_quota"}}`, nil, ClassUpstreamQuota},
		{"401 is auth", 401, `{}`, nil, ClassAuth},
		{"403 is auth", 403, `{}`, nil, ClassAuth},
		{"402 is upstream quota", 402, `{}`, nil, ClassUpstreamQuota},
		{"404 model not found", 404, `{"error":{"code":"model_not_found"}}`, nil, ClassModelUnsupported},
		{"400 plain is client", 400, `{"error":{"message":"bad messages"}}`, nil, ClassClient},
		{"500 is server", 500, `oops`, nil, ClassServer},
		{"529 is server", 529, `overloaded`, nil, ClassServer},
		{"504 is timeout", 504, ``, nil, ClassTimeout},
		{"admin rule wins over status", 500, `your Channel suspended today`, rules, ClassAuth},
		{"rule with status only matches it", 500, `server busy`, rules, ClassServer},
		{"rule with status matches", 400, `server busy`, rules, ClassServer},
		{"400 not matching any rule stays client", 400, `bad`, rules, ClassClient},
	}
	for _, tc := range cases {
		f := classifyStatus(tc.status, []byte(tc.body), h, tc.rules)
		if f.class != tc.want {
			t.Errorf("%s: got %s want %s", tc.name, f.class, tc.want)
		}
	}
	if f := classifyStatus(429, nil, h, nil); f.retryAfter != 7*time.Second {
		t.Errorf("Retry-After: got %s", f.retryAfter)
	}
}

func TestClass_RetryPolicy(t *testing.T) {
	for c, want := range map[Class]bool{ClassServer: true, ClassTimeout: true, ClassReset: true, ClassRateLimited: true,
		ClassAuth: true, ClassBadReply: true, ClassModelUnsupported: true, ClassClient: false, ClassCanceled: false} {
		if retryable(c) != want {
			t.Errorf("%s retryable = %v", c, !want)
		}
	}
	for c, want := range map[Class]bool{ClassRateLimited: false, ClassAuth: false, ClassUpstreamQuota: false, ClassServer: true, ClassTimeout: true} {
		if channelLevel(c) != want {
			t.Errorf("%s channel-level = %v", c, !want)
		}
	}
}

func TestRateLimitOf_ReadsBothProtocols(t *testing.T) {
	h := http.Header{}
	h.Set("x-ratelimit-remaining-requests", "42")
	h.Set("x-ratelimit-reset-requests", "20s")
	n, reset := rateLimitOf(h)
	if n != 42 || time.Until(reset) < 19*time.Second || time.Until(reset) > 21*time.Second {
		t.Fatalf("openai: %d %s", n, reset)
	}
	a := http.Header{}
	a.Set("anthropic-ratelimit-requests-remaining", "7")
	a.Set("anthropic-ratelimit-requests-reset", "2030-01-02T03:04:05Z")
	n, reset = rateLimitOf(a)
	if n != 7 || reset.Year() != 2030 {
		t.Fatalf("anthropic: %d %s", n, reset)
	}
	if n, reset := rateLimitOf(nil); n != 0 || !reset.IsZero() {
		t.Fatal("no headers, no budget")
	}
}

package relay

import (
	"net/http"
	"testing"
	"time"

	"tollgate/service/setting"
)

func TestClassifyStatus_StatusFirstThenStructuredFields(t *testing.T) {
	h := http.Header{}
	h.Set("Retry-After", "7")
	cases := []struct {
		name   string
		status int
		body   string
		want   Class
	}{
		{"429 is rate limited", 429, `{"error":{"message":"slow down"}}`, ClassRateLimited},
		{"429 with quota code is upstream quota", 429, `{"error":{"code":"insufficient_quota"}}`, ClassUpstreamQuota},
		{"429 with quota words is upstream quota", 429, `{"error":{"message":"You exceeded your current quota"}}`, ClassUpstreamQuota},
		{"401 is auth", 401, `{}`, ClassAuth},
		{"403 is auth", 403, `{}`, ClassAuth},
		{"402 is upstream quota", 402, `{}`, ClassUpstreamQuota},
		{"404 model_not_found code", 404, `{"error":{"type":"invalid_request_error","code":"model_not_found","message":"The model x does not exist"}}`, ClassModelUnsupported},
		{"400 model_not_found code", 400, `{"error":{"type":"invalid_request_error","code":"model_not_found"}}`, ClassModelUnsupported},
		{"anthropic 404 not_found_error", 404, `{"type":"error","error":{"type":"not_found_error","message":"model: claude-x"}}`, ClassModelUnsupported},
		{"400 not_found_error is the caller's", 400, `{"type":"error","error":{"type":"not_found_error","message":"file"}}`, ClassClient},
		{"400 plain is client", 400, `{"error":{"message":"bad messages"}}`, ClassClient},
		{"422 plain is client", 422, `{"detail":"x"}`, ClassClient},
		{"400 structured invalid_api_key is auth", 400, `{"error":{"type":"invalid_request_error","code":"invalid_api_key"}}`, ClassAuth},
		{"400 structured insufficient_quota", 400, `{"error":{"type":"insufficient_quota","message":"x"}}`, ClassUpstreamQuota},
		{"anthropic 400 credit balance", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}`, ClassUpstreamQuota},
		{"500 is server", 500, `oops`, ClassServer},
		{"500 with billing words stays server", 500, `{"error":{"message":"billing service unavailable"}}`, ClassServer},
		{"529 is server", 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, ClassServer},
		{"504 is timeout", 504, ``, ClassTimeout},
		{"408 is timeout", 408, ``, ClassTimeout},
		{"not JSON 400 is client", 400, `<html>bad</html>`, ClassClient},
		{"a redirect is a bad reply", 307, ``, ClassBadReply},
		// Hostile echoes: the caller's text comes back inside a 4xx message and must not condemn the key.
		{"echo incorrect api key", 400, `{"error":{"message":"Invalid value: 'Incorrect API key provided: sk-abc'. Supported values are: 'user'.","type":"invalid_request_error","param":"messages[0].role","code":"invalid_value"}}`, ClassClient},
		{"echo invalid x-api-key", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"messages.0.role: Input should be 'user' or 'assistant', got 'invalid x-api-key'"}}`, ClassClient},
		{"echo credit balance inside", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"messages.0.content: your credit balance is too low"}}`, ClassClient},
		{"echo billing quota words", 400, `{"error":{"message":"'insufficient_quota billing credit balance' is not one of ['system', 'user']"}}`, ClassClient},
		{"echo model words", 400, `{"error":{"message":"Unknown parameter: 'no such model does not exist'"}}`, ClassClient},
		{"echo authentication_error", 422, `{"error":{"message":"authentication_error invalid_api_key"}}`, ClassClient},
		{"404 echo", 404, `{"error":{"message":"invalid api key model_not_found"}}`, ClassClient},
		{"code nested in message only", 400, `{"error":{"message":"{\"code\":\"invalid_api_key\"}"}}`, ClassClient},
	}
	for _, tc := range cases {
		f := classifyStatus(tc.status, []byte(tc.body), h, nil)
		if f.class != tc.want {
			t.Errorf("%s: got %s want %s", tc.name, f.class, tc.want)
		}
	}
	if f := classifyStatus(429, nil, h, nil); f.retryAfter != 7*time.Second {
		t.Errorf("Retry-After: got %s", f.retryAfter)
	}
}

func TestClassifyStatus_AdminRulesWhereTheCallerCannotWrite(t *testing.T) {
	rules := []setting.ErrorRule{
		{Contains: "Channel Suspended", Class: "auth"},
		{Contains: "upstream busy", Status: 500, Class: "rate_limited"},
		{Contains: "organization disabled", Status: 403, Class: "upstream_quota"},
		{Contains: "余额不足", Status: 400, Class: "upstream_quota"},
		{Contains: "weird_code", Class: "server"},
	}
	h := http.Header{}
	h.Set("Retry-After", "3")
	cases := []struct {
		name   string
		status int
		body   string
		want   Class
	}{
		{"status-less rule reads a 401/402/403/429 body", 403, `your channel suspended today`, ClassAuth},
		{"status-less rule reads structured fields of any status", 400, `{"error":{"code":"Weird_Code","message":"x"}}`, ClassServer},
		{"status-less rule does not read a 400 message", 400, `{"error":{"message":"Invalid value: 'channel suspended'"}}`, ClassClient},
		{"status-less rule does not read a 5xx message", 500, `{"error":{"message":"channel suspended"}}`, ClassServer},
		{"rule with 5xx status reads that body", 500, `{"error":{"message":"upstream busy, retry"}}`, ClassRateLimited},
		{"rule with 5xx status ignores other statuses", 502, `upstream busy`, ClassServer},
		{"rule with 403 status", 403, `{"error":{"message":"Your organization disabled this"}}`, ClassUpstreamQuota},
		{"rule with 400 status reads the message start", 400, `{"error":{"message":"余额不足，请充值"}}`, ClassUpstreamQuota},
		{"rule with 400 status ignores an echo further in", 400, `{"error":{"message":"Invalid value: '余额不足'"}}`, ClassClient},
		{"rule with 400 status ignores the rest of the body", 400, `{"error":{"message":"bad","param":"余额不足"}}`, ClassClient},
	}
	for _, tc := range cases {
		f := classifyStatus(tc.status, []byte(tc.body), h, rules)
		if f.class != tc.want {
			t.Errorf("%s: got %s want %s", tc.name, f.class, tc.want)
		}
	}
	if f := classifyStatus(500, []byte("upstream busy"), h, rules); f.retryAfter != 3*time.Second {
		t.Errorf("rate-limited rule reads Retry-After: got %s", f.retryAfter)
	}
}

func TestEventClass_UpstreamStreamErrors(t *testing.T) {
	cases := []struct {
		data string
		want Class
	}{
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, ClassServer},
		{`{"type":"error","error":{"type":"api_error","message":"x"}}`, ClassServer},
		{`{"type":"error","error":{"type":"rate_limit_error","message":"x"}}`, ClassRateLimited},
		{`{"type":"error","error":{"type":"invalid_request_error","message":"x"}}`, ClassClient},
		{`{"error":{"message":"x","type":"server_error","param":null,"code":null}}`, ClassServer},
		{`{"type":"error","code":"rate_limit_exceeded","message":"x"}`, ClassRateLimited},
		{`{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"x"}}}`, ClassServer},
		{`{"type":"response.failed","response":{"status":"failed","error":{"code":"rate_limit_exceeded","message":"x"}}}`, ClassRateLimited},
		{`{"type":"response.failed","response":{"status":"failed","error":{"code":"invalid_prompt","message":"x"}}}`, ClassClient},
		{`{"type":"error","error":{"message":"no type"}}`, ClassServer},
	}
	for _, tc := range cases {
		if got := eventClass([]byte(tc.data)); got != tc.want {
			t.Errorf("%s: got %s want %s", tc.data, got, tc.want)
		}
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
	if n, reset := rateLimitOf(nil); n != -1 || !reset.IsZero() {
		t.Fatal("no headers: the budget is unknown (-1), not spent")
	}
	o := http.Header{}
	o.Set("x-ratelimit-reset-requests", "5s") // a reset without a remaining count
	if n, _ := rateLimitOf(o); n != -1 {
		t.Fatalf("reset only: remaining %d, want -1", n)
	}
	z := http.Header{}
	z.Set("x-ratelimit-remaining-requests", "0")
	if n, _ := rateLimitOf(z); n != 0 {
		t.Fatalf("spent budget read as %d", n)
	}
}

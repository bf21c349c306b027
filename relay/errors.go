package relay

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"tollgate/i18n"
	"tollgate/middleware"
	"tollgate/relay/adaptor"
)

// relayError is an error the gateway itself answers, before or instead of an upstream answer.
type relayError struct {
	status  int
	code    string // i18n code, also the OpenAI error code
	args    []any
	noRetry bool // answer "x-should-retry: false": retrying cannot help (the money ran out)
	// retryAfter, when set, is sent as Retry-After (whole seconds, at least 1): when a limit's window ends.
	retryAfter time.Duration
}

func newErr(status int, code string, args ...any) *relayError {
	return &relayError{status: status, code: code, args: args}
}

// moneyRefusal is the answer to a caller whose balance or key budget cannot cover the request, in the shape
// that makes that protocol's clients stop at once instead of retrying:
//   - OpenAI callers get OpenAI's own answer for an exhausted account, 429 with type insufficient_quota:
//     Codex CLI stops at once on insufficient_quota (a 402 was reported to make it retry five times). The OpenAI SDKs would
//     retry a 429; x-should-retry: false (below) stops them.
//   - Anthropic callers get 402 billing_error, Anthropic's documented type for a billing refusal. Anthropic's
//     API itself says "Your credit balance is too low…" as a 400 invalid_request_error; both are outside the
//     statuses the Anthropic SDK and Claude Code retry (408, 409, 429, 5xx), and 402 billing_error also tells
//     a program it is about money, not a malformed request. Claude Code shows its own "credit balance is too
//     low" notice on that phrase, which the English message carries.
//
// Gemini callers get 403 PERMISSION_DENIED: Google's clients retry 429 RESOURCE_EXHAUSTED with backoff.
//
// All carry x-should-retry: false, which the OpenAI and Anthropic SDKs (and Claude Code) obey before any
// status rule.
func moneyRefusal(proto adaptor.Protocol, code string) *relayError {
	status := http.StatusTooManyRequests
	switch proto {
	case adaptor.Anthropic:
		status = http.StatusPaymentRequired
	case adaptor.Gemini:
		status = http.StatusForbidden // Google's clients (Gemini CLI, @google/genai) retry a 429; a 403 they do not
	}
	return &relayError{status: status, code: code, noRetry: true}
}

// budgetRefusal is the answer to a key whose daily or monthly budget cannot cover the request: 429
// key_budget_exhausted in both protocols (OpenAI's own answer to a spend cap is a 429 insufficient_quota;
// Anthropic's clients read a 429 as a limit), with x-should-retry: false, since no retry helps before the
// window ends, and Retry-After saying when it does.
func budgetRefusal(left time.Duration) *relayError {
	return &relayError{status: http.StatusTooManyRequests, code: "key_budget_exhausted", noRetry: true, retryAfter: left}
}

// rateRefusal is a 429 of a per-minute limit with Retry-After.
func rateRefusal(code string, left time.Duration, args ...any) *relayError {
	return &relayError{status: http.StatusTooManyRequests, code: code, args: args, retryAfter: left}
}

// retryAfterSeconds renders d as Retry-After: whole seconds, rounded up, at least 1.
func retryAfterSeconds(d time.Duration) string {
	return strconv.FormatInt(max(int64((d+time.Second-1)/time.Second), 1), 10)
}

// openAIType maps a status to OpenAI's error.type.
func openAIType(status int, code string) string {
	switch {
	case code == "insufficient_quota" || code == "key_quota_exhausted" || code == "key_budget_exhausted":
		return "insufficient_quota"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusForbidden:
		return "permission_error"
	}
	return "invalid_request_error"
}

// anthropicType maps a status to Anthropic's error.type.
func anthropicType(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusPaymentRequired:
		return "billing_error"
	case 529, http.StatusServiceUnavailable:
		return "overloaded_error"
	case http.StatusGatewayTimeout:
		return "timeout_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

// geminiStatus maps a status to Google's error status word.
func geminiStatus(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		return "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden, http.StatusPaymentRequired:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusServiceUnavailable, 529:
		return "UNAVAILABLE"
	case http.StatusGatewayTimeout:
		return "DEADLINE_EXCEEDED"
	}
	if status >= 500 {
		return "INTERNAL"
	}
	return "FAILED_PRECONDITION"
}

// errorBody renders e in the protocol's error shape.
func errorBody(proto adaptor.Protocol, lang i18n.Lang, e *relayError) []byte {
	msg := i18n.T(lang, e.code, e.args...)
	var v any
	switch proto {
	case adaptor.Anthropic:
		v = map[string]any{"type": "error", "error": map[string]any{"type": anthropicType(e.status), "message": msg}}
	case adaptor.Gemini:
		v = map[string]any{"error": map[string]any{"code": e.status, "message": msg, "status": geminiStatus(e.status)}}
	default:
		v = map[string]any{"error": map[string]any{"message": msg, "type": openAIType(e.status, e.code), "param": nil, "code": e.code}}
	}
	b, _ := json.Marshal(v)
	return b
}

// fail answers e in the caller's protocol and aborts.
func fail(c *gin.Context, proto adaptor.Protocol, e *relayError) {
	if e.noRetry {
		c.Header("x-should-retry", "false")
	}
	if e.retryAfter > 0 {
		c.Header("Retry-After", retryAfterSeconds(e.retryAfter))
	}
	c.Data(e.status, "application/json", errorBody(proto, middleware.Lang(c), e))
	c.Abort()
}

// streamErrorEvent is the SSE event that ends a committed stream after an upstream failure.
func streamErrorEvent(proto adaptor.Protocol, lang i18n.Lang, e *relayError) []byte {
	body := errorBody(proto, lang, e)
	if proto == adaptor.Anthropic {
		return append(append([]byte("event: error\ndata: "), body...), '\n', '\n')
	}
	return append(append([]byte("data: "), body...), '\n', '\n')
}

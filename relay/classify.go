package relay

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tidwall/gjson"

	"tollgate/service/health"
	"tollgate/service/setting"
)

// Class is what kind of failure an upstream attempt met; it decides retry here and what the channel and
// key suffer in service/health, which owns the names.
type Class = health.Class

// Failure classes (health's names; ClassNone is a success).
const (
	ClassNone             = health.ClassSuccess
	ClassRateLimited      = health.ClassRateLimited
	ClassAuth             = health.ClassAuth
	ClassUpstreamQuota    = health.ClassUpstreamQuota
	ClassServer           = health.ClassServer
	ClassTimeout          = health.ClassTimeout
	ClassReset            = health.ClassReset
	ClassClient           = health.ClassClient
	ClassModelUnsupported = health.ClassModelUnsupported
	ClassBadReply         = health.ClassBadReply
	ClassCanceled         = health.ClassCanceled
)

// retryable says whether another channel or key may succeed where this attempt failed.
func retryable(c Class) bool { return c != ClassClient && c != ClassCanceled && c != ClassNone }

// failure is one failed attempt.
type failure struct {
	class      Class
	status     int
	body       []byte
	header     http.Header
	err        error
	retryAfter time.Duration
	local      *relayError // the gateway's own refusal (e.g. the overlapped reservation failed)
	leg        *leg        // the attempt's leg: a translated one's error body is rewritten for the caller
}

func (f *failure) message() string {
	if f.err != nil {
		return f.err.Error()
	}
	msg := string(f.body)
	if len(msg) > 300 {
		msg = msg[:300]
	}
	return strconv.Itoa(f.status) + " " + msg
}

// Built-in words looked for in the whole body of a 401/402/403/429 answer only (see classifyStatus).
var quotaWords = []string{"insufficient_quota", "quota exceeded", "exceeded your current quota", "credit balance", "billing", "余额不足"}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// codeClasses maps the upstream's own structured error codes and types (error.type, error.code, type, code;
// OpenAI, Anthropic and Responses stream names) to a class. These fields are written by the upstream, never
// echoed from the caller's input, so they are read on answers of any status.
var codeClasses = map[string]Class{
	// the upstream account is out of money
	"insufficient_quota":         ClassUpstreamQuota,
	"billing_error":              ClassUpstreamQuota,
	"billing_hard_limit_reached": ClassUpstreamQuota,
	"billing_not_active":         ClassUpstreamQuota,
	"credit_balance_too_low":     ClassUpstreamQuota,
	// the key is refused
	"invalid_api_key":      ClassAuth,
	"authentication_error": ClassAuth,
	"permission_error":     ClassAuth,
	"account_deactivated":  ClassAuth,
	// the channel does not serve the model
	"model_not_found":     ClassModelUnsupported,
	"model_not_supported": ClassModelUnsupported,
	"unsupported_model":   ClassModelUnsupported,
	// slow down / the upstream failed
	"rate_limit_error":     ClassRateLimited,
	"rate_limit_exceeded":  ClassRateLimited,
	"overloaded_error":     ClassServer,
	"server_is_overloaded": ClassServer,
	"api_error":            ClassServer,
	"server_error":         ClassServer,
	"internal_error":       ClassServer,
	"timeout_error":        ClassTimeout,
	// the request itself is wrong (generic: a specific value above wins, see fieldClass)
	"invalid_request_error":   ClassClient,
	"invalid_prompt":          ClassClient,
	"request_too_large":       ClassClient,
	"context_length_exceeded": ClassClient,
	"not_found_error":         ClassClient,
}

// anthropicCreditLow is the start of Anthropic's own out-of-credit message, which it sends as a 400
// invalid_request_error with nothing structured to tell it apart. It is recognised only at the very start of
// error.message, where Anthropic writes its own words; an echo of the caller's input sits further in.
const anthropicCreditLow = "your credit balance is too low"

// errorFields reads the upstream's structured error fields, lower-cased: error.type, error.code, top-level
// type and code (the Responses stream error shape). Top-level "error" (Anthropic's envelope) is skipped.
func errorFields(body []byte) []string {
	res := gjson.GetManyBytes(body, "error.type", "error.code", "type", "code")
	out := make([]string, 0, len(res))
	for _, r := range res {
		if v := strings.ToLower(r.String()); v != "" && v != "error" && (r.Type == gjson.String || r.Type == gjson.Number) {
			out = append(out, v)
		}
	}
	return out
}

// errorMessage is the upstream's error message, lower-cased and trimmed.
func errorMessage(body []byte) string {
	res := gjson.GetManyBytes(body, "error.message", "message")
	for _, r := range res {
		if r.Type == gjson.String {
			return strings.TrimSpace(strings.ToLower(r.String()))
		}
	}
	return ""
}

// bodyTrusted says whether a status's body may be searched for keywords: a 401, 402, 403 or 429 is about the
// key or the account, and upstreams do not echo the caller's input in it. A 400/404/422 often does
// ("Invalid value: '<what you sent>'"), so its free text could let one caller disable a channel's keys.
func bodyTrusted(status int) bool {
	switch status {
	case http.StatusUnauthorized, http.StatusPaymentRequired, http.StatusForbidden, http.StatusTooManyRequests:
		return true
	}
	return false
}

// ruleMatches applies one admin keyword rule. Where it may look (docs/API.md, settings):
//   - the structured fields (error.type, error.code, type, code): always;
//   - the whole body: on a 401/402/403/429, and on any other status the rule names explicitly except a
//     caller-shaped 4xx (a rule {status: 500, contains: "upstream busy"} reads a flaky upstream's 5xx body);
//   - for a rule naming a caller-shaped 4xx (400, 404, 409, 413, 422 …): the start of error.message only,
//     where the upstream writes its own words (e.g. {status: 400, contains: "your credit balance is too low"}).
//
// A rule without a status never reads the free text of a 5xx or of a caller-shaped 4xx.
func ruleMatches(r setting.ErrorRule, status int, body []byte, fields []string) bool {
	if r.Status != 0 && r.Status != status {
		return false
	}
	want := strings.ToLower(r.Contains)
	for _, f := range fields {
		if strings.Contains(f, want) {
			return true
		}
	}
	switch {
	case bodyTrusted(status):
		return strings.Contains(strings.ToLower(string(body)), want)
	case r.Status == 0:
		return false
	case status >= 400 && status < 500:
		return strings.HasPrefix(errorMessage(body), want)
	}
	return strings.Contains(strings.ToLower(string(body)), want)
}

// classifyStatus classifies an upstream HTTP error answer. The status decides first; keywords (the admin's
// rules, then the built-in lists) refine it only where the caller cannot have put them: the structured
// error fields of any answer, the body of a 401/402/403/429 (see ruleMatches for explicit-status rules).
// A 400/404/422 whose structured fields say nothing else is the caller's own error (ClassClient): it is
// passed through and counts against no key and no channel.
func classifyStatus(status int, body []byte, h http.Header, rules []setting.ErrorRule) *failure {
	f := &failure{status: status, body: body, header: h}
	fields := errorFields(body)
	for _, r := range rules {
		if ruleMatches(r, status, body, fields) {
			f.class = Class(r.Class)
			if f.class == ClassRateLimited {
				f.retryAfter = retryAfter(h)
			}
			return f
		}
	}
	f.class = statusClass(status, body, fields)
	if f.class == ClassRateLimited {
		f.retryAfter = retryAfter(h)
	}
	return f
}

// statusClass is the built-in classification of an error answer.
func statusClass(status int, body []byte, fields []string) Class {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		if fieldClass(fields) == ClassUpstreamQuota {
			return ClassUpstreamQuota
		}
		return ClassAuth
	case status == http.StatusPaymentRequired:
		return ClassUpstreamQuota
	case status == http.StatusTooManyRequests:
		if fieldClass(fields) == ClassUpstreamQuota || containsAny(strings.ToLower(string(body)), quotaWords) {
			return ClassUpstreamQuota
		}
		return ClassRateLimited
	case status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout:
		return ClassTimeout
	case status >= 500:
		if c := fieldClass(fields); c == ClassUpstreamQuota || c == ClassAuth {
			return c
		}
		return ClassServer
	case status >= 400:
		switch c := fieldClass(fields); {
		case c == ClassUpstreamQuota, c == ClassAuth, c == ClassModelUnsupported, c == ClassRateLimited:
			return c
		case status == http.StatusNotFound && slices.Contains(fields, "not_found_error"):
			return ClassModelUnsupported // Anthropic: the only thing a Messages call can miss is the model
		case status == http.StatusBadRequest && strings.HasPrefix(errorMessage(body), anthropicCreditLow):
			return ClassUpstreamQuota
		}
	default: // 1xx/3xx: not an answer an API call can use (redirects are not followed)
		return ClassBadReply
	}
	return ClassClient
}

// fieldClass is the class the structured fields name (ClassNone when they name none). A specific value
// wins over the generic ones that only say "the request" (OpenAI sends type invalid_request_error with code
// model_not_found); otherwise the first known value, error.type before error.code.
func fieldClass(fields []string) Class {
	found := ClassNone
	for _, f := range fields {
		c, ok := codeClasses[f]
		switch {
		case !ok:
		case c != ClassClient:
			return c
		case found == ClassNone:
			found = c
		}
	}
	return found
}

// eventClass classifies an error the upstream reported inside a stream (an Anthropic error event, an
// OpenAI chat chunk carrying "error", a Responses error or response.failed event) by its structured fields.
func eventClass(data []byte) Class {
	fields := errorFields(data)
	if r := gjson.GetBytes(data, "response.error.code"); r.Exists() { // Responses response.failed
		fields = append([]string{strings.ToLower(r.String())}, fields...)
	}
	if c := fieldClass(fields); c != ClassNone {
		return c
	}
	return ClassServer
}

// retryAfter reads Retry-After (seconds or date) or the OpenAI/Anthropic reset headers.
func retryAfter(h http.Header) time.Duration {
	if v := h.Get("Retry-After"); v != "" {
		if s, err := strconv.Atoi(v); err == nil {
			return time.Duration(s) * time.Second
		}
		if t, err := http.ParseTime(v); err == nil {
			return time.Until(t)
		}
	}
	for _, k := range []string{"x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"} {
		if d, err := time.ParseDuration(h.Get(k)); err == nil {
			return d
		}
	}
	if t, err := time.Parse(time.RFC3339, headerValue(h, "Anthropic-Ratelimit-Requests-Reset")); err == nil {
		return time.Until(t)
	}
	return 0
}

// classifyErr classifies a transport error; cause is the deadline that fired, if any.
func classifyErr(err error, cause error, clientGone bool) *failure {
	f := &failure{err: err}
	var ne net.Error
	switch {
	case clientGone:
		f.class = ClassCanceled
	case cause != nil && !errors.Is(cause, context.Canceled):
		f.class, f.err = ClassTimeout, cause
	case errors.As(err, &ne) && ne.Timeout():
		f.class = ClassTimeout
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EPIPE):
		f.class = ClassReset
	default:
		f.class = ClassReset
	}
	return f
}

// headerValue is h.Get for a name already in canonical form.
func headerValue(h http.Header, canonical string) string {
	if v := h[canonical]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// rateLimitOf reads the upstream's remaining-requests budget and its reset time (OpenAI x-ratelimit-*,
// Anthropic anthropic-ratelimit-requests-*), for the channel's live metrics and the key's budget: remaining is
// -1 when no header reports it (0 is a spent budget, which makes health skip the key until the reset).
func rateLimitOf(h http.Header) (remaining int64, reset time.Time) {
	remaining = -1
	if h == nil {
		return remaining, time.Time{}
	}
	// Absent headers are skipped before parsing (a failed parse allocates its error, on every answer), and
	// the names are canonical already (Get would allocate a canonical copy of a lower-case name).
	for _, k := range []string{"X-Ratelimit-Remaining-Requests", "Anthropic-Ratelimit-Requests-Remaining"} {
		if v := headerValue(h, k); v != "" {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				remaining = n
				break
			}
		}
	}
	if v := headerValue(h, "X-Ratelimit-Reset-Requests"); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			return remaining, time.Now().Add(d)
		}
	}
	if v := headerValue(h, "Anthropic-Ratelimit-Requests-Reset"); v != "" {
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			reset = t
		}
	}
	return remaining, reset
}

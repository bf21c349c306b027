package relay

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

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

var quotaWords = []string{"insufficient_quota", "quota exceeded", "exceeded your current quota", "credit balance", "billing", "余额不足"}
var modelWords = []string{"model_not_found", "does not exist", "not supported model", "unsupported model", "invalid model", "no such model"}
var authWords = []string{"invalid_api_key", "invalid api key", "incorrect api key", "authentication_error", "invalid x-api-key"}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// classifyStatus classifies an upstream HTTP error answer: the admin's keyword rules first, then status and
// built-in body keywords.
func classifyStatus(status int, body []byte, h http.Header, rules []setting.ErrorRule) *failure {
	f := &failure{status: status, body: body, header: h}
	low := strings.ToLower(string(body))
	for _, r := range rules {
		if (r.Status == 0 || r.Status == status) && strings.Contains(low, strings.ToLower(r.Contains)) {
			f.class = Class(r.Class)
			if f.class == ClassRateLimited {
				f.retryAfter = retryAfter(h)
			}
			return f
		}
	}
	switch {
	case status == http.StatusTooManyRequests && containsAny(low, quotaWords):
		f.class = ClassUpstreamQuota
	case status == http.StatusTooManyRequests:
		f.class = ClassRateLimited
		f.retryAfter = retryAfter(h)
	case status == http.StatusUnauthorized || status == http.StatusForbidden || containsAny(low, authWords):
		f.class = ClassAuth
	case status == http.StatusPaymentRequired || containsAny(low, quotaWords):
		f.class = ClassUpstreamQuota
	case (status == http.StatusNotFound || status == http.StatusBadRequest) && containsAny(low, modelWords):
		f.class = ClassModelUnsupported
	case status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout:
		f.class = ClassTimeout
	case status >= 500:
		f.class = ClassServer
	default:
		f.class = ClassClient
	}
	return f
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
	if t, err := time.Parse(time.RFC3339, h.Get("anthropic-ratelimit-requests-reset")); err == nil {
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

// rateLimitOf reads the upstream's remaining-requests budget and its reset time (OpenAI x-ratelimit-*,
// Anthropic anthropic-ratelimit-requests-*), for the channel's live metrics.
func rateLimitOf(h http.Header) (remaining int64, reset time.Time) {
	if h == nil {
		return 0, time.Time{}
	}
	for _, k := range []string{"x-ratelimit-remaining-requests", "anthropic-ratelimit-requests-remaining"} {
		if n, err := strconv.ParseInt(h.Get(k), 10, 64); err == nil {
			remaining = n
			break
		}
	}
	if d, err := time.ParseDuration(h.Get("x-ratelimit-reset-requests")); err == nil {
		reset = time.Now().Add(d)
	} else if t, err := time.Parse(time.RFC3339, h.Get("anthropic-ratelimit-requests-reset")); err == nil {
		reset = t
	}
	return remaining, reset
}

package relaytest

import (
	"encoding/json"
	"math"
	"net"
	"net/http"
	"strconv"
	"time"
)

// FaultKind says how a Fault breaks a response.
type FaultKind int

// The kinds of fault the fake can inject.
const (
	// FaultStatus answers with an error status and a body in the caller's protocol.
	FaultStatus FaultKind = iota + 1
	// FaultReset drops the TCP connection with a RST: before any byte when AfterChunks is 0, else after
	// AfterChunks content deltas of a stream (or mid-body for a non-stream).
	FaultReset
	// FaultHang never answers (before headers, or after AfterChunks deltas of a stream) until the client
	// gives up or the fake is closed.
	FaultHang
	// FaultInvalidJSON answers 200 with a truncated JSON body, or a garbled SSE data event after AfterChunks
	// deltas of a stream.
	FaultInvalidJSON
	// FaultStreamError sends the protocol's in-stream error event after AfterChunks deltas and ends the stream.
	FaultStreamError
	// FaultResponseFailed ends a Responses stream with response.failed (error code Code, default
	// server_error; usage as configured) after AfterChunks deltas; other protocols get FaultStreamError.
	FaultResponseFailed
)

// Error codes select the protocol-shaped error body of a FaultStatus fault.
const (
	CodeInvalidKey        = "invalid_api_key"
	CodePermissionDenied  = "permission_denied"
	CodeInvalidRequest    = "invalid_request"
	CodeModelNotFound     = "model_not_found"
	CodeRateLimited       = "rate_limited"
	CodeInsufficientQuota = "insufficient_quota"
	CodeServerError       = "server_error"
	CodeOverloaded        = "overloaded"
	CodeBadGateway        = "bad_gateway"
)

// Fault is a failure injected instead of, or into, a normal answer. Build one with the constructors below or
// by hand.
type Fault struct {
	Kind FaultKind
	// Status of a FaultStatus answer; 0 takes the code's usual status in the caller's protocol.
	Status int
	// Code picks the error body (Code* constants); empty derives it from Status.
	Code string
	// Message replaces the default error message.
	Message string
	// Header is added to the response (for example Retry-After).
	Header http.Header
	// Body replaces the generated body verbatim; ContentType goes with it (default application/json).
	Body        string
	ContentType string
	// RetryAfter, when positive, adds Retry-After, retry-after-ms, x-ratelimit-*-requests/tokens and
	// anthropic-ratelimit-*-reset headers computed when the fault is served.
	RetryAfter time.Duration
	// AfterChunks is how many content deltas go out before a mid-stream fault strikes.
	AfterChunks int
}

// RateLimited is a 429 with Retry-After and x-ratelimit-reset-* / anthropic-ratelimit-*-reset headers
// announcing a reset after d.
func RateLimited(d time.Duration) Fault {
	return Fault{Kind: FaultStatus, Status: http.StatusTooManyRequests, Code: CodeRateLimited, RetryAfter: d}
}

// InsufficientQuota is the provider's out-of-credit answer (OpenAI 429 insufficient_quota, Anthropic 400
// "credit balance is too low").
func InsufficientQuota() Fault { return Fault{Kind: FaultStatus, Code: CodeInsufficientQuota} }

// InvalidKey is a 401 invalid API key.
func InvalidKey() Fault {
	return Fault{Kind: FaultStatus, Status: http.StatusUnauthorized, Code: CodeInvalidKey}
}

// Forbidden is a 403 permission error.
func Forbidden() Fault {
	return Fault{Kind: FaultStatus, Status: http.StatusForbidden, Code: CodePermissionDenied}
}

// BadRequest is a 400 invalid request error.
func BadRequest() Fault {
	return Fault{Kind: FaultStatus, Status: http.StatusBadRequest, Code: CodeInvalidRequest}
}

// ModelNotFound is a 404 naming the requested model.
func ModelNotFound() Fault {
	return Fault{Kind: FaultStatus, Status: http.StatusNotFound, Code: CodeModelNotFound}
}

// ServerError is a 500 server error.
func ServerError() Fault {
	return Fault{Kind: FaultStatus, Status: http.StatusInternalServerError, Code: CodeServerError}
}

// BadGateway is a 502 with an HTML body, as a CDN in front of a provider sends it.
func BadGateway() Fault {
	return Fault{Kind: FaultStatus, Status: http.StatusBadGateway, Code: CodeBadGateway}
}

// Overloaded is Anthropic's 529 overloaded_error (OpenAI callers get the same status with a server_error body).
func Overloaded() Fault { return Fault{Kind: FaultStatus, Status: 529, Code: CodeOverloaded} }

// Status is an error answer with the given status and the matching default body.
func Status(code int) Fault { return Fault{Kind: FaultStatus, Status: code} }

// Reset drops the connection with a TCP RST after n content deltas (n = 0: before any byte).
func Reset(n int) Fault { return Fault{Kind: FaultReset, AfterChunks: n} }

// Hang never answers until the client gives up.
func Hang() Fault { return Fault{Kind: FaultHang} }

// HangAfter sends n content deltas of a stream and then stalls (an idle stream).
func HangAfter(n int) Fault { return Fault{Kind: FaultHang, AfterChunks: n} }

// InvalidJSON answers 200 with a broken JSON body (a garbled first data event for streams).
func InvalidJSON() Fault { return Fault{Kind: FaultInvalidJSON} }

// StreamError sends the protocol's in-stream error event after n content deltas and ends the stream (its
// Message, when set, replaces the vendor's text).
func StreamError(n int) Fault { return Fault{Kind: FaultStreamError, AfterChunks: n} }

// ResponseFailed ends a Responses stream with response.failed after n content deltas (error code code, or
// server_error when empty; the usage object follows WithUsage).
func ResponseFailed(n int, code string) Fault {
	return Fault{Kind: FaultResponseFailed, AfterChunks: n, Code: code}
}

func (f *Fault) code() string {
	if f.Code != "" {
		return f.Code
	}
	switch f.Status {
	case 401:
		return CodeInvalidKey
	case 403:
		return CodePermissionDenied
	case 404:
		return CodeModelNotFound
	case 429:
		return CodeRateLimited
	case 502:
		return CodeBadGateway
	case 503, 529:
		return CodeOverloaded
	}
	if f.Status >= 500 {
		return CodeServerError
	}
	return CodeInvalidRequest
}

// errorShape is one error's look in both protocols.
type errorShape struct {
	status           int
	anthropicStatus  int
	openaiType       string
	openaiCode       any
	anthropicType    string
	openaiMessage    string
	anthropicMessage string
}

func shapeFor(code, model, key string) errorShape {
	switch code {
	case CodeInvalidKey:
		return errorShape{401, 401, "invalid_request_error", "invalid_api_key", "authentication_error",
			"Incorrect API key provided: " + maskKey(key) + ". You can find your API key at https://platform.openai.com/account/api-keys.",
			"invalid x-api-key"}
	case CodePermissionDenied:
		return errorShape{403, 403, "invalid_request_error", "permission_denied", "permission_error",
			"You are not allowed to access this resource.",
			"Your API key does not have permission to use the specified resource."}
	case CodeModelNotFound:
		return errorShape{404, 404, "invalid_request_error", "model_not_found", "not_found_error",
			"The model `" + model + "` does not exist or you do not have access to it.", "model: " + model}
	case CodeRateLimited:
		return errorShape{429, 429, "requests", "rate_limit_exceeded", "rate_limit_error",
			"Rate limit reached for requests. Please try again later.",
			"Number of requests has exceeded your per-minute rate limit. Please try again later."}
	case CodeInsufficientQuota:
		return errorShape{429, 400, "insufficient_quota", "insufficient_quota", "invalid_request_error",
			"You exceeded your current quota, please check your plan and billing details.",
			"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}
	case CodeServerError:
		return errorShape{500, 500, "server_error", nil, "api_error",
			"The server had an error while processing your request. Sorry about that!", "Internal server error"}
	case CodeOverloaded:
		return errorShape{503, 529, "server_error", nil, "overloaded_error",
			"The engine is currently overloaded, please try again later.", "Overloaded"}
	case CodeBadGateway:
		return errorShape{502, 502, "", nil, "", "", ""}
	}
	return errorShape{400, 400, "invalid_request_error", "invalid_value", "invalid_request_error",
		"Invalid request (injected by relaytest).", "Invalid request (injected by relaytest)."}
}

const badGatewayHTML = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>cloudflare</center>\r\n</body>\r\n</html>\r\n"

// writeStatusFault answers a FaultStatus fault in the protocol p.
func writeStatusFault(w http.ResponseWriter, f *Fault, p protocol, model, key, reqID string) {
	code := f.code()
	s := shapeFor(code, model, key)
	status := f.Status
	if status == 0 {
		status = s.status
		if p == protoAnthropic {
			status = s.anthropicStatus
		}
	}
	h := w.Header()
	for k, vs := range f.Header {
		h[k] = append([]string(nil), vs...)
	}
	if f.RetryAfter > 0 {
		addRetryHeaders(h, f.RetryAfter)
	}
	body, ctype := []byte(f.Body), f.ContentType
	switch {
	case f.Body != "":
	case code == CodeBadGateway:
		body, ctype = []byte(badGatewayHTML), "text/html"
	default:
		body = errorBody(p, s, f.Message, reqID)
	}
	if ctype == "" {
		ctype = "application/json"
	}
	if p == protoGemini && f.Body == "" && code != CodeBadGateway {
		body = geminiErrorBody(status, s.openaiMessage, f.Message)
	}
	h.Set("Content-Type", ctype)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func errorBody(p protocol, s errorShape, msg, reqID string) []byte {
	var v any
	if p == protoAnthropic {
		if msg == "" {
			msg = s.anthropicMessage
		}
		v = map[string]any{"type": "error", "error": map[string]any{"type": s.anthropicType, "message": msg},
			"request_id": reqID}
	} else {
		if msg == "" {
			msg = s.openaiMessage
		}
		v = map[string]any{"error": map[string]any{"message": msg, "type": s.openaiType, "param": nil,
			"code": s.openaiCode}}
	}
	b, _ := json.Marshal(v)
	return b
}

// streamErrorEvent is the in-stream error frame of protocol p; msg, when set, replaces the vendor's message.
func streamErrorEvent(p protocol, seq int, msg string) []byte {
	text := func(def string) string {
		if msg == "" {
			msg = def
		}
		b, _ := json.Marshal(msg)
		return string(b)
	}
	switch p {
	case protoGemini:
		return geminiFrame(geminiErrorBody(503, "The model is overloaded. Please try again later.", msg))
	case protoAnthropic:
		return []byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":" + text("Overloaded") + "}}\n\n")
	case protoResponses:
		return []byte("event: error\ndata: {\"type\":\"error\",\"code\":\"server_error\",\"message\":" +
			text("The server had an error while processing your request.") + ",\"param\":null,\"sequence_number\":" +
			strconv.Itoa(seq) + "}\n\n")
	}
	return []byte("data: {\"error\":{\"message\":" + text("The server had an error while processing your request. Sorry about that!") +
		",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n")
}

// garbledEvent is a data event whose JSON is cut short.
func garbledEvent(p protocol) []byte {
	if p == protoAnthropic {
		return []byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_\n\n")
	}
	return []byte("data: {\"id\":\"broken\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\n\n")
}

func addRetryHeaders(h http.Header, d time.Duration) {
	secs := int(math.Ceil(d.Seconds()))
	reset := time.Now().Add(d).UTC().Format(time.RFC3339)
	h.Set("Retry-After", strconv.Itoa(secs))
	h.Set("retry-after-ms", strconv.FormatInt(d.Milliseconds(), 10))
	h.Set("x-ratelimit-limit-requests", "60")
	h.Set("x-ratelimit-remaining-requests", "0")
	h.Set("x-ratelimit-reset-requests", d.String())
	h.Set("x-ratelimit-limit-tokens", "150000")
	h.Set("x-ratelimit-remaining-tokens", "0")
	h.Set("x-ratelimit-reset-tokens", d.String())
	h.Set("anthropic-ratelimit-requests-limit", "60")
	h.Set("anthropic-ratelimit-requests-remaining", "0")
	h.Set("anthropic-ratelimit-requests-reset", reset)
	h.Set("anthropic-ratelimit-tokens-reset", reset)
}

// resetConn hijacks the connection and closes it with SO_LINGER 0 so the client sees a reset, not a clean EOF.
func resetConn(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // not hijackable (HTTP/2): abort the stream instead
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

func maskKey(k string) string {
	if len(k) <= 8 {
		return "****"
	}
	return k[:3] + "****" + k[len(k)-4:]
}

// geminiErrorBody is a google.rpc error: {"error":{"code","message","status"}}; msg, when set, replaces def.
func geminiErrorBody(status int, def, msg string) []byte {
	if msg == "" {
		msg = def
	}
	if status == 529 {
		status = 503
	}
	return mustJSON(map[string]any{"error": map[string]any{"code": status, "message": msg, "status": geminiStatus(status)}})
}

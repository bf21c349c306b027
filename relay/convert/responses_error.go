package convert

// The Responses API codec's errors: reading an upstream's error body or in-stream error event, and writing
// one for a Responses caller.

import (
	"encoding/json"
	"net/http"

	"github.com/tidwall/gjson"
)

// ParseError implements Codec: an OpenAI-shaped error body ({"error":{message,type,param,code}}), or the
// data of an in-stream error event (error, response.failed). nil when the body has no error in it.
func (rspCodec) ParseError(status int, body []byte) *Error {
	if !gjson.ValidBytes(body) {
		return nil
	}
	root := gjson.ParseBytes(body)
	e := root.Get("error")
	switch {
	case e.IsObject():
	case root.Get("type").String() == "response.failed":
		e = root.Get("response.error")
	case root.Get("type").String() == "error":
		e = root
	default:
		return nil
	}
	msg, code, typ := e.Get("message").String(), e.Get("code").String(), e.Get("type").String()
	if msg == "" && code == "" {
		return nil
	}
	return &Error{Status: status, Type: rspErrType(status, code, typ), Code: code, Message: msg}
}

// rspErrType is the canonical category of an OpenAI error: the status when there is one, else its code and
// type words.
func rspErrType(status int, code, typ string) ErrorType {
	if code == "insufficient_quota" || typ == "insufficient_quota" {
		return ErrQuota
	}
	if status == http.StatusBadRequest || status == http.StatusUnprocessableEntity {
		return ErrInvalidRequest
	}
	if t := statusType(status); t != "" {
		return t
	}
	switch {
	case code == "rate_limit_exceeded" || typ == "rate_limit_error" || typ == "tokens" || typ == "requests":
		return ErrRateLimit
	case code == "server_is_overloaded" || code == "slow_down":
		return ErrOverloaded
	case code == "invalid_prompt" || code == "context_length_exceeded" || typ == "invalid_request_error":
		return ErrInvalidRequest
	case typ == "authentication_error" || code == "invalid_api_key":
		return ErrAuthentication
	case typ == "permission_error":
		return ErrPermission
	case typ == "not_found_error" || code == "model_not_found":
		return ErrNotFound
	}
	return ErrServer
}

// rspErrorOut is an OpenAI-shaped error body.
type rspErrorOut struct {
	Error rspErrorBody `json:"error"`
}

// rspErrorBody is the error object; param and code are null when unknown.
type rspErrorBody struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// rspErrWords is an error category's OpenAI type word and the code written when the upstream gave none.
func rspErrWords(t ErrorType) (typ, code string) {
	switch t {
	case ErrInvalidRequest, ErrTooLarge:
		return "invalid_request_error", ""
	case ErrAuthentication:
		return "authentication_error", "invalid_api_key"
	case ErrPermission:
		return "permission_error", ""
	case ErrNotFound:
		return "invalid_request_error", "not_found"
	case ErrRateLimit:
		return "rate_limit_error", "rate_limit_exceeded"
	case ErrQuota:
		return "insufficient_quota", "insufficient_quota"
	case ErrOverloaded:
		return "server_error", "server_is_overloaded"
	case ErrTimeout:
		return "server_error", "timeout"
	}
	return "server_error", "server_error"
}

// rspErrCode is the code word a client sees for e: the upstream's own, else its category's.
func rspErrCode(e *Error) string {
	if e.Code != "" {
		return e.Code
	}
	_, code := rspErrWords(e.Type)
	if code == "" {
		code = "invalid_request"
	}
	return code
}

// BuildError implements Codec: e as an OpenAI-shaped error body.
func (rspCodec) BuildError(e *Error) []byte {
	typ, code := rspErrWords(e.Type)
	out := rspErrorOut{Error: rspErrorBody{Message: e.Message, Type: typ}}
	if e.Code != "" {
		code = e.Code
	}
	if code != "" {
		out.Error.Code = &code
	}
	b, _ := json.Marshal(out)
	return b
}

// Package middleware holds the gin middleware (request id, access log, recovery, locale, body limits, console
// auth) and the console's error rendering that handlers share.
package middleware

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"tollgate/i18n"
	"tollgate/service/apperr"
)

// ErrorBody is the console error shape.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the inside of ErrorBody.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// Fail renders err as a console error and aborts. Errors that are not *apperr.Error are logged and shown as
// a 500 with the request id (their text may hold internals).
func Fail(c *gin.Context, err error) {
	lang := Lang(c)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		err = apperr.New(http.StatusRequestEntityTooLarge, "body_too_large", humanBytes(mbe.Limit))
	}
	ae, ok := apperr.As(err)
	if !ok {
		slog.Error("request failed", "request_id", RequestID(c), "path", c.FullPath(), "err", err)
		ae = apperr.New(http.StatusInternalServerError, "internal_error", RequestID(c))
	}
	if ae.RetryAfter > 0 {
		c.Header("Retry-After", strconv.Itoa(ae.RetryAfter))
	}
	c.AbortWithStatusJSON(ae.Status, ErrorBody{Error: ErrorDetail{Code: ae.Code, Message: i18n.T(lang, ae.MessageKey(), ae.Args...), Field: ae.Field}})
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " B"
}

// Bind decodes the JSON body into v; malformed JSON, wrong types and oversized bodies become console errors.
func Bind(c *gin.Context, v any) bool {
	body, err := io.ReadAll(c.Request.Body)
	if err == nil {
		err = checkShape(body)
	}
	var se *shapeError
	switch {
	case errors.As(err, &se) && se.depth:
		Fail(c, apperr.New(http.StatusBadRequest, "body_too_deep", consoleMaxDepth))
		return false
	case errors.As(err, &se):
		Fail(c, apperr.New(http.StatusBadRequest, "duplicate_key", se.dup))
		return false
	case err == nil:
		err = json.Unmarshal(body, v)
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			Fail(c, err)
			return false
		}
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) && ute.Field != "" {
			Fail(c, apperr.Field(ute.Field, "wrong type: expected "+ute.Type.String()))
			return false
		}
		Fail(c, apperr.New(http.StatusBadRequest, "invalid_json"))
		return false
	}
	return true
}

// Package apperr is the error type services return when the caller should see a localized message:
// an HTTP status, a stable code from the i18n catalog, its format arguments and optionally the field at fault.
package apperr

import (
	"errors"
	"fmt"
	"net/http"
)

// Error is a client-visible failure.
type Error struct {
	Status int
	Code   string
	Args   []any
	Field  string
	// Message, when set, is the catalog key of the message (a more precise text for the same code).
	Message string
	// RetryAfter, when positive, is sent as the Retry-After header (seconds).
	RetryAfter int
}

func (e *Error) Error() string { return fmt.Sprintf("%s (%d)", e.Code, e.Status) }

// New builds an Error.
func New(status int, code string, args ...any) *Error {
	return &Error{Status: status, Code: code, Args: args}
}

// Field builds a 400 validation error naming the field.
func Field(field, reason string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "validation_failed", Args: []any{field, reason}, Field: field}
}

// MessageKey is the catalog key of the error's message.
func (e *Error) MessageKey() string {
	if e.Message != "" {
		return e.Message
	}
	return e.Code
}

// As extracts an *Error from err.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Common errors.
var (
	ErrForbidden = New(http.StatusForbidden, "forbidden")
)

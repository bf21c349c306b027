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

package account

import (
	_ "embed"
	"net/http"
	"strings"
	"unicode"

	"tollgate/service/apperr"
)

// commonPasswords is the shipped list of the 10,000 most common passwords (see the file's header for its
// source and licence).
//
//go:embed common_passwords.txt
var commonPasswords string

// passwordPolicy refuses passwords that are short, lack a letter or a digit, are among the most common
// passwords, or contain the username. The common list is a set built once per service, on first use (not a scan
// per request).
type passwordPolicy struct {
	common map[string]struct{}
}

func newPasswordPolicy() *passwordPolicy {
	p := &passwordPolicy{common: make(map[string]struct{}, 10_000)}
	for _, line := range strings.Split(commonPasswords, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			p.common[strings.ToLower(line)] = struct{}{}
		}
	}
	return p
}

// Reasons of a weak_password refusal; each has its own message so the user knows what to change.
const (
	weakShape    = "weak_password"          // length, letters and digits
	weakCommon   = "weak_password_common"   // one of the most common passwords
	weakUsername = "weak_password_username" // contains the username
)

// check returns a 400 weak_password error naming field (so a form can show it under the field), or nil:
// the shape rule, then the common-password list, then the username. The code is always weak_password; the
// message says which rule failed.
func (p *passwordPolicy) check(field, username, pw string) error {
	if err := checkShape(field, pw); err != nil {
		return err
	}
	lower := strings.ToLower(pw)
	if _, ok := p.common[lower]; ok {
		return weak(field, weakCommon)
	}
	if strings.Contains(lower, strings.ToLower(username)) {
		return weak(field, weakUsername)
	}
	return nil
}

// checkShape is the length and letter/digit rule alone (the operator's ROOT_PASSWORD at first start).
func checkShape(field, pw string) error {
	if len(pw) < 8 || len(pw) > 72 {
		return weak(field, weakShape)
	}
	var letter, digit bool
	for _, r := range pw {
		letter = letter || unicode.IsLetter(r)
		digit = digit || unicode.IsDigit(r)
	}
	if !letter || !digit {
		return weak(field, weakShape)
	}
	return nil
}

// weak builds the client error: code weak_password on field, message from the catalog entry of reason.
func weak(field, reason string) error {
	e := apperr.New(http.StatusBadRequest, "weak_password")
	e.Message, e.Field = reason, field
	return e
}

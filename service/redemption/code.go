package redemption

import (
	"strings"
	"unicode"

	"tollgate/service/secret"
)

// A code is Prefix followed by bodyLen random base62 characters (crypto/rand): 62^32 ≈ 2^190 possibilities,
// so guessing one is hopeless even without the attempt limits.
const (
	// Prefix makes a code recognisable in a chat message or a shop's order page. Users may type it in any case.
	Prefix  = "TG-"
	bodyLen = 32
	// maxInput bounds what a user may send as a code before it is even cleaned up: a code is 35 characters, a
	// paste with spaces and line breaks around and inside it a little more.
	maxInput = 256
)

// newCode draws a fresh code.
func newCode() (string, error) {
	body, err := secret.RandomBase62(bodyLen)
	if err != nil {
		return "", err
	}
	return Prefix + body, nil
}

// canonical turns what a user pasted into the code's canonical text: every whitespace character (around and
// inside: line breaks and spaces from chat messages, no-break spaces) removed, the prefix in its canonical
// case, and added when only the body was pasted. The body is base62 and case-sensitive: it is left as it is.
// ok is false when the result cannot be a code (it is then answered like an unknown code).
func canonical(in string) (code string, ok bool) {
	s := strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '\u200b' || r == '\ufeff' { // zero-width space and BOM come with pastes too
			return -1
		}
		return r
	}, in)
	if len(s) >= len(Prefix) && strings.EqualFold(s[:len(Prefix)], Prefix) {
		s = s[len(Prefix):]
	}
	if len(s) != bodyLen {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return "", false
		}
	}
	return Prefix + s, true
}

// hint is what lists show of a code: the prefix, the first and the last four characters of the body.
func hint(code string) string {
	body := code[len(Prefix):]
	return Prefix + body[:4] + "…" + body[len(body)-4:]
}

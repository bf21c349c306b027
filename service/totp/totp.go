// Package totp implements time-based one-time passwords (RFC 6238 over RFC 4226 HOTP): HMAC-SHA1, six
// digits, 30-second steps, the previous and next step accepted for clock drift. It holds no state: replay
// protection (each step used once) is the caller's, who remembers the last step accepted.
package totp

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1" //nolint:gosec // RFC 6238's default and what every authenticator app implements
	"crypto/subtle"
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"hash"
	"net/url"
	"strings"
	"time"
)

// Parameters every authenticator app understands.
const (
	Digits = 6
	Period = 30 * time.Second
	Skew   = 1 // steps accepted either side of the current one
)

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// NewSecret returns a fresh 160-bit secret in base32 (no padding), as authenticator apps take it.
func NewSecret() (string, error) {
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("totp secret: %w", err)
	}
	return b32.EncodeToString(b), nil
}

// Decode reads a base32 secret (case and spaces ignored, padding optional).
func Decode(secret string) ([]byte, error) {
	s := strings.ToUpper(strings.ReplaceAll(secret, " ", ""))
	s = strings.TrimRight(s, "=")
	return b32.DecodeString(s)
}

// Step is the time step t falls in.
func Step(t time.Time) int64 { return t.Unix() / int64(Period/time.Second) }

// HOTP is RFC 4226's value for counter with the given hash and number of digits.
func HOTP(newHash func() hash.Hash, key []byte, counter uint64, digits int) string {
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], counter)
	m := hmac.New(newHash, key)
	m.Write(msg[:])
	sum := m.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	bin := binary.BigEndian.Uint32(sum[off:off+4]) & 0x7fffffff
	mod := uint32(1)
	for range digits {
		mod *= 10
	}
	return fmt.Sprintf("%0*d", digits, bin%mod)
}

// Code is the six-digit SHA-1 code of key at step.
func Code(key []byte, step int64) string { return HOTP(sha1.New, key, uint64(step), Digits) }

// Match returns the step (within Skew of now's) whose code is code, and whether one is. Steps at or before
// after are not considered (already used). The comparison takes the same time whichever step matches.
func Match(key []byte, code string, now time.Time, after int64) (int64, bool) {
	code = strings.TrimSpace(code)
	if len(code) != Digits {
		return 0, false
	}
	cur := Step(now)
	var found int64
	ok := 0
	for s := cur - Skew; s <= cur+Skew; s++ {
		eq := subtle.ConstantTimeCompare([]byte(Code(key, s)), []byte(code))
		if eq == 1 && s > after && ok == 0 {
			found, ok = s, 1
		}
	}
	return found, ok == 1
}

// URL is the otpauth:// URL an authenticator app reads from a QR code (Key Uri Format).
func URL(issuer, account, secret string) string {
	label := url.PathEscape(issuer) + ":" + url.PathEscape(account)
	q := url.Values{}
	q.Set("secret", secret)
	q.Set("issuer", issuer)
	q.Set("algorithm", "SHA1")
	q.Set("digits", fmt.Sprint(Digits))
	q.Set("period", fmt.Sprint(int(Period/time.Second)))
	return "otpauth://totp/" + label + "?" + q.Encode()
}

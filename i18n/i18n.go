// Package i18n holds the server's message catalogs (en, zh-CN) and picks one from Accept-Language.
package i18n

import (
	"fmt"
	"strings"
)

// Lang is a supported language tag.
type Lang string

// Supported languages; English is the default.
const (
	EN   Lang = "en"
	ZhCN Lang = "zh-CN"
)

// Negotiate picks the best supported language from an Accept-Language header value.
func Negotiate(header string) Lang {
	best, bestQ := EN, -1.0
	for _, part := range strings.Split(header, ",") {
		tag, q := parseTag(part)
		if tag == "" {
			continue
		}
		var l Lang
		switch {
		case strings.HasPrefix(tag, "zh"):
			l = ZhCN
		case strings.HasPrefix(tag, "en"):
			l = EN
		default:
			continue
		}
		if q > bestQ {
			best, bestQ = l, q
		}
	}
	return best
}

func parseTag(part string) (string, float64) {
	fields := strings.Split(strings.TrimSpace(part), ";")
	tag := strings.ToLower(strings.TrimSpace(fields[0]))
	q := 1.0
	for _, f := range fields[1:] {
		f = strings.TrimSpace(f)
		if strings.HasPrefix(f, "q=") {
			if _, err := fmt.Sscanf(f[2:], "%g", &q); err != nil {
				q = 0
			}
		}
	}
	return tag, q
}

// T returns the message for code in lang, formatted with args. Unknown codes fall back to English, then to the code.
func T(lang Lang, code string, args ...any) string {
	msg, ok := catalog[lang][code]
	if !ok {
		msg, ok = catalog[EN][code]
	}
	if !ok {
		return code
	}
	if len(args) > 0 {
		return fmt.Sprintf(msg, args...)
	}
	return msg
}

// Has reports whether code has an English message (every code must).
func Has(code string) bool {
	_, ok := catalog[EN][code]
	return ok
}

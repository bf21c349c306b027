package redemption

import (
	"strings"
	"testing"
)

func TestCanonical_CleansPastesAndKeepsTheBodyCaseSensitive(t *testing.T) {
	code, err := newCode()
	if err != nil {
		t.Fatal(err)
	}
	body := code[len(Prefix):]
	if len(code) != len(Prefix)+bodyLen || !strings.HasPrefix(code, Prefix) {
		t.Fatalf("new code %q", code)
	}
	swapped := strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z':
			return r - 32
		case 'A' <= r && r <= 'Z':
			return r + 32
		}
		return r
	}, body)
	for _, c := range []struct {
		name, in, want string
	}{
		{"as issued", code, code},
		{"spaces and line breaks around", " \r\n\t" + code + "\n ", code},
		{"spaces and line breaks inside", "TG-" + body[:8] + " \n" + body[8:20] + "\r\n " + body[20:], code},
		{"no-break and zero-width spaces", "\u00a0" + code[:10] + "\u200b" + code[10:] + "\ufeff", code},
		{"lower-case prefix", "tg-" + body, code},
		{"mixed-case prefix", "tG-" + body, code},
		{"body only", body, code},
		{"body with a swapped case is another code", "TG-" + swapped, "TG-" + swapped},
		{"too short", code[:len(code)-1], ""},
		{"too long", code + "x", ""},
		{"not base62", "TG-" + body[:31] + "_", ""},
		{"another prefix", "XX-" + body, ""},
		{"non-ASCII", "TG-" + body[:30] + "é", ""},
	} {
		got, ok := canonical(c.in)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%s: canonical(%q) = %q, %v; want %q", c.name, c.in, got, ok, c.want)
		}
	}
	if h := hint(code); h != "TG-"+body[:4]+"…"+body[28:] || strings.Contains(h, body[4:28]) {
		t.Fatalf("hint(%q) = %q", code, h)
	}
}

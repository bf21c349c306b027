package middleware

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestCheckShape(t *testing.T) {
	for _, tc := range []struct {
		body string
		dup  string
		deep bool
		bad  bool
	}{
		{body: `{"username":"root","password":"x"}`},
		{body: `{"a":{"b":[1,{"c":2},{"c":3}]},"d":[[],{}],"e":null}`},
		{body: `[{"a":1},{"a":1}]`},
		{body: ``},
		{body: `{"a":1,"a":2}`, dup: "a"},
		{body: `{"ratio":"1","Ratio":"9"}`, dup: "Ratio"},
		{body: `{"a":{"x":1,"y":{"z":1,"z":2}}}`, dup: "z"},
		{body: `{"a\u0062":1,"ab":2}`, dup: "ab"},
		{body: strings.Repeat(`[`, 33) + strings.Repeat(`]`, 33), deep: true},
		{body: strings.Repeat(`[`, 32) + strings.Repeat(`]`, 32)},
		{body: `{"a":`, bad: true},
		{body: `{"a":1}}`, bad: true},
		{body: `{"a" 1}`, bad: true},
	} {
		err := checkShape([]byte(tc.body))
		se, _ := err.(*shapeError)
		switch {
		case tc.dup != "" && (se == nil || se.dup != tc.dup):
			t.Errorf("%s: %v, want duplicate %q", tc.body, err, tc.dup)
		case tc.deep && (se == nil || !se.depth):
			t.Errorf("%s: %v, want too deep", tc.body, err)
		case tc.bad && err != errNotJSON:
			t.Errorf("%s: %v, want not JSON", tc.body, err)
		case tc.dup == "" && !tc.deep && !tc.bad && err != nil:
			t.Errorf("%s: %v, want nil", tc.body, err)
		}
	}
}

// FuzzCheckShape: never panics, and whatever it accepts encoding/json accepts too.
func FuzzCheckShape(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `[1,{"b":[2]}]`, `{"a":{"a":1}}`, `"x"`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if checkShape(b) == nil && len(bytes.TrimSpace(b)) > 0 && !validJSON(b) {
			t.Fatalf("accepted invalid JSON %q", b)
		}
	})
}

func validJSON(b []byte) bool {
	var v any
	return json.Unmarshal(b, &v) == nil
}

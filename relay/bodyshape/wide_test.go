package bodyshape

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func wideObject(prefix string, keys int) string {
	var b strings.Builder
	b.WriteString(prefix)
	for i := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":0`, i)
	}
	b.WriteString("}")
	return b.String()
}

// Every top-level key is remembered to find twins, so millions of them cost seconds of CPU and hundreds of
// MB per request (2.5M keys in 31 MB: ~3 s and ~200 MB); no API has more than a few dozen.
func TestCheck_RefusesTooManyKeys(t *testing.T) {
	for _, c := range []struct {
		name, body string
		code       Code
	}{
		{"at the limit", wideObject(`{`, MaxKeys), ""},
		{"one over", wideObject(`{`, MaxKeys+1), TooManyKeys},
		{"stream_options one over", `{"stream_options":` + wideObject(`{`, MaxKeys+1) + `}`, TooManyKeys},
		{"nested objects are not remembered", `{"metadata":` + wideObject(`{`, 10*MaxKeys) + `}`, ""},
	} {
		if got, _ := codeOf(Check([]byte(c.body))); got != c.code {
			t.Errorf("%s: code %q, want %q", c.name, got, c.code)
		}
	}
	body := []byte(wideObject(`{"model":"m",`, 2_500_000))
	start := time.Now()
	if got, _ := codeOf(Check(body)); got != TooManyKeys {
		t.Fatalf("2.5M keys: code %q, want %q", got, TooManyKeys)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Fatalf("2.5M keys took %v to refuse", d)
	}
}

// best_of multiplies what a completions upstream bills, so the gateway reads it: a case variant is refused.
func TestCheck_BestOfVariantIsRefused(t *testing.T) {
	if got, key := codeOf(Check([]byte(`{"model":"m","best_of":1,"Best_Of":20}`))); got != DuplicateKey || key != "Best_Of" {
		t.Fatalf("code %q key %q, want duplicate_key Best_Of", got, key)
	}
}

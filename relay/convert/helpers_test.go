package convert

import (
	"encoding/json"
	"reflect"
	"testing"
)

// jsonEqual says whether two JSON texts hold the same value (key order and spacing aside); the codecs' table
// tests compare built bodies with it.
func jsonEqual(t testing.TB, got, want []byte) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("want is not JSON: %v\n%s", err, want)
	}
	return reflect.DeepEqual(g, w)
}

// decodeAll feeds upstream events (data only, no event names) to d, then finishes it (ended or cut), and
// renders every canonical event with str.
func decodeAll(t testing.TB, d Decoder, chunks []string, ended bool, str func(Event) string) []string {
	t.Helper()
	var out []string
	for _, c := range chunks {
		evs, err := d.Decode("", []byte(c))
		if err != nil {
			t.Fatalf("Decode(%s): %v", c, err)
		}
		for _, ev := range evs {
			out = append(out, str(ev))
		}
	}
	for _, ev := range d.Finish(ended) {
		out = append(out, str(ev))
	}
	return out
}

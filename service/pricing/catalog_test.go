package pricing

import (
	"strings"
	"testing"

	"tollgate/service/apperr"
)

// new-api's ratio format: ratio 1 = 2 USD per 1M input, output = input × completion ratio, cache = input × its
// ratio, a model price is per call; maps may arrive as JSON strings (its option table). Exact decimals.
func TestParseCatalog_NewAPIRatios(t *testing.T) {
	body := `{"model_ratio": {"gpt-4o": 1.25, "claude-3-5-sonnet": 1.5, "tiny": 0.075},
	  "completion_ratio": "{\"gpt-4o\": 4, \"claude-3-5-sonnet\": 5}",
	  "cache_ratio": {"gpt-4o": 0.5}, "create_cache_ratio": {"claude-3-5-sonnet": 1.25},
	  "model_price": {"dall-e-3": 0.04}}`
	rows, format, err := ParseCatalog([]byte(body))
	if err != nil || format != "new-api" || len(rows) != 4 {
		t.Fatalf("rows %+v format %q err %v", rows, format, err)
	}
	want := map[string][5]string{
		"gpt-4o":            {"2.5", "10", "1.25", "0", "0"},
		"claude-3-5-sonnet": {"3", "15", "0", "3.75", "0"},
		"tiny":              {"0.15", "0.15", "0", "0", "0"},
		"dall-e-3":          {"0", "0", "0", "0", "0.04"},
	}
	for _, r := range rows {
		w := want[r.Model]
		if got := [5]string{r.Input, r.Output, r.CacheRead, r.CacheWrite, r.PerCall}; got != w {
			t.Errorf("%s = %v, want %v", r.Model, got, w)
		}
	}
	if _, _, err := ParseCatalog([]byte(`{"ModelRatio": {"m": 1}}`)); err != nil {
		t.Fatalf("option names: %v", err)
	}
}

// Our own format reads as a list or {"prices": [...]}; what is neither is refused naming the field.
func TestParseCatalog_OursAndRefusals(t *testing.T) {
	for _, b := range []string{`[{"model":"m","input":"1","output":"2"}]`, `{"prices":[{"model":"m","input":"1"}]}`} {
		if rows, format, err := ParseCatalog([]byte(b)); err != nil || format != "tollgate" || len(rows) != 1 {
			t.Fatalf("%s: %+v %q %v", b, rows, format, err)
		}
	}
	for _, tc := range []struct{ body, want string }{
		{`{"model_ratio": {"m": -1}}`, "model_ratio"},
		{`{"model_ratio": {"m": "x"}}`, "model_ratio"},
		{`{"model_ratio": [1]}`, "model_ratio"},
		{`{"model_ratio": {"m": 1e400}}`, "model_ratio"},
		{`{"completion_ratio": {"m": 1}}`, "catalog"},
		{`{"other": 1}`, "catalog"},
		{`[{"model": 1}]`, "catalog"},
		{`not json`, "invalid_json"},
	} {
		_, _, err := ParseCatalog([]byte(tc.body))
		if err == nil || !strings.Contains(errText(err), tc.want) {
			t.Errorf("%s: %v, want an error naming %s", tc.body, err, tc.want)
		}
	}
}

func errText(err error) string {
	if e, ok := apperr.As(err); ok {
		return e.Code + " " + e.Field
	}
	return err.Error()
}

// FuzzParseCatalog: never panics; whatever it accepts, Validate either accepts or refuses with an error.
func FuzzParseCatalog(f *testing.F) {
	for _, s := range []string{`{"model_ratio":{"a":1},"completion_ratio":{"a":2}}`, `[{"model":"a","input":"1"}]`,
		`{"model_price":"{\"x\":0.1}"}`, `{"prices":[]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, _, err := ParseCatalog(b)
		if err == nil {
			_ = Validate(rows)
		}
	})
}

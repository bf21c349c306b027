package relay

import (
	"testing"

	"github.com/tidwall/gjson"

	"tollgate/relay/bodyshape"
)

var topFieldPaths = []string{"model", "stream", "stream_options.include_usage", "max_tokens", "max_completion_tokens",
	"max_output_tokens", "n", "best_of"}

// topFields (one pass) reads what a look-up per path reads, for every body bodyshape lets through.
func FuzzTopFields(f *testing.F) {
	for _, s := range []string{
		`{"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},"max_tokens":50,"n":2}`,
		`{"messages":[{"role":"user","content":"model n stream"}],"model":"m","best_of":3,"max_output_tokens":null}`,
		`{"mod\u0065l":"x","stream_options":{"include_usage":"yes"},"max_completion_tokens":1e3}`,
		`{"stream_options":[1,2],"n":-1,"model":{"a":1}}`,
		`{}`, `[]`, `"model"`, `{"model":"a"} trailing`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if bodyshape.Check(body) != nil {
			return // readFields never sees it
		}
		got := topFields(body)
		want := gjson.GetManyBytes(body, topFieldPaths...)
		for i, p := range topFieldPaths {
			if got[i].Raw != want[i].Raw || got[i].Type != want[i].Type {
				t.Fatalf("%s in %q: one pass read %q (%v), look-up %q (%v)", p, body, got[i].Raw, got[i].Type, want[i].Raw, want[i].Type)
			}
		}
	})
}

package relay

import (
	"net/http"
	"strconv"

	"github.com/tidwall/gjson"
)

// MaxOutputTokens bounds max_tokens and its siblings: more than any model generates, small enough that
// the hold (tokens × price) cannot overflow.
const MaxOutputTokens = 10_000_000

// MaxChoices bounds n on chat and legacy completions, as OpenAI does: each choice is up to max_tokens long and
// billed, so the hold is n times the output.
const MaxChoices = 128

// MaxBestOf bounds best_of on legacy completions, as OpenAI does: the upstream generates and bills best_of
// candidates and returns n of them.
const MaxBestOf = 20

// fields are the body fields the gateway itself reads. bodyshape has already refused twins and case
// variants of them, so what gjson reads here is what the upstream reads.
type fields struct {
	model        string
	stream       bool
	includeUsage bool
	maxOut       int64 // the largest of max_tokens, max_completion_tokens, max_output_tokens; 0 when none
	choices      int64 // outputs the upstream generates: n on chat, max(n, best_of) on legacy completions; else 1
}

// readFields reads and range-checks the fields; a wrong type or range is a 400 naming the field. withN says
// whether the endpoint takes n (chat and legacy completions), withBestOf whether it takes best_of (legacy
// completions); elsewhere those are the upstream's business.
func readFields(body []byte, withN, withBestOf bool) (fields, *relayError) {
	f := fields{choices: 1}
	r := gjson.GetManyBytes(body, "model", "stream", "stream_options.include_usage", "max_tokens", "max_completion_tokens", "max_output_tokens", "n", "best_of")
	if r[0].Exists() && r[0].Type != gjson.String {
		return f, newErr(http.StatusBadRequest, "validation_failed", "model", "must be a string")
	}
	if r[0].String() == "" {
		return f, newErr(http.StatusBadRequest, "model_required")
	}
	f.model = r[0].String()
	for i, name := range [...]string{"stream", "stream_options.include_usage"} {
		v := r[1+i]
		if v.Exists() && v.Type != gjson.True && v.Type != gjson.False && v.Type != gjson.Null {
			return f, newErr(http.StatusBadRequest, "validation_failed", name, "must be a boolean")
		}
	}
	f.stream, f.includeUsage = r[1].Type == gjson.True, r[2].Type == gjson.True
	for i, name := range [...]string{"max_tokens", "max_completion_tokens", "max_output_tokens"} {
		v := r[3+i]
		if !v.Exists() || v.Type == gjson.Null {
			continue
		}
		n, err := strconv.ParseInt(v.Raw, 10, 64)
		if v.Type != gjson.Number || err != nil || n < 1 || n > MaxOutputTokens {
			return f, newErr(http.StatusBadRequest, "validation_failed", name, "must be an integer from 1 to 10000000")
		}
		f.maxOut = max(f.maxOut, n)
	}
	if v := r[6]; withN && v.Exists() && v.Type != gjson.Null {
		n, err := strconv.ParseInt(v.Raw, 10, 64)
		if v.Type != gjson.Number || err != nil || n < 1 || n > MaxChoices {
			return f, newErr(http.StatusBadRequest, "validation_failed", "n", "must be an integer from 1 to 128")
		}
		f.choices = n
	}
	if v := r[7]; withBestOf && v.Exists() && v.Type != gjson.Null {
		n, err := strconv.ParseInt(v.Raw, 10, 64)
		if v.Type != gjson.Number || err != nil || n < 0 || n > MaxBestOf {
			return f, newErr(http.StatusBadRequest, "validation_failed", "best_of", "must be an integer from 0 to 20")
		}
		f.choices = max(f.choices, n)
	}
	return f, nil
}

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

// fields are the body fields the gateway itself reads. bodyshape has already refused twins and case
// variants of them, so what gjson reads here is what the upstream reads.
type fields struct {
	model        string
	stream       bool
	includeUsage bool
	maxOut       int64 // the largest of max_tokens, max_completion_tokens, max_output_tokens; 0 when none
	choices      int64 // n on chat and legacy completions (1 when absent); 1 elsewhere
}

// readFields reads and range-checks the fields; a wrong type or range is a 400 naming the field. withN says
// whether the endpoint takes n (chat and legacy completions); elsewhere n is the upstream's business.
func readFields(body []byte, withN bool) (fields, *relayError) {
	f := fields{choices: 1}
	r := gjson.GetManyBytes(body, "model", "stream", "stream_options.include_usage", "max_tokens", "max_completion_tokens", "max_output_tokens", "n")
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
	return f, nil
}

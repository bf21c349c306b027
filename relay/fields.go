package relay

import (
	"fmt"
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
	r := topFields(body)
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
		n, rerr := intField(r[3+i], name, 1, MaxOutputTokens)
		if rerr != nil {
			return f, rerr
		}
		f.maxOut = max(f.maxOut, n)
	}
	if withN {
		n, rerr := intField(r[6], "n", 1, MaxChoices)
		if rerr != nil {
			return f, rerr
		}
		f.choices = max(f.choices, n)
	}
	if withBestOf {
		n, rerr := intField(r[7], "best_of", 0, MaxBestOf)
		if rerr != nil {
			return f, rerr
		}
		f.choices = max(f.choices, n)
	}
	return f, nil
}

// topFields reads, in one pass over the body's top-level members, the fields readFields needs: model,
// stream, stream_options.include_usage, max_tokens, max_completion_tokens, max_output_tokens, n, best_of.
// (A look-up per field would scan the whole body once for every field it lacks; bodyshape has refused
// duplicate keys, so the one member of each name is the one the upstream reads.)
func topFields(body []byte) [8]gjson.Result {
	var r [8]gjson.Result
	gjson.ParseBytes(body).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "model":
			r[0] = v
		case "stream":
			r[1] = v
		case "stream_options":
			r[2] = v.Get("include_usage")
		case "max_tokens":
			r[3] = v
		case "max_completion_tokens":
			r[4] = v
		case "max_output_tokens":
			r[5] = v
		case "n":
			r[6] = v
		case "best_of":
			r[7] = v
		}
		return true
	})
	return r
}

// intField reads an optional integer field in lo … hi: 0 when absent or null, a 400 naming the field when it
// is not an integer in range.
func intField(v gjson.Result, name string, lo, hi int64) (int64, *relayError) {
	if !v.Exists() || v.Type == gjson.Null {
		return 0, nil
	}
	n, err := strconv.ParseInt(v.Raw, 10, 64)
	if v.Type != gjson.Number || err != nil || n < lo || n > hi {
		return 0, newErr(http.StatusBadRequest, "validation_failed", name, fmt.Sprintf("must be an integer from %d to %d", lo, hi))
	}
	return n, nil
}

// readGeminiFields reads a Gemini body's fields: the model and stream-ness come from the path;
// generationConfig.maxOutputTokens and candidateCount size the hold.
func readGeminiFields(body []byte, model string, stream bool) (fields, *relayError) {
	f := fields{model: model, stream: stream, choices: 1}
	// Gemini takes every field in camelCase and snake_case alike (bodyshape refuses a body with both).
	r := gjson.GetManyBytes(body, "generationConfig.maxOutputTokens", "generationConfig.candidateCount",
		"generation_config.max_output_tokens", "generation_config.candidate_count",
		"generationConfig.max_output_tokens", "generationConfig.candidate_count",
		"generation_config.maxOutputTokens", "generation_config.candidateCount")
	for i := 2; i < len(r); i += 2 {
		if !r[0].Exists() {
			r[0] = r[i]
		}
		if !r[1].Exists() {
			r[1] = r[i+1]
		}
	}
	n, rerr := intField(r[0], "generationConfig.maxOutputTokens", 1, MaxOutputTokens)
	if rerr != nil {
		return f, rerr
	}
	f.maxOut = n
	if n, rerr = intField(r[1], "generationConfig.candidateCount", 1, MaxChoices); rerr != nil {
		return f, rerr
	}
	f.choices = max(f.choices, n)
	return f, nil
}

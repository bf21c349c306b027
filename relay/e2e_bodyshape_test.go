package relay_test

// Body shape: a body that a recursive reader would choke on, or that the gateway and an upstream could read
// differently (twin keys, escaped or case-variant spellings, out-of-range numbers), is refused with a 400 in
// the caller's protocol before any upstream call, hold or log row; and the node keeps serving.

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func TestBodyShape_DeepBodyIsRefusedAndTheNodeKeepsServing(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000)
	bob := s.world.user("bob", 0) // brand new, zero balance: the free endpoint was enough to kill the node
	bobKey := s.world.key(bob, nil)
	brackets := bytes.Repeat([]byte("["), 10_000_000)
	objects := append(bytes.Repeat([]byte(`{"":`), 8_000_000), '1')
	inModel := append([]byte(`{"model":"claude-sonnet-4-5","messages":`), brackets...)
	for _, c := range []struct {
		name string
		body []byte
		code string // OpenAI error code
	}{{"10M [", brackets, "invalid_json"}, {`8M {"":`, objects, "body_too_deep"}, {"10M [ inside an object", inModel, "body_too_deep"}} {
		a := s.call("POST", "/v1/chat/completions", bobKey.Key, c.body)
		if msg := openAIErr(t, a, http.StatusBadRequest, c.code); c.code == "body_too_deep" && !strings.Contains(msg, "128") {
			t.Fatalf("%s: message %q does not name the limit", c.name, msg)
		}
		anthropicErr(t, s.call("POST", "/v1/messages/count_tokens", bobKey.Key, c.body), http.StatusBadRequest, "invalid_request_error")
	}
	// Still serving: the free endpoint for bob, a billed call for alice.
	if a := s.call("POST", "/v1/messages/count_tokens", bobKey.Key, messagesBody("claude-sonnet-4-5", false)); a.status != http.StatusOK {
		t.Fatalf("count_tokens after deep bodies: %d %s", a.status, a.body)
	}
	if a := s.call("POST", "/v1/chat/completions", s.key.Key, chatBody("gpt-4o-mini", false)); a.status != http.StatusOK {
		t.Fatalf("chat after deep bodies: %d %s", a.status, a.body)
	}
	if n := s.an.Count(); n != 1 {
		t.Fatalf("anthropic upstream saw %d calls, want only the good count_tokens", n)
	}
	if b := s.liveBalance(bob.id); b != 0 || len(s.logs("user_id = ?", bob.id)) != 1 {
		t.Fatalf("bob: balance %d, %d logs (want 0 and the one count_tokens)", b, len(s.logs("user_id = ?", bob.id)))
	}
}

func TestBodyShape_TwinKeysAndOutOfRangeNumbersAreRefusedBeforeAnyUpstream(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000)
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	oa := func(fields string) string { return `{` + fields + `,` + msgs + `}` }
	an := func(fields string) string { return `{"max_tokens":50,` + msgs + `,` + fields + `}` }
	dup := refusal{http.StatusBadRequest, "duplicate_key", "invalid_request_error"}
	bad := refusal{http.StatusBadRequest, "validation_failed", "invalid_request_error"}
	cases := []struct {
		badCase
		names string // the key the message must name
	}{
		{badCase{name: "model twice, cheap then expensive", oaBody: oa(`"model":"gpt-4o-mini","model":"gpt-4o"`),
			anBody: `{"model":"claude-sonnet-4-5","model":"claude-opus-4-1","max_tokens":50,` + msgs + `}`, want: dup}, "model"},
		{badCase{name: "max_tokens twice", oaBody: oa(`"model":"gpt-4o-mini","max_tokens":5,"max_tokens":1000000`),
			anBody: `{"model":"claude-sonnet-4-5","max_tokens":5,"max_tokens":1000000,` + msgs + `}`, want: dup}, "max_tokens"},
		{badCase{name: "escaped model twin", oaBody: oa(`"model":"gpt-4o-mini","mod\u0065l":"gpt-4o"`),
			anBody: an(`"model":"claude-sonnet-4-5","mod\u0065l":"claude-opus-4-1"`), want: dup}, "model"},
		{badCase{name: "case variant Model", oaBody: oa(`"model":"gpt-4o-mini","Model":"gpt-4o"`),
			anBody: an(`"model":"claude-sonnet-4-5","Model":"claude-opus-4-1"`), want: dup}, "Model"},
		{badCase{name: "stream false then true", oaBody: oa(`"model":"gpt-4o-mini","stream":false,"stream":true`),
			anBody: an(`"model":"claude-sonnet-4-5","stream":false,"stream":true`), want: dup}, "stream"},
		{badCase{name: "include_usage twice", oaBody: oa(`"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":false,"include_usage":true}`),
			anBody: an(`"model":"claude-sonnet-4-5","stream_options":{"include_usage":true,"include_usage":false}`), want: dup}, "stream_options.include_usage"},
		{badCase{name: "max_tokens 2^62", oaBody: oa(`"model":"gpt-4o-mini","max_tokens":4611686018427387904`),
			anBody: `{"model":"claude-sonnet-4-5","max_tokens":4611686018427387904,` + msgs + `}`, want: bad}, "max_tokens"},
		{badCase{name: "max_tokens 2^63-1", oaBody: oa(`"model":"gpt-4o-mini","max_tokens":9223372036854775807`),
			anBody: `{"model":"claude-sonnet-4-5","max_tokens":9223372036854775807,` + msgs + `}`, want: bad}, "max_tokens"},
		{badCase{name: "max_completion_tokens zero", oaBody: oa(`"model":"gpt-4o-mini","max_completion_tokens":0`),
			anBody: `{"model":"claude-sonnet-4-5","max_tokens":-1,` + msgs + `}`, want: bad}, "max_"},
		{badCase{name: "max_output_tokens fractional", oaBody: oa(`"model":"gpt-4o-mini","max_output_tokens":10.5`),
			anBody: `{"model":"claude-sonnet-4-5","max_tokens":"50",` + msgs + `}`, want: bad}, "max_"},
		{badCase{name: "stream not a boolean", oaBody: oa(`"model":"gpt-4o-mini","stream":"true"`),
			anBody: an(`"model":"claude-sonnet-4-5","stream":1`), want: bad}, "stream"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s.expectRefused(t, c.badCase)
			a := s.call("POST", "/v1/chat/completions", s.key.Key, c.oaBody)
			if msg := openAIErr(t, a, http.StatusBadRequest, c.want.openaiCode); !strings.Contains(msg, c.names) {
				t.Fatalf("message %q does not name %q", msg, c.names)
			}
		})
	}
	// The books did not move and nothing was logged for alice.
	if rows := s.logs("user_id = ?", s.alice.id); len(rows) != 0 {
		t.Fatalf("%d usage rows for refused bodies", len(rows))
	}
	s.flush()
	if u := s.sqlUser(s.alice.id); u.Quota != 1_000_000 || u.UsedQuota != 0 {
		t.Fatalf("SQL quota %d used %d after refused bodies", u.Quota, u.UsedQuota)
	}
}

// With cross-protocol routing off, a model served only in the other protocol is a 404 naming where it is
// served (with it on, the relay translates: e2e_convert_test.go).
func TestBodyShape_ModelOnlyOnTheOtherProtocolIs404NotRetryable503(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000)
	if r := s.root.Do("PUT", "/api/admin/settings", map[string]any{"cross_protocol": false}); r.Status != http.StatusOK {
		t.Fatalf("settings: %d %s", r.Status, r.Body)
	}
	msg := openAIErr(t, s.call("POST", "/v1/chat/completions", s.key.Key, chatBody("claude-sonnet-4-5", false)), http.StatusNotFound, "model_wrong_endpoint")
	if !strings.Contains(msg, "/v1/messages") {
		t.Fatalf("message %q does not name the endpoint that serves the model", msg)
	}
	msg = anthropicErr(t, s.call("POST", "/v1/messages", s.key.Key, messagesBody("gpt-4o-mini", false)), http.StatusNotFound, "not_found_error")
	if !strings.Contains(msg, "/v1/chat/completions") {
		t.Fatalf("message %q does not name the endpoint that serves the model", msg)
	}
	openAIErr(t, s.call("POST", "/v1/responses", s.key.Key, map[string]any{"model": "claude-sonnet-4-5", "input": "hi"}), http.StatusNotFound, "model_wrong_endpoint")
	// Every channel of the right protocol disabled right now: still 503, worth retrying later.
	if r := s.root.Do("PATCH", fmt.Sprintf("/api/admin/channels/%d", s.anID), map[string]any{"status": "disabled"}); r.Status != http.StatusOK {
		t.Fatalf("disable: %d %s", r.Status, r.Body)
	}
	waitFor(t, "the disabled channel to leave the routes", func() bool {
		return s.call("POST", "/v1/messages", s.key.Key, messagesBody("claude-sonnet-4-5", false)).status == http.StatusServiceUnavailable
	})
	anthropicErr(t, s.call("POST", "/v1/messages", s.key.Key, messagesBody("claude-sonnet-4-5", false)), http.StatusServiceUnavailable, "overloaded_error")
	openAIErr(t, s.call("POST", "/v1/chat/completions", s.key.Key, chatBody("claude-sonnet-4-5", false)), http.StatusNotFound, "model_wrong_endpoint")
	if n := s.oa.Count() + s.an.Count(); n != 0 {
		t.Fatalf("%d upstream calls for unserved models", n)
	}
}

// fuzzEndpoint is one relay endpoint with a well-formed body to mutate.
type fuzzEndpoint struct {
	path  string
	model string
	body  string
}

var fuzzEndpoints = []fuzzEndpoint{
	{"/v1/chat/completions", "gpt-4o-mini", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi there"}],"max_tokens":20,"stream":false,"stream_options":{"include_usage":true},"user":"u1"}`},
	{"/v1/completions", "gpt-4o-mini", `{"model":"gpt-4o-mini","prompt":["say hi"],"max_tokens":20,"n":1}`},
	{"/v1/embeddings", "text-embedding-3-small", `{"model":"text-embedding-3-small","input":["a","b"]}`},
	{"/v1/responses", "gpt-4o-mini", `{"model":"gpt-4o-mini","input":[{"role":"user","content":"hi"}],"max_output_tokens":20,"instructions":"be brief"}`},
	{"/v1/messages", "claude-sonnet-4-5", `{"model":"claude-sonnet-4-5","max_tokens":20,"system":"be brief","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"metadata":{"user_id":"u"}}`},
	{"/v1/messages/count_tokens", "claude-sonnet-4-5", `{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}],"tools":[{"name":"t","input_schema":{"type":"object"}}]}`},
}

// mutate derives one hostile body from a good one, deterministically from rnd.
func mutate(rnd *rand.Rand, good string) []byte {
	b := []byte(good)
	if len(b) < 2 {
		return append(b, '{')
	}
	insert := func(at int, s string) []byte {
		at = min(max(at, 0), len(b))
		return append(b[:at:at], append([]byte(s), b[at:]...)...)
	}
	afterBrace := 1 // just inside the top-level object
	switch rnd.IntN(10) {
	case 0: // truncation
		return b[:rnd.IntN(len(b))]
	case 1: // byte flips
		for range 1 + rnd.IntN(4) {
			b[rnd.IntN(len(b))] ^= byte(1 + rnd.IntN(255))
		}
		return b
	case 2: // deep nesting as a new member's value
		n := []int{127, 128, 129, 1000, 100_000}[rnd.IntN(5)]
		open, close := "[", "]"
		if rnd.IntN(2) == 0 {
			open, close = `{"a":`, "}"
		}
		return insert(afterBrace, `"deep":`+strings.Repeat(open, n)+"1"+strings.Repeat(close, n)+",")
	case 3: // huge, negative, fractional numbers for the fields the gateway reads
		field := []string{"max_tokens", "max_completion_tokens", "max_output_tokens", "n"}[rnd.IntN(4)]
		v := []string{"4611686018427387904", "9223372036854775807", "9223372036854775808", "-1", "0", "1e400", "1.5", "-9223372036854775808", "10000001", "10000000", "1"}[rnd.IntN(11)]
		return insert(afterBrace, strconv.Quote(field)+":"+v+",")
	case 4: // duplicate keys, plain, escaped and in another case
		k := []string{`"model"`, `"mod\u0065l"`, `"MODEL"`, `"stream"`, `"max_tokens"`, `"Max_Tokens"`, `"temperature"`}[rnd.IntN(7)]
		return insert(len(b)-1, ","+k+`:"gpt-4o"`+","+k+":true")
	case 5: // wrong types
		field := []string{"model", "stream", "messages", "input", "max_tokens", "stream_options", "prompt", "system", "tools"}[rnd.IntN(9)]
		v := []string{`5`, `"yes"`, `null`, `[]`, `{}`, `[1,[2,[3]]]`, `"` + strings.Repeat("x", 1000) + `"`, `true`}[rnd.IntN(8)]
		return insert(len(b)-1, ","+strconv.Quote(field)+":"+v)
	case 6: // invalid UTF-8 inside a string, or a raw control byte
		at := strings.Index(good, `"model":"`) + len(`"model":"`)
		return insert(at, []string{"\xff\xfe", "\xc3", "\xed\xa0\x80", "\x00", "\\ud800", "\\u"}[rnd.IntN(6)])
	case 7: // garbage around a valid body
		return []byte([]string{" ", "[", "null", "{}", "\xef\xbb\xbf"}[rnd.IntN(5)] + good + []string{"", "}", " {}", ","}[rnd.IntN(4)])
	case 8: // stream on, with and without include_usage
		return insert(afterBrace, `"stream":true,`)
	}
	// two mutations at once
	return mutate(rnd, string(mutate(rnd, good)))
}

func TestBodyShape_FuzzedBodiesGetNoServerError(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000_000)
	const perEndpoint = 1000
	var wg sync.WaitGroup
	errs := make(chan string, 2*len(fuzzEndpoints))
	for i, ep := range fuzzEndpoints {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(8, uint64(i)))
			ok, refused := 0, 0
			defer func() {
				// Not toothless: the mutations both reach the upstream and get refused.
				if ok < perEndpoint/20 || refused < perEndpoint/4 {
					errs <- fmt.Sprintf("%s: %d answered, %d refused of %d: the mutations miss", ep.path, ok, refused, perEndpoint)
				}
			}()
			for n := range perEndpoint {
				body := mutate(rnd, ep.body)
				a, err := s.tryCall(t.Context(), "POST", ep.path, s.key.Key, body)
				if err != nil {
					errs <- fmt.Sprintf("%s #%d: %v", ep.path, n, err)
					return
				}
				if a.status >= 500 {
					errs <- fmt.Sprintf("%s #%d: %d %s for body %.300q", ep.path, n, a.status, a.body, body)
					return
				}
				if a.status == http.StatusOK {
					ok++
				} else {
					refused++
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	// Every request that was not refused is settled: balance + Σ logged cost is where it started, so no hold
	// is left behind.
	waitFor(t, "every hold to settle", func() bool {
		var spent int64
		for _, l := range s.logs("user_id = ?", s.alice.id) {
			spent += l.Cost
		}
		return s.liveBalance(s.alice.id)+spent == 1_000_000_000
	})
}

package bodyshape

import (
	"encoding/binary"

	"encoding/json"
	"errors"
	"fmt"
	"github.com/tidwall/gjson"
	"strings"
	"testing"
)

func codeOf(err error) (Code, string) {
	var e *Error
	if errors.As(err, &e) {
		return e.Code, e.Key
	}
	return "", ""
}

func TestCheck_Table(t *testing.T) {
	deep := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
	}
	cases := []struct {
		name, body string
		code       Code
		key        string
	}{
		{"plain chat", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi \"there\" \u00e9"}],"max_tokens":5}`, "", ""},
		{"whitespace around", " \n{ \"model\" : \"m\" , \"n\" : 1 }\t\r\n", "", ""},
		{"empty object", `{}`, "", ""},
		{"empty containers", `{"a":{},"b":[],"c":[{}],"d":[[],[]]}`, "", ""},
		{"numbers", `{"a":[0,-0,1.5,-2e10,3E+2,4e-3,123456789012345678901234567890]}`, "", ""},
		{"not an object", `["model"]`, InvalidJSON, ""},
		{"string root", `"x"`, InvalidJSON, ""},
		{"empty", ``, InvalidJSON, ""},
		{"two values", `{}{}`, InvalidJSON, ""},
		{"trailing comma", `{"a":1,}`, InvalidJSON, ""},
		{"truncated", `{"model":"gpt`, InvalidJSON, ""},
		{"truncated after eight plain bytes", `{"model":"gpt-4o-mini`, InvalidJSON, ""},
		{"truncated in a long string", `{"a":"` + strings.Repeat("x", 64), InvalidJSON, ""},
		{"unclosed", `{"a":[1,2`, InvalidJSON, ""},
		{"mismatched", `{"a":[1}`, InvalidJSON, ""},
		{"bad literal", `{"a":tru}`, InvalidJSON, ""},
		{"bad number", `{"a":01}`, InvalidJSON, ""},
		{"bad fraction", `{"a":1.}`, InvalidJSON, ""},
		{"bad exponent", `{"a":1e}`, InvalidJSON, ""},
		{"bare key", `{a:1}`, InvalidJSON, ""},
		{"control char", "{\"a\":\"x\x01\"}", InvalidJSON, ""},
		{"bad escape", `{"a":"\x"}`, InvalidJSON, ""},
		{"short unicode escape", `{"a":"\u12"}`, InvalidJSON, ""},
		{"128 deep", `{"a":` + deep("[", "]", 127) + `}`, "", ""},
		{"129 deep", `{"a":` + deep("[", "]", 128) + `}`, TooDeep, ""},
		{"129 deep objects", strings.Repeat(`{"a":`, 129) + "1" + strings.Repeat("}", 129), TooDeep, ""},
		{"10M brackets", strings.Repeat("[", 10_000_000), InvalidJSON, ""},
		{"10M brackets in object", `{"a":` + strings.Repeat("[", 10_000_000), TooDeep, ""},
		{"duplicate model", `{"model":"gpt-4o-mini","model":"o1-pro"}`, DuplicateKey, "model"},
		{"duplicate any key", `{"temperature":1,"temperature":2}`, DuplicateKey, "temperature"},
		{"escaped duplicate", `{"model":"a","mod\u0065l":"b"}`, DuplicateKey, "model"},
		{"escaped slash duplicate", `{"a/b":1,"a\/b":2}`, DuplicateKey, "a/b"},
		{"surrogate pair duplicate", `{"😀":1,"\ud83d\ude00":2}`, DuplicateKey, "😀"},
		{"lone surrogates collide", `{"\ud800":1,"\udfff":2}`, DuplicateKey, "\uFFFD"},
		{"invalid utf-8 collide", "{\"a\xff\":1,\"a\xfe\":2}", DuplicateKey, "a\uFFFD"},
		{"case variant alone", `{"Model":"o1-pro"}`, DuplicateKey, "Model"},
		{"case variant after", `{"max_tokens":5,"MAX_TOKENS":100000}`, DuplicateKey, "MAX_TOKENS"},
		{"kelvin sign variant", "{\"max_to\u212aens\":5}", DuplicateKey, "max_to\u212aens"},
		{"long s variant", "{\"\u017ftream\":true}", DuplicateKey, "\u017ftream"},
		{"case variant of unread key is fine", `{"Temperature":1,"temperature":2}`, "", ""},
		{"nested duplicates are fine", `{"messages":[{"a":1,"a":2}],"metadata":{"x":1,"x":2}}`, "", ""},
		{"stream duplicate", `{"stream":false,"stream":true}`, DuplicateKey, "stream"},
		{"stream_options duplicate", `{"stream_options":{"include_usage":false,"include_usage":true}}`, DuplicateKey, "stream_options.include_usage"},
		{"stream_options variant", `{"stream_options":{"Include_Usage":true}}`, DuplicateKey, "stream_options.Include_Usage"},
		// Gemini's generationConfig: the output cap and candidate count the gateway holds for, in either spelling.
		{"generationConfig duplicate", `{"generationConfig":{"maxOutputTokens":1,"maxOutputTokens":1000000}}`, DuplicateKey, "generationConfig.maxOutputTokens"},
		{"generationConfig two spellings", `{"generationConfig":{"maxOutputTokens":1,"max_output_tokens":1000000}}`, DuplicateKey, "generationConfig.max_output_tokens"},
		{"generation_config beside generationConfig", `{"generationConfig":{},"generation_config":{"candidateCount":8}}`, DuplicateKey, "generation_config"},
		{"generationConfig distinct fields are fine", `{"generationConfig":{"maxOutputTokens":1,"temperature":0,"thinkingConfig":{"a":1,"a":2}},"contents":[{"x":1,"x":2}]}`, "", ""},
		{"stream_options nested deeper is fine", `{"stream_options":{"x":{"include_usage":1,"include_usage":2}},"m":{"include_usage":1,"include_usage":2}}`, "", ""},
		{"many keys", "{" + manyKeys(1000, false) + "}", "", ""},
		{"many keys with a twin", "{" + manyKeys(1000, true) + "}", DuplicateKey, "k0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, key := codeOf(Check([]byte(c.body)))
			if code != c.code || key != c.key {
				t.Fatalf("Check = %q %q, want %q %q", code, key, c.code, c.key)
			}
		})
	}
}

func manyKeys(n int, twin bool) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	if twin {
		b.WriteString(`"k0":1`)
	} else {
		b.WriteString(`"last":1`)
	}
	return b.String()
}

// TestCheck_AgreesWithEncodingJSON: whatever Check accepts, encoding/json accepts as an object, and every
// valid object that is shallow enough and free of twins is accepted.
func TestCheck_AgreesWithEncodingJSON(t *testing.T) {
	for _, body := range []string{`{"a":"\u0000"}`, `{"a":[1,{"b":null}],"c":true,"d":false}`, `{"x":-0.0e+0}`} {
		if err := Check([]byte(body)); err != nil {
			t.Fatalf("Check(%s) = %v", body, err)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatalf("encoding/json refuses %s: %v", body, err)
		}
	}
}

// chatBody is a realistic chat request of about size bytes: a system prompt, turns of prose with escapes
// and non-ASCII, a tool definition.
func chatBody(size int) []byte {
	var b strings.Builder
	b.WriteString(`{"model":"gpt-4o-mini","stream":true,"max_tokens":1024,"temperature":0.7,`)
	b.WriteString(`"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}],`)
	b.WriteString(`"messages":[{"role":"system","content":"You are a helpful assistant. Answer briefly."}`)
	turn := `,{"role":"user","content":"Please summarise the following paragraph:\n\"The quick brown fox jumps over the lazy dog\" — a pangram used since the 19th century, café naïve 日本語 \u00e9.\n"}`
	for b.Len() < size-len(turn)-4 {
		b.WriteString(turn)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

func TestChatBody_IsValid(t *testing.T) {
	for _, n := range []int{8 << 10, 1 << 20} {
		body := chatBody(n)
		if !json.Valid(body) || Check(body) != nil {
			t.Fatalf("benchmark body of %d bytes is not valid", n)
		}
	}
}

func BenchmarkCheck(b *testing.B) {
	for _, n := range []int{8 << 10, 1 << 20} {
		body := chatBody(n)
		b.Run(fmt.Sprintf("%dKB", n>>10), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if err := Check(body); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(float64(len(body))/1024), "ns/KB")
		})
	}
}

func TestSpecial_MatchesBytewise(t *testing.T) {
	for _, c := range []byte{0, 1, 0x1f, 0x20, '"', '\\', 'a', 0x7f, 0x80, 0xff, 0xa2, 0xdc} {
		for pos := 0; pos < 8; pos++ {
			var w [8]byte
			for i := range w {
				w[i] = 'x'
			}
			w[pos] = c
			want := c < 0x20 || c == '"' || c == '\\'
			if got := special(binary.LittleEndian.Uint64(w[:])); got != want {
				t.Fatalf("special(%q at %d) = %v, want %v", c, pos, got, want)
			}
		}
	}
}

// BenchmarkGJSONValid is the recursive check Check replaced, for comparison.
func BenchmarkGJSONValid(b *testing.B) {
	for _, n := range []int{8 << 10, 1 << 20} {
		body := chatBody(n)
		b.Run(fmt.Sprintf("%dKB", n>>10), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				gjson.ValidBytes(body)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(float64(len(body))/1024), "ns/KB")
		})
	}
}

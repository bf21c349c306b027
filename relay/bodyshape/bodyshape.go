// Package bodyshape checks the shape of a relay request body in one iterative pass, before anything
// recursive (gjson's validator, the token counter) or anything that picks one of several equal keys reads it.
//
// Three things are refused. Nesting deeper than MaxDepth: a recursive reader would overflow the goroutine
// stack on millions of '[' (a fatal error no recover catches). A top-level key that appears twice once JSON
// escapes are undone ("mod\u0065l" is "model"): the gateway reads the first, most upstream parsers the last,
// so the caller could be routed, allowed and billed for one model or max_tokens and served another. A case
// or Unicode-fold variant of a field the gateway reads ("Model", "ſtream"): Go's encoding/json, which some
// upstreams use, matches keys that way. Inside stream_options, whose include_usage the gateway reads and
// writes, the same two rules apply.
package bodyshape

import (
	"encoding/binary"
	"strings"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of objects and arrays accepted (the body object itself is level 1).
const MaxDepth = 128

// MaxKeys is the most keys accepted in an object whose keys are remembered (the body and stream_options).
// No API has more than a few dozen top-level fields; remembering millions would cost seconds of CPU and
// hundreds of MB for one request.
const MaxKeys = 1024

// Code is why a body was refused; the relay answers it as the error code of the same name.
type Code string

// Refusal codes.
const (
	InvalidJSON  Code = "invalid_json"       // not one well-formed JSON object
	TooDeep      Code = "body_too_deep"      // nested deeper than MaxDepth
	DuplicateKey Code = "duplicate_key"      // a key twice, or a variant of a field the gateway reads
	TooManyKeys  Code = "body_too_many_keys" // more than MaxKeys keys in the body or stream_options
)

// Error is a refused body; Key is the offending key (unescaped) for DuplicateKey.
type Error struct {
	Code Code
	Key  string
}

// Error names the code and, for DuplicateKey, the key.
func (e *Error) Error() string {
	if e.Key != "" {
		return string(e.Code) + ": " + e.Key
	}
	return string(e.Code)
}

// readFields are the top-level fields the gateway itself reads, so a case variant of one is refused even
// without an exact twin: relay/fields.go (model, stream, max_tokens, max_completion_tokens,
// max_output_tokens, stream_options), relay/upstream.go (writes model and stream_options), service/sticky
// (conversation, metadata, prompt_cache_key, user, safety_identifier, messages, input), service/tokencount
// (messages, input, instructions, prompt, tools, functions, system), plus n and best_of, which multiply the
// output an upstream bills. Keep it in step with those readers.
var readFields = [...]string{"model", "stream", "max_tokens", "max_completion_tokens", "max_output_tokens", "n", "best_of",
	"stream_options", "tools", "functions", "messages", "input", "instructions", "prompt", "system",
	"metadata", "user", "conversation", "prompt_cache_key", "safety_identifier",
	"size", "quality", "documents", "query", "response_format"} // media: the image price's size and quality, rerank's searches

// optionsRead are the stream_options fields the gateway reads and writes.
var optionsRead = [...]string{"include_usage"}

// geminiConfig is Gemini's generationConfig, whose output cap and candidate count the gateway reads. Gemini
// takes each name in camelCase and snake_case, so names are compared with folded case and no underscores:
// "generation_config" beside "generationConfig", or "max_output_tokens" beside "maxOutputTokens", is a
// duplicate key.
const geminiConfig = "generationconfig"

// geminiName folds a Gemini field name: lower case, underscores dropped.
func geminiName(k string) string { return strings.ReplaceAll(strings.ToLower(k), "_", "") }

// keySet holds the keys of one object: a slice while small, a map once large (a body of a million keys
// must not cost a million squared compares).
type keySet struct {
	list []string
	set  map[string]struct{}
}

// add records k and reports whether it was already there.
func (s *keySet) add(k string) bool {
	if s.set != nil {
		if _, ok := s.set[k]; ok {
			return true
		}
		s.set[k] = struct{}{}
		return false
	}
	for _, x := range s.list {
		if x == k {
			return true
		}
	}
	s.list = append(s.list, k)
	if len(s.list) > 32 {
		s.set = make(map[string]struct{}, 2*len(s.list))
		for _, x := range s.list {
			s.set[x] = struct{}{}
		}
	}
	return false
}

// len is how many keys are recorded.
func (s *keySet) len() int {
	if s.set != nil {
		return len(s.set)
	}
	return len(s.list)
}

func (s *keySet) reset() { s.list, s.set = s.list[:0], nil }

type scanner struct {
	b       []byte
	i       int
	top     keySet
	opts    keySet
	topKey  string // the top-level key whose value is being read
	inOpts  bool   // the level-2 object being read is stream_options
	inGen   bool   // the level-2 object being read is Gemini's generationConfig
	escaped bool   // the last string scanned had an escape
}

// invalid and tooDeep are fresh errors (never shared values a caller could change).
func invalid() error { return &Error{Code: InvalidJSON} }
func tooDeep() error { return &Error{Code: TooDeep} }

// Check reads body once, without recursion, and returns nil or an *Error. Cost is linear in the body.
func Check(body []byte) error {
	s := scanner{b: body, top: keySet{list: make([]string, 0, 16)}}
	return s.run()
}

func (s *scanner) run() error {
	var stack [MaxDepth]byte
	depth := 0
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return invalid()
	}
	for {
		// A value starts here.
		s.ws()
		if s.i >= len(s.b) {
			return invalid()
		}
		switch c := s.b[s.i]; c {
		case '{', '[':
			if depth == MaxDepth {
				return tooDeep()
			}
			stack[depth] = c
			depth++
			s.i++
			s.ws()
			if s.i < len(s.b) && s.b[s.i] == c+2 { // '{'+2 == '}', '['+2 == ']'
				s.i++
				depth--
				break
			}
			if c == '{' {
				if depth == 2 && s.topKey == "stream_options" {
					s.inOpts = true
					s.opts.reset()
				}
				if depth == 2 && geminiName(s.topKey) == geminiConfig {
					s.inGen = true
					s.opts.reset()
				}
				if err := s.member(depth); err != nil {
					return err
				}
			}
			continue
		case '"':
			if !s.str() {
				return invalid()
			}
		case 't':
			if !s.lit("true") {
				return invalid()
			}
		case 'f':
			if !s.lit("false") {
				return invalid()
			}
		case 'n':
			if !s.lit("null") {
				return invalid()
			}
		default:
			if !s.num() {
				return invalid()
			}
		}
		// A value ended: close containers until the next value or the end.
		for {
			s.ws()
			if depth == 0 {
				if s.i != len(s.b) {
					return invalid()
				}
				return nil
			}
			if s.i >= len(s.b) {
				return invalid()
			}
			c := s.b[s.i]
			s.i++
			if c == ',' {
				if stack[depth-1] == '{' {
					s.ws()
					if err := s.member(depth); err != nil {
						return err
					}
				}
				break
			}
			if c != stack[depth-1]+2 {
				return invalid()
			}
			depth--
			if depth == 1 {
				s.inOpts = false
			}
		}
	}
}

// member reads `"key" :` of an object at level depth and checks the keys the gateway cares about.
func (s *scanner) member(depth int) error {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return invalid()
	}
	start := s.i + 1
	if !s.str() {
		return invalid()
	}
	raw, esc := s.b[start:s.i-1], s.escaped
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != ':' {
		return invalid()
	}
	s.i++
	switch {
	case depth == 1:
		if s.top.len() >= MaxKeys {
			return &Error{Code: TooManyKeys}
		}
		k := key(raw, esc)
		if variant(k, readFields[:]) || s.top.add(k) {
			return &Error{Code: DuplicateKey, Key: k}
		}
		if geminiName(k) == geminiConfig && s.top.add("\x00"+geminiConfig) { // the other spelling came first
			return &Error{Code: DuplicateKey, Key: k}
		}
		s.topKey = k
		s.inOpts, s.inGen = false, false
	case depth == 2 && s.inOpts:
		if s.opts.len() >= MaxKeys {
			return &Error{Code: TooManyKeys}
		}
		k := key(raw, esc)
		if variant(k, optionsRead[:]) || s.opts.add(k) {
			return &Error{Code: DuplicateKey, Key: "stream_options." + k}
		}
	case depth == 2 && s.inGen:
		if s.opts.len() >= MaxKeys {
			return &Error{Code: TooManyKeys}
		}
		k := key(raw, esc)
		if s.opts.add(geminiName(k)) {
			return &Error{Code: DuplicateKey, Key: s.topKey + "." + k}
		}
	}
	return nil
}

// variant says whether k equals one of names under Unicode case folding without being it.
func variant(k string, names []string) bool {
	ascii := true
	for i := 0; i < len(k); i++ {
		if k[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	for _, n := range names {
		if ascii && len(n) != len(k) {
			continue
		}
		if k != n && strings.EqualFold(k, n) {
			return true
		}
	}
	return false
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) lit(w string) bool {
	if len(s.b)-s.i < len(w) || string(s.b[s.i:s.i+len(w)]) != w {
		return false
	}
	s.i += len(w)
	return true
}

// str scans a string starting at its opening quote and leaves s.i after the closing one.
func (s *scanner) str() bool {
	b, i := s.b, s.i+1
	s.escaped = false
	for i < len(b) {
		// Eight bytes at a time while none of them is a quote, a backslash or a control character.
		for i+8 <= len(b) && !special(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		switch c {
		case '"':
			s.i = i + 1
			return true
		case '\\':
			if i+1 >= len(b) {
				return false
			}
			s.escaped = true
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return false
				}
				for _, h := range b[i+2 : i+6] {
					if hexVal(h) < 0 {
						return false
					}
				}
				i += 6
			default:
				return false
			}
		default:
			return false // a raw control character
		}
	}
	return false
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// special says whether any of the eight bytes in x is '"', '\\' or below 0x20 (SWAR: a byte b is below n
// when (b - n) borrows into its high bit while b's own high bit is clear).
func special(x uint64) bool {
	q := x ^ (ones * '"')
	bs := x ^ (ones * '\\')
	return ((x-ones*0x20)|(q-ones)|(bs-ones))&^x&highs != 0
}

// num scans a JSON number.
func (s *scanner) num() bool {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		d := i + 1
		if i = digits(b, d); i == d {
			return false // a fraction needs a digit
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		if i = digits(b, d); i == d {
			return false // an exponent needs a digit
		}
	}
	s.i = i
	return true
}

// digits returns the index after the run of ASCII digits that starts at i.
func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func hexVal(c byte) rune {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0')
	case c >= 'a' && c <= 'f':
		return rune(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return rune(c-'A') + 10
	}
	return -1
}

// key is a key's text as a JSON decoder sees it: escapes undone, lone surrogates and invalid UTF-8 bytes as
// U+FFFD (what Go's encoding/json does; mapping several spellings to one only makes more keys collide).
func key(raw []byte, esc bool) string {
	if !esc && utf8.Valid(raw) {
		return string(raw)
	}
	var sb strings.Builder
	sb.Grow(len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			r, n := utf8.DecodeRune(raw[i:])
			sb.WriteRune(r) // utf8.RuneError for an invalid byte
			i += n
			continue
		}
		switch raw[i+1] { // str validated the escape
		case 'b':
			sb.WriteByte('\b')
		case 'f':
			sb.WriteByte('\f')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case 'u':
			r := hex4(raw[i+2:])
			i += 6
			if r >= 0xD800 && r < 0xDC00 && i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
				if lo := hex4(raw[i+2:]); lo >= 0xDC00 && lo < 0xE000 {
					sb.WriteRune(0x10000 + (r-0xD800)<<10 + (lo - 0xDC00))
					i += 6
					continue
				}
			}
			if r >= 0xD800 && r < 0xE000 {
				r = utf8.RuneError
			}
			sb.WriteRune(r)
			continue
		default: // '"', '\\', '/'
			sb.WriteByte(raw[i+1])
		}
		i += 2
	}
	return sb.String()
}

func hex4(b []byte) rune {
	return hexVal(b[0])<<12 | hexVal(b[1])<<8 | hexVal(b[2])<<4 | hexVal(b[3])
}

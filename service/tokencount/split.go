package tokencount

import (
	"unicode"
	"unicode/utf8"
)

// The pre-tokenizer, hand-written. tiktoken splits text with a regular expression before BPE; tiktoken-go runs
// it through regexp2 (a backtracking .NET-style engine), which costs ~300 µs per KB and made counting a 200 KB
// prompt take 60 ms on the hot path. These functions return exactly the pieces the patterns below would
// (leftmost-first alternation, greedy quantifiers, the backtracking spelled out), which split_test.go checks
// against regexp2 on fixed and random text.
//
// cl100k: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
// o200k:  [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//         |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//         |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+

// Character classes as bits, so one lookup answers every class test a pattern makes.
const (
	kLetter  = 1 << iota // \p{L}
	kNumber              // \p{N}
	kSpace               // \s
	kNewline             // [\r\n]
	kUpper               // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	kLower               // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
)

func classify(r rune) uint8 {
	if r < utf8.RuneSelf {
		switch {
		case 'a' <= r && r <= 'z':
			return kLetter | kLower
		case 'A' <= r && r <= 'Z':
			return kLetter | kUpper
		case '0' <= r && r <= '9':
			return kNumber
		case r == '\r' || r == '\n':
			return kSpace | kNewline
		case r == ' ' || r == '\t' || r == '\v' || r == '\f':
			return kSpace
		}
		return 0
	}
	switch {
	case unicode.IsLetter(r):
		switch {
		case unicode.Is(unicode.Lu, r), unicode.Is(unicode.Lt, r):
			return kLetter | kUpper
		case unicode.Is(unicode.Ll, r):
			return kLetter | kLower
		}
		return kLetter | kUpper | kLower // Lm, Lo
	case unicode.IsMark(r):
		return kUpper | kLower
	case unicode.IsNumber(r):
		return kNumber
	case unicode.IsSpace(r):
		return kSpace
	}
	return 0
}

// at returns the rune at byte offset i, its size and its classes; past the end it returns size 0, class 0.
func at(s string, i int) (rune, int, uint8) {
	if i >= len(s) {
		return 0, 0, 0
	}
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1, classify(rune(c))
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return r, n, classify(r)
}

// scan advances from i over runes having any of the bits in want.
func scan(s string, i int, want uint8) int {
	for {
		_, n, k := at(s, i)
		if n == 0 || k&want == 0 {
			return i
		}
		i += n
	}
}

// scanOther advances over [^\s\p{L}\p{N}].
func scanOther(s string, i int) int {
	for {
		_, n, k := at(s, i)
		if n == 0 || k&(kSpace|kLetter|kNumber) != 0 {
			return i
		}
		i += n
	}
}

// contraction returns the length of (?i:'s|'t|'re|'ve|'m|'ll|'d) at i, or 0.
func contraction(s string, i int) int {
	if i+1 >= len(s) || s[i] != '\'' {
		return 0
	}
	lower := func(j int) byte {
		if j >= len(s) {
			return 0
		}
		return s[j] | 0x20
	}
	switch lower(i + 1) {
	case 's', 't', 'm', 'd':
		return 2
	case 'r', 'v':
		if lower(i+2) == 'e' {
			return 3
		}
	case 'l':
		if lower(i+2) == 'l' {
			return 3
		}
	}
	return 0
}

// prefixOK reports whether [^\r\n\p{L}\p{N}] matches a rune of class k.
func prefixOK(k uint8) bool { return k&(kNewline|kLetter|kNumber) == 0 }

// numbers matches \p{N}{1,3} at i (whose rune is known to be a number).
func numbers(s string, i, n int) int {
	j := i + n
	for range 2 {
		_, m, k := at(s, j)
		if m == 0 || k&kNumber == 0 {
			break
		}
		j += m
	}
	return j
}

// whitespace handles the three trailing alternatives shared by both patterns; i starts a whitespace run.
func whitespace(s string, i int) int {
	end, lastNL, lastStart := i, -1, i
	for {
		r, n, k := at(s, end)
		if n == 0 || k&kSpace == 0 {
			break
		}
		if r == '\r' || r == '\n' {
			lastNL = end
		}
		lastStart = end
		end += n
	}
	switch {
	case lastNL >= 0: // \s*[\r\n]+ : up to and including the run's last newline
		return lastNL + 1
	case end == len(s) || lastStart == i: // \s+(?!\S) reaches the end, or one rune falls to \s+
		return end
	default: // \s+(?!\S) backs off one rune so the next piece is " word"
		return lastStart
	}
}

// punct matches " ?[^\s\p{L}\p{N}]+" followed by newline-ish runes at i, or returns i. o200k also takes '/'.
func punct(s string, i int, o200k bool) int {
	j := i
	if s[i] == ' ' {
		j++
	}
	e := scanOther(s, j)
	if e == j {
		return i
	}
	for e < len(s) && (s[e] == '\r' || s[e] == '\n' || (o200k && s[e] == '/')) {
		e++
	}
	return e
}

// nextCl100k returns the end of the piece that starts at i (i < len(s)).
func nextCl100k(s string, i int) int {
	_, n, k := at(s, i)
	if c := contraction(s, i); c > 0 {
		return i + c
	}
	if k&kLetter != 0 {
		return scan(s, i+n, kLetter)
	}
	if prefixOK(k) {
		if _, m, k2 := at(s, i+n); k2&kLetter != 0 {
			return scan(s, i+n+m, kLetter)
		}
	}
	if k&kNumber != 0 {
		return numbers(s, i, n)
	}
	if e := punct(s, i, false); e > i {
		return e
	}
	return whitespace(s, i)
}

// o200kWord matches [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]* then [\p{Ll}\p{Lm}\p{Lo}\p{M}]+ (first=true) or
// [..upper..]+ then [..lower..]* (first=false) at j, plus an optional contraction; it returns j on no match.
func o200kWord(s string, j int, first bool) int {
	upperEnd, lastLowerEnd := j, -1
	for {
		_, n, k := at(s, upperEnd)
		if n == 0 || k&kUpper == 0 {
			break
		}
		if k&kLower != 0 {
			lastLowerEnd = upperEnd + n
		}
		upperEnd += n
	}
	_, _, k := at(s, upperEnd)
	var e int
	switch {
	case !first && upperEnd == j: // upper+ needs one rune
		return j
	case k&kLower != 0: // the lower run follows the upper run
		e = scan(s, upperEnd, kLower)
	case !first:
		e = upperEnd
	case lastLowerEnd >= 0: // upper* gives back runes until the last one that is also lower
		e = lastLowerEnd
	default:
		return j
	}
	return e + contraction(s, e)
}

// nextO200k returns the end of the piece that starts at i (i < len(s)).
func nextO200k(s string, i int) int {
	_, n, k := at(s, i)
	for _, first := range []bool{true, false} {
		if prefixOK(k) {
			if e := o200kWord(s, i+n, first); e > i+n {
				return e
			}
		}
		if e := o200kWord(s, i, first); e > i {
			return e
		}
	}
	if k&kNumber != 0 {
		return numbers(s, i, n)
	}
	if e := punct(s, i, true); e > i {
		return e
	}
	return whitespace(s, i)
}

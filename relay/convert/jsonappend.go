package convert

import (
	"strconv"
	"unicode/utf8"
)

// The chunks a translated chat completions stream sends most (text, reasoning, the role and finish chunks) are
// appended by hand: encoding/json's reflection cost more per event than the rest of the translation. The
// bytes are the ones oaiMarshal writes for the same chunk (TestAppendDeltaChunk_MatchesMarshal, and its fuzz
// test); chunks carrying tool calls or usage still go through oaiMarshal.

// appendDeltaChunk appends the chunk e.chunk describes, as one data-only SSE event, for a delta without tool
// calls.
func (e *oaiEncoder) appendDeltaChunk(dst []byte, d oaiDelta, finish *string) []byte {
	dst = append(dst, `data: {"id":`...)
	dst = appendJSONString(dst, e.id)
	dst = append(dst, `,"object":"chat.completion.chunk","created":`...)
	dst = strconv.AppendInt(dst, e.created, 10)
	dst = append(dst, `,"model":`...)
	dst = appendJSONString(dst, e.model)
	dst = append(dst, `,"choices":[{"index":0,"delta":{`...)
	sep := false
	if d.Role != "" {
		dst, sep = appendField(dst, sep, "role", d.Role)
	}
	if d.Content != nil {
		dst, sep = appendField(dst, sep, "content", *d.Content)
	}
	if d.ReasoningContent != "" {
		dst, _ = appendField(dst, sep, "reasoning_content", d.ReasoningContent)
	}
	dst = append(dst, `},"logprobs":null,"finish_reason":`...)
	if finish != nil {
		dst = appendJSONString(dst, *finish)
	} else {
		dst = append(dst, "null"...)
	}
	return append(dst, "}]}\n\n"...)
}

// appendField appends "name":v to an object, after a comma when sep says a field came before.
func appendField(dst []byte, sep bool, name, v string) ([]byte, bool) {
	if sep {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':')
	return appendJSONString(dst, v), true
}

const lowerHex = "0123456789abcdef"

// appendJSONString appends s as a JSON string the way encoding/json writes it without HTML escaping: quote and
// backslash escaped, control characters as \b \f \n \r \t or \u00XX, invalid UTF-8 as \ufffd, and U+2028 and
// U+2029 escaped (JavaScript reads them as line ends).
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', lowerHex[c>>4], lowerHex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', lowerHex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

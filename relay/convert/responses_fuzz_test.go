package convert

import (
	"testing"

	"tollgate/relay/adaptor"
)

// FuzzResponsesParseRequest reads arbitrary bodies: ParseRequest never panics, and what it reads builds and
// answers without panicking either.
func FuzzResponsesParseRequest(f *testing.F) {
	for _, tc := range rspParseCases {
		f.Add([]byte(tc.body))
	}
	for _, tc := range rspErrorCases {
		f.Add([]byte(tc.body))
	}
	c, _ := For(adaptor.ResponsesAPI)
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := c.ParseRequest(body)
		if err != nil {
			return
		}
		_, _ = c.BuildRequest(r)
		_, _ = c.BuildResponse(r, &Response{Parts: []Part{{Kind: PartText, Text: "x"}}})
		enc := c.NewEncoder(r)
		enc.Encode(nil, Event{Type: EvArgsDelta, Index: 0, Text: "{"})
		enc.Encode(nil, Event{Type: EvEnd})
	})
}

// FuzzResponsesDecoder feeds arbitrary events to the decoder (after a seeded prefix) and its output to the
// encoder: neither panics, and the encoder's output is a well-formed stream.
func FuzzResponsesDecoder(f *testing.F) {
	for _, tc := range rspDecodeCases {
		for i, e := range tc.events {
			f.Add(uint8(i), e[0], []byte(e[1]), e[0], []byte(e[1]), !tc.cut)
		}
	}
	c, _ := For(adaptor.ResponsesAPI)
	f.Fuzz(func(t *testing.T, prefix uint8, name1 string, data1 []byte, name2 string, data2 []byte, ended bool) {
		tc := rspDecodeCases[int(prefix)%len(rspDecodeCases)]
		dec, enc := c.NewDecoder(), c.NewEncoder(nil)
		var out []byte
		feed := func(name string, data []byte) {
			evs, err := dec.Decode(name, data)
			if err != nil {
				return
			}
			for _, ev := range evs {
				out = enc.Encode(out, ev)
			}
		}
		for _, e := range tc.events[:int(prefix)%(len(tc.events)+1)] {
			feed(e[0], []byte(e[1]))
		}
		feed(name1, data1)
		feed(name2, data2)
		for _, ev := range dec.Finish(ended) {
			out = enc.Encode(out, ev)
		}
		out = enc.Encode(out, Event{Type: EvError, Err: &Error{Type: ErrServer, Message: "cut"}})
		rspCheckStream(t, rspSplitSSE(t, out))
	})
}

package convert

import (
	"bytes"
	"testing"
)

// deltaChunkBoth writes one delta chunk by hand and through oaiMarshal.
func deltaChunkBoth(id, model string, created int64, d oaiDelta, finish *string) (hand, marshalled []byte) {
	e := &oaiEncoder{id: id, model: model, created: created}
	hand = e.appendDeltaChunk(nil, d, finish)
	marshalled = oaiAppendJSON(nil, oaiChunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: model,
		Choices: []oaiChunkChoice{{Delta: d, FinishReason: finish}}})
	return hand, marshalled
}

var jsonStringCases = []string{
	"", "plain", `say "hi"`, `back\slash`, "\x00\x01\x07\x08\x09\x0a\x0b\x0c\x0d\x1b\x1f\x7f", "<b>&amp;</b>",
	"\xff", "a\xc3", "\xe2\x80\xa8 and \xe2\x80\xa9", "\u2027\u202a", "emoji 😀 中文", "\xed\xa0\x80", "/\\/",
}

func TestAppendDeltaChunk_MatchesMarshal(t *testing.T) {
	stop, empty := "stop", ""
	deltas := []oaiDelta{{}, {Role: "assistant", Content: &empty}, {ReasoningContent: "r"}, {Role: "x", ReasoningContent: "y"}}
	for _, s := range jsonStringCases {
		s := s
		deltas = append(deltas, oaiDelta{Content: &s}, oaiDelta{ReasoningContent: s}, oaiDelta{Role: s, Content: &s, ReasoningContent: s})
	}
	for _, d := range deltas {
		for _, fin := range []*string{nil, &stop, &empty} {
			for _, name := range jsonStringCases {
				hand, want := deltaChunkBoth("chatcmpl-"+name, name, -42, d, fin)
				if !bytes.Equal(hand, want) {
					t.Fatalf("delta %+v finish %v name %q:\nhand %s\nwant %s", d, fin, name, hand, want)
				}
			}
		}
	}
}

func FuzzAppendDeltaChunk(f *testing.F) {
	for _, s := range jsonStringCases {
		f.Add("id", "m", int64(1), "assistant", s, true, s, "stop", true)
	}
	f.Fuzz(func(t *testing.T, id, model string, created int64, role, content string, hasContent bool, reasoning, finish string, hasFinish bool) {
		d := oaiDelta{Role: role, ReasoningContent: reasoning}
		if hasContent {
			d.Content = &content
		}
		var fin *string
		if hasFinish {
			fin = &finish
		}
		hand, want := deltaChunkBoth(id, model, created, d, fin)
		if !bytes.Equal(hand, want) {
			t.Fatalf("hand %q\nwant %q", hand, want)
		}
	})
}

// BenchmarkTranslateTextDelta: one Anthropic text delta read and written as a chat completions chunk, the
// event a translated stream carries most.
func BenchmarkTranslateTextDelta(b *testing.B) {
	dec, enc := antCodec{}.NewDecoder(), oaiCodec{}.NewEncoder(&Request{Model: "bench-model"})
	var dst []byte
	for _, ev := range []string{`{"type":"message_start","message":{"id":"msg_1","model":"m","usage":{"input_tokens":3}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`} {
		evs, _ := dec.Decode("", []byte(ev))
		for _, e := range evs {
			dst = enc.Encode(dst, e)
		}
	}
	data := []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"chunk 7 of the answer, t=1733520000123456789"}}`)
	b.ReportAllocs()
	for b.Loop() {
		evs, _ := dec.Decode("content_block_delta", data)
		dst = dst[:0]
		for _, e := range evs {
			dst = enc.Encode(dst, e)
		}
	}
}

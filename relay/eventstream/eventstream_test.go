package eventstream

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

func TestDecode_ReadsEncodedMessagesInOrder(t *testing.T) {
	var stream []byte
	stream = append(stream, Encode([]Header{{":event-type", "chunk"}, {":message-type", "event"}}, []byte(`{"bytes":"eyJ9"}`))...)
	stream = append(stream, Encode([]Header{{":message-type", "exception"}, {":exception-type", "throttlingException"}}, []byte(`{"message":"slow"}`))...)
	d := NewDecoder(bytes.NewReader(stream))
	m, err := d.Decode()
	if err != nil || m.Headers[":event-type"] != "chunk" || string(m.Payload) != `{"bytes":"eyJ9"}` {
		t.Fatalf("first: %+v %v", m, err)
	}
	m, err = d.Decode()
	if err != nil || m.Headers[":exception-type"] != "throttlingException" || string(m.Payload) != `{"message":"slow"}` {
		t.Fatalf("second: %+v %v", m, err)
	}
	if _, err := d.Decode(); err != io.EOF {
		t.Fatalf("clean end: %v", err)
	}
}

func TestDecode_SkipsNonStringHeaderTypes(t *testing.T) {
	// A header block with a bool, an int32, a timestamp and a UUID before the string header.
	var hb []byte
	add := func(name string, typ byte, v []byte) {
		hb = append(append(append(hb, byte(len(name))), name...), typ)
		hb = append(hb, v...)
	}
	add("flag", typeTrue, nil)
	add("n", typeInt, []byte{0, 0, 0, 7})
	add("ts", typeTimestamp, make([]byte, 8))
	add("id", typeUUID, make([]byte, 16))
	add(":event-type", typeString, append([]byte{0, 5}, "chunk"...))
	total := prelude + len(hb) + 2 + 4
	msg := binary.BigEndian.AppendUint32(nil, uint32(total))
	msg = binary.BigEndian.AppendUint32(msg, uint32(len(hb)))
	msg = binary.BigEndian.AppendUint32(msg, crc32IEEE(msg))
	msg = append(append(msg, hb...), "{}"...)
	msg = binary.BigEndian.AppendUint32(msg, crc32IEEE(msg))
	m, err := NewDecoder(bytes.NewReader(msg)).Decode()
	if err != nil || m.Headers[":event-type"] != "chunk" || len(m.Headers) != 1 || string(m.Payload) != "{}" {
		t.Fatalf("%+v %v", m, err)
	}
}

func TestDecode_RefusesBrokenFrames(t *testing.T) {
	good := Encode([]Header{{":event-type", "chunk"}}, []byte(`{"bytes":""}`))
	flip := func(i int) []byte { b := bytes.Clone(good); b[i] ^= 0x01; return b }
	cases := map[string][]byte{
		"prelude crc":   flip(9),
		"total length":  flip(3),
		"header bytes":  flip(14),
		"payload byte":  flip(len(good) - 6),
		"message crc":   flip(len(good) - 1),
		"huge length":   withLengths(0x7fffffff, 0),
		"headers > msg": withLengths(20, 100),
	}
	for name, b := range cases {
		_, err := NewDecoder(bytes.NewReader(b)).Decode()
		if !errors.Is(err, ErrFrame) {
			t.Errorf("%s: err = %v, want ErrFrame", name, err)
		}
	}
	if _, err := NewDecoder(bytes.NewReader(good[:len(good)-3])).Decode(); err != io.ErrUnexpectedEOF {
		t.Errorf("truncated: %v", err)
	}
}

func withLengths(total, hlen uint32) []byte {
	b := binary.BigEndian.AppendUint32(nil, total)
	b = binary.BigEndian.AppendUint32(b, hlen)
	b = binary.BigEndian.AppendUint32(b, crc32IEEE(b))
	return append(b, make([]byte, 16)...)
}

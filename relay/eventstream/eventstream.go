// Package eventstream reads and writes the AWS event-stream binary framing (application/vnd.amazon.eventstream)
// that Bedrock's invoke-with-response-stream answers in:
//
//	total length (4) | headers length (4) | prelude CRC32 (4) | headers | payload | message CRC32 (4)
//
// all big-endian, both CRCs IEEE: the prelude's over the first 8 bytes, the message's over everything before it.
// Each header is a 1-byte name length, the name, a 1-byte value type and the value.
package eventstream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// Limits of one message (the service's own: 16 MiB per message, 128 KiB of headers).
const (
	MaxMessage = 16 << 20
	MaxHeaders = 128 << 10
	prelude    = 12
	minMessage = prelude + 4
)

// Header value types.
const (
	typeTrue byte = iota
	typeFalse
	typeByte
	typeShort
	typeInt
	typeLong
	typeBytes
	typeString
	typeTimestamp
	typeUUID
)

// ErrFrame is a message whose framing is wrong: a bad length, a CRC mismatch, a malformed header.
var ErrFrame = errors.New("eventstream: malformed message")

// Message is one decoded message: its string and byte-array headers by name (other header types are checked
// and skipped), and its payload.
type Message struct {
	Headers map[string]string
	Payload []byte
}

// Decoder reads messages one at a time from a stream.
type Decoder struct {
	r   io.Reader
	buf []byte
}

// NewDecoder reads messages from r.
func NewDecoder(r io.Reader) *Decoder { return &Decoder{r: r} }

// Decode reads the next message: io.EOF at a clean end between messages, io.ErrUnexpectedEOF inside one,
// an error wrapping ErrFrame for a malformed one. The returned payload is valid until the next call.
func (d *Decoder) Decode() (Message, error) {
	var pre [prelude]byte
	if _, err := io.ReadFull(d.r, pre[:]); err != nil {
		return Message{}, err
	}
	total, hlen := binary.BigEndian.Uint32(pre[0:4]), binary.BigEndian.Uint32(pre[4:8])
	if crc32.ChecksumIEEE(pre[:8]) != binary.BigEndian.Uint32(pre[8:12]) {
		return Message{}, fmt.Errorf("%w: prelude CRC mismatch", ErrFrame)
	}
	if total < minMessage || total > MaxMessage || hlen > MaxHeaders || uint64(hlen) > uint64(total)-minMessage {
		return Message{}, fmt.Errorf("%w: lengths %d/%d", ErrFrame, total, hlen)
	}
	if cap(d.buf) < int(total) {
		d.buf = make([]byte, total)
	}
	d.buf = d.buf[:total]
	copy(d.buf, pre[:])
	if _, err := io.ReadFull(d.r, d.buf[prelude:]); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return Message{}, err
	}
	end := total - 4
	if crc32.ChecksumIEEE(d.buf[:end]) != binary.BigEndian.Uint32(d.buf[end:]) {
		return Message{}, fmt.Errorf("%w: message CRC mismatch", ErrFrame)
	}
	headers, err := parseHeaders(d.buf[prelude : prelude+hlen])
	if err != nil {
		return Message{}, err
	}
	return Message{Headers: headers, Payload: d.buf[prelude+hlen : end]}, nil
}

// fixedSize is the value size of the fixed-width header types.
var fixedSize = map[byte]int{typeTrue: 0, typeFalse: 0, typeByte: 1, typeShort: 2, typeInt: 4, typeLong: 8, typeTimestamp: 8, typeUUID: 16}

func parseHeaders(b []byte) (map[string]string, error) {
	out := map[string]string{}
	for len(b) > 0 {
		n := int(b[0])
		if n == 0 || len(b) < 1+n+1 {
			return nil, fmt.Errorf("%w: header name", ErrFrame)
		}
		name, typ := string(b[1:1+n]), b[1+n]
		b = b[2+n:]
		if size, ok := fixedSize[typ]; ok {
			if len(b) < size {
				return nil, fmt.Errorf("%w: header %q value", ErrFrame, name)
			}
			b = b[size:]
			continue
		}
		if typ != typeBytes && typ != typeString {
			return nil, fmt.Errorf("%w: header %q of unknown type %d", ErrFrame, name, typ)
		}
		if len(b) < 2 {
			return nil, fmt.Errorf("%w: header %q length", ErrFrame, name)
		}
		vlen := int(binary.BigEndian.Uint16(b))
		if len(b) < 2+vlen {
			return nil, fmt.Errorf("%w: header %q value", ErrFrame, name)
		}
		out[name] = string(b[2 : 2+vlen])
		b = b[2+vlen:]
	}
	return out, nil
}

// Header is one string header of a message to encode.
type Header struct{ Name, Value string }

// Encode frames one message with string headers (for fakes and tests).
func Encode(headers []Header, payload []byte) []byte {
	var hb []byte
	for _, h := range headers {
		hb = append(hb, byte(len(h.Name)))
		hb = append(hb, h.Name...)
		hb = append(hb, typeString)
		hb = binary.BigEndian.AppendUint16(hb, uint16(len(h.Value)))
		hb = append(hb, h.Value...)
	}
	total := prelude + len(hb) + len(payload) + 4
	out := make([]byte, 0, total)
	out = binary.BigEndian.AppendUint32(out, uint32(total))
	out = binary.BigEndian.AppendUint32(out, uint32(len(hb)))
	out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out[:8]))
	out = append(out, hb...)
	out = append(out, payload...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out))
}

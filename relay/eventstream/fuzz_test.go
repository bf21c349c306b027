package eventstream

import (
	"bytes"
	"hash/crc32"
	"testing"
)

func crc32IEEE(b []byte) uint32 { return crc32.ChecksumIEEE(b) }

// FuzzDecode: no input panics or allocates past the message limit, and whatever decodes re-encodes to a
// message that decodes to the same string headers and payload.
func FuzzDecode(f *testing.F) {
	f.Add(Encode([]Header{{":event-type", "chunk"}, {":message-type", "event"}}, []byte(`{"bytes":"e30="}`)))
	f.Add(Encode(nil, nil))
	f.Add(withLengths(16, 0))
	f.Fuzz(func(t *testing.T, in []byte) {
		d := NewDecoder(bytes.NewReader(in))
		for i := 0; i < 8; i++ {
			m, err := d.Decode()
			if err != nil {
				return
			}
			var hs []Header
			for k, v := range m.Headers {
				if len(v) < 1<<16 {
					hs = append(hs, Header{k, v})
				}
			}
			again, err := NewDecoder(bytes.NewReader(Encode(hs, m.Payload))).Decode()
			if err != nil || !bytes.Equal(again.Payload, m.Payload) || len(again.Headers) != len(hs) {
				t.Fatalf("re-encode: %v", err)
			}
		}
	})
}

package audiodur

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"
)

// wav is a PCM WAV of secs seconds (mono, 16 kHz, 16-bit), with a LIST chunk before data.
func wav(secs float64, streamed bool) []byte {
	data := make([]byte, int(secs*32000))
	var b bytes.Buffer
	le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(36 + 12 + len(data)))
	b.WriteString("WAVEfmt ")
	le(uint32(16))
	le(uint16(1))
	le(uint16(1))
	le(uint32(16000))
	le(uint32(32000))
	le(uint16(2))
	le(uint16(16))
	b.WriteString("LIST")
	le(uint32(3)) // odd: padded to 4
	b.WriteString("abc\x00")
	b.WriteString("data")
	if streamed {
		le(uint32(0xFFFFFFFF))
	} else {
		le(uint32(len(data)))
	}
	b.Write(data)
	return b.Bytes()
}

func flac(rate, samples uint64) []byte {
	b := []byte("fLaC\x00\x00\x00\x22")
	si := make([]byte, 34)
	si[10], si[11], si[12] = byte(rate>>12), byte(rate>>4), byte(rate<<4)|0x02
	si[13] = 0xF0 | byte(samples>>32)
	binary.BigEndian.PutUint32(si[14:18], uint32(samples))
	return append(append(b, si...), make([]byte, 100)...)
}

func oggPage(serial uint32, granule uint64, body []byte) []byte {
	h := make([]byte, 27)
	copy(h, "OggS")
	binary.LittleEndian.PutUint64(h[6:14], granule)
	binary.LittleEndian.PutUint32(h[14:18], serial)
	var segs []byte
	n := len(body)
	for n >= 255 {
		segs, n = append(segs, 255), n-255
	}
	segs = append(segs, byte(n))
	h[26] = byte(len(segs))
	return append(append(h, segs...), body...)
}

func opus(granule uint64) []byte {
	head := make([]byte, 19)
	copy(head, "OpusHead")
	binary.LittleEndian.PutUint16(head[10:12], 312)
	var b []byte
	b = append(b, oggPage(7, 0, head)...)
	b = append(b, oggPage(7, 0, []byte("OpusTags"))...)
	b = append(b, oggPage(7, granule/2, make([]byte, 600))...)
	b = append(b, oggPage(7, granule, make([]byte, 300))...)
	return b
}

func mp4(timescale, duration uint32) []byte {
	box := func(typ string, body []byte) []byte {
		h := make([]byte, 8)
		binary.BigEndian.PutUint32(h, uint32(8+len(body)))
		copy(h[4:], typ)
		return append(h, body...)
	}
	mvhd := make([]byte, 100)
	binary.BigEndian.PutUint32(mvhd[12:16], timescale)
	binary.BigEndian.PutUint32(mvhd[16:20], duration)
	var b []byte
	b = append(b, box("ftyp", []byte("M4A \x00\x00\x00\x00"))...)
	b = append(b, box("mdat", make([]byte, 5000))...) // moov at the end, as many encoders write it
	b = append(b, box("moov", box("mvhd", mvhd))...)
	return b
}

// mp3CBR is MPEG1 Layer III frames at 128 kbit/s, 44.1 kHz: secs seconds of them after an ID3v2 tag.
func mp3CBR(frames int, xing bool) []byte {
	hdr := []byte{0xFF, 0xFB, 0x90, 0x40} // MPEG1 L3, 128k, 44.1k, joint stereo
	frame := make([]byte, 417)
	copy(frame, hdr)
	b := []byte("ID3\x03\x00\x00\x00\x00\x00\x0a")
	b = append(b, make([]byte, 10)...)
	if xing {
		x := append([]byte(nil), frame...)
		copy(x[4+32:], "Xing\x00\x00\x00\x01")
		binary.BigEndian.PutUint32(x[4+32+8:], uint32(frames))
		b = append(b, x...)
	}
	for range frames {
		b = append(b, frame...)
	}
	return b
}

func TestRead_EachFormat(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		want time.Duration
		f    Format
	}{
		{"wav 3.0 s", wav(3.0, false), 3 * time.Second, WAV},
		{"streamed wav", wav(1.5, true), 1500 * time.Millisecond, WAV},
		{"flac", flac(44100, 44100*7/2), 3500 * time.Millisecond, FLAC},
		{"ogg opus", opus(48000*4 + 312), 4 * time.Second, Ogg},
		{"m4a with moov last", mp4(1000, 61250), 61250 * time.Millisecond, MP4},
		{"mp3 xing frame count", mp3CBR(100, true), time.Duration(100*1152) * time.Second / 44100, MP3},
	}
	for _, tc := range cases {
		d, f, ok := Read(bytes.NewReader(tc.in))
		if !ok || f != tc.f || (d-tc.want).Abs() > time.Millisecond {
			t.Errorf("%s: %v %s %v, want %v %s", tc.name, d, f, ok, tc.want, tc.f)
		}
	}
	// Constant bitrate: bytes × 8 / 128k, ~26 ms a frame.
	d, _, ok := Read(bytes.NewReader(mp3CBR(383, false)))
	if want := time.Duration(383*417*8) * time.Second / 128000; !ok || (d-want).Abs() > time.Millisecond {
		t.Errorf("mp3 cbr: %v %v, want %v", d, ok, want)
	}
}

func TestRead_RefusesWhatItCannotRead(t *testing.T) {
	forged := wav(1, false)
	binary.LittleEndian.PutUint32(forged[28:32], 0) // byte rate 0
	huge := flac(1, 1<<35)                          // 2^35 s at 1 Hz: beyond the cap
	for name, in := range map[string][]byte{
		"empty": nil, "png": []byte("\x89PNG\r\n\x1a\n...."), "zero byte rate": forged, "huge claim": huge,
		"truncated wav": wav(1, false)[:30], "ogg garbage": []byte("OggS\x00\x00garbage"),
	} {
		if d, _, ok := Read(bytes.NewReader(in)); ok {
			t.Errorf("%s: read %v", name, d)
		}
	}
}

func FuzzRead(f *testing.F) {
	for _, s := range [][]byte{wav(0.1, false), flac(8000, 800), opus(48000), mp4(1000, 1000), mp3CBR(3, true), mp3CBR(3, false)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		d, _, ok := Read(bytes.NewReader(in))
		if ok && (d <= 0 || d > maxDuration) {
			t.Fatalf("duration %v out of range", d)
		}
	})
}

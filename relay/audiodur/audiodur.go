// Package audiodur reads how long an audio file plays from its headers, streaming: WAV (fmt + data chunks),
// FLAC (STREAMINFO), MP3 (Xing/Info/VBRI frame counts, else constant bitrate over the bytes), Ogg Opus and
// Vorbis (the last page's granule position) and MP4/M4A (moov/mvhd). It reads the file once from an
// io.Reader with a small buffer, skipping what it does not need, so a caller can tee an upload through it;
// it never seeks and never holds the file. A file it cannot read gives ok = false (the caller falls back to
// the upstream's reported duration or an estimate).
package audiodur

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"time"
)

// Format is the container a duration was read from.
type Format string

// Formats.
const (
	WAV  Format = "wav"
	FLAC Format = "flac"
	MP3  Format = "mp3"
	Ogg  Format = "ogg"
	MP4  Format = "mp4"
)

// maxDuration bounds what a header may claim (a forged header must not overflow a price): 100 hours.
const maxDuration = 100 * time.Hour

var errUnknown = errors.New("audiodur: unknown or malformed audio")

// Read reads the duration of the audio r holds. It may read r to the end (MP3 at a constant bitrate, Ogg)
// or stop early (WAV, FLAC, MP4 once the header is seen); the caller drains what is left.
func Read(r io.Reader) (d time.Duration, f Format, ok bool) {
	br := bufio.NewReaderSize(r, 16<<10)
	head, _ := br.Peek(12)
	var err error
	switch {
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WAVE":
		f = WAV
		d, err = readWAV(br)
	case len(head) >= 4 && string(head[:4]) == "fLaC":
		f = FLAC
		d, err = readFLAC(br)
	case len(head) >= 4 && string(head[:4]) == "OggS":
		f = Ogg
		d, err = readOgg(br)
	case len(head) >= 8 && string(head[4:8]) == "ftyp":
		f = MP4
		d, err = readMP4(br)
	case len(head) >= 3 && (string(head[:3]) == "ID3" || head[0] == 0xFF && head[1]&0xE0 == 0xE0):
		f = MP3
		d, err = readMP3(br)
	default:
		err = errUnknown
	}
	if err != nil || d <= 0 || d > maxDuration {
		return 0, f, false
	}
	return d, f, true
}

// skip discards n bytes.
func skip(br *bufio.Reader, n int64) error {
	if n < 0 {
		return errUnknown
	}
	got, err := io.CopyN(io.Discard, br, n)
	if got != n {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	return nil
}

// count discards the rest of br and says how many bytes it held.
func count(br *bufio.Reader) int64 {
	n, _ := io.Copy(io.Discard, br)
	return n
}

// ratio is num / den seconds as a duration, without overflow for the sizes headers can claim.
func ratio(num, den uint64) (time.Duration, error) {
	if den == 0 {
		return 0, errUnknown
	}
	secs := num / den
	if secs > uint64(maxDuration/time.Second) {
		return 0, errUnknown
	}
	frac := num % den
	return time.Duration(secs)*time.Second + time.Duration(frac*uint64(time.Second/time.Microsecond)/den)*time.Microsecond, nil
}

func readWAV(br *bufio.Reader) (time.Duration, error) {
	if err := skip(br, 12); err != nil {
		return 0, err
	}
	var byteRate uint32
	var hdr [8]byte
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return 0, errUnknown
		}
		size := int64(binary.LittleEndian.Uint32(hdr[4:]))
		switch string(hdr[:4]) {
		case "fmt ":
			if size < 16 || size > 1<<16 {
				return 0, errUnknown
			}
			b := make([]byte, size)
			if _, err := io.ReadFull(br, b); err != nil {
				return 0, errUnknown
			}
			byteRate = binary.LittleEndian.Uint32(b[8:12])
			size = 0
		case "data":
			if byteRate == 0 {
				return 0, errUnknown
			}
			n := uint64(size)
			if size == 0 || size == 0xFFFFFFFF { // a streamed WAV: the data runs to the end
				n = uint64(count(br))
			}
			return ratio(n, uint64(byteRate))
		}
		if err := skip(br, size+size&1); err != nil { // chunks are padded to an even size
			return 0, errUnknown
		}
	}
}

func readFLAC(br *bufio.Reader) (time.Duration, error) {
	var b [4 + 4 + 34]byte
	if _, err := io.ReadFull(br, b[:]); err != nil || b[4]&0x7F != 0 { // the first block is STREAMINFO
		return 0, errUnknown
	}
	si := b[8:]
	rate := uint64(si[10])<<12 | uint64(si[11])<<4 | uint64(si[12])>>4
	total := uint64(si[13]&0x0F)<<32 | uint64(binary.BigEndian.Uint32(si[14:18]))
	return ratio(total, rate)
}

func readOgg(br *bufio.Reader) (time.Duration, error) {
	var hdr [27]byte
	var seg [255]byte
	var rate, preSkip uint64
	var serial uint32
	var granule uint64
	first := true
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			break
		}
		if string(hdr[:4]) != "OggS" {
			return 0, errUnknown
		}
		n := int(hdr[26])
		if _, err := io.ReadFull(br, seg[:n]); err != nil {
			return 0, errUnknown
		}
		var body int64
		for _, s := range seg[:n] {
			body += int64(s)
		}
		ser := binary.LittleEndian.Uint32(hdr[14:18])
		if first {
			first, serial = false, ser
			id := make([]byte, min(body, 64))
			if _, err := io.ReadFull(br, id); err != nil {
				return 0, errUnknown
			}
			body -= int64(len(id))
			switch {
			case len(id) >= 19 && bytes.HasPrefix(id, []byte("OpusHead")):
				rate, preSkip = 48000, uint64(binary.LittleEndian.Uint16(id[10:12]))
			case len(id) >= 16 && bytes.HasPrefix(id, []byte("\x01vorbis")):
				rate = uint64(binary.LittleEndian.Uint32(id[12:16]))
			default:
				return 0, errUnknown
			}
		} else if g := binary.LittleEndian.Uint64(hdr[6:14]); ser == serial && g != ^uint64(0) {
			granule = g
		}
		if err := skip(br, body); err != nil {
			break
		}
	}
	if granule <= preSkip {
		return 0, errUnknown
	}
	return ratio(granule-preSkip, rate)
}

func readMP4(br *bufio.Reader) (time.Duration, error) {
	var hdr [8]byte
	for depth := 0; depth < 64; {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return 0, errUnknown
		}
		size, typ, used := int64(binary.BigEndian.Uint32(hdr[:4])), string(hdr[4:]), int64(8)
		if size == 1 {
			var big [8]byte
			if _, err := io.ReadFull(br, big[:]); err != nil {
				return 0, errUnknown
			}
			size, used = int64(binary.BigEndian.Uint64(big[:])), 16
		}
		switch {
		case typ == "moov":
			depth++
			continue // descend: its children follow
		case typ == "mvhd":
			var b [32]byte
			if _, err := io.ReadFull(br, b[:]); err != nil {
				return 0, errUnknown
			}
			if b[0] == 1 {
				return ratio(binary.BigEndian.Uint64(b[24:32]), uint64(binary.BigEndian.Uint32(b[20:24])))
			}
			return ratio(uint64(binary.BigEndian.Uint32(b[16:20])), uint64(binary.BigEndian.Uint32(b[12:16])))
		case size == 0:
			return 0, errUnknown // a box to the end with no mvhd before it
		}
		if size < used {
			return 0, errUnknown
		}
		if err := skip(br, size-used); err != nil {
			return 0, errUnknown
		}
	}
	return 0, errUnknown
}

// MPEG audio tables (Layer III): bitrates in kbit/s by version (1, or 2 and 2.5) and index; sample rates by
// version (1, 2, 2.5) and index.
var (
	mp3Bitrates = [2][16]uint64{
		{0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 0},
		{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 0},
	}
	mp3Rates = [3][4]uint64{{44100, 48000, 32000, 0}, {22050, 24000, 16000, 0}, {11025, 12000, 8000, 0}}
)

func readMP3(br *bufio.Reader) (time.Duration, error) {
	var n int64
	if h, _ := br.Peek(10); len(h) == 10 && string(h[:3]) == "ID3" {
		size := int64(h[6]&0x7F)<<21 | int64(h[7]&0x7F)<<14 | int64(h[8]&0x7F)<<7 | int64(h[9]&0x7F)
		if h[5]&0x10 != 0 {
			size += 10 // footer
		}
		if err := skip(br, 10+size); err != nil {
			return 0, errUnknown
		}
	}
	// The first frame header within 64 KiB.
	for ; ; n++ {
		if n > 64<<10 {
			return 0, errUnknown
		}
		h, err := br.Peek(4)
		if err != nil {
			return 0, errUnknown
		}
		if h[0] == 0xFF && h[1]&0xE0 == 0xE0 && h[1]&0x06 == 0x02 && h[2]&0xF0 != 0xF0 && h[2]&0xF0 != 0 && h[2]&0x0C != 0x0C {
			break
		}
		_, _ = br.Discard(1)
	}
	h, _ := br.Peek(4)
	ver := (h[1] >> 3) & 3 // 3: MPEG1, 2: MPEG2, 0: MPEG2.5
	if ver == 1 {
		return 0, errUnknown
	}
	vi, bi := 0, 0
	switch ver {
	case 2:
		vi, bi = 1, 1
	case 0:
		vi, bi = 2, 1
	}
	rate := mp3Rates[vi][(h[2]>>2)&3]
	bitrate := mp3Bitrates[bi][h[2]>>4] * 1000
	spf := uint64(1152)
	if ver != 3 {
		spf = 576
	}
	mono := h[3]>>6 == 3
	side := 32
	switch {
	case ver == 3 && mono:
		side = 17
	case ver != 3 && !mono:
		side = 17
	case ver != 3 && mono:
		side = 9
	}
	if frame, _ := br.Peek(4 + 36 + 18); len(frame) >= 4+side+12 {
		if x := frame[4+side:]; string(x[:4]) == "Xing" || string(x[:4]) == "Info" {
			if binary.BigEndian.Uint32(x[4:8])&1 != 0 {
				return ratio(uint64(binary.BigEndian.Uint32(x[8:12]))*spf, rate)
			}
		}
		if len(frame) >= 4+32+18 && string(frame[36:40]) == "VBRI" {
			return ratio(uint64(binary.BigEndian.Uint32(frame[50:54]))*spf, rate)
		}
	}
	// Constant bitrate: the audio bytes from the first frame to the end.
	return ratio(uint64(count(br))*8, bitrate)
}

package relay_test

// Done when: a 100 MB upload does not raise the process's RSS by more than 10 MB. The whole path runs in
// this process — the client streaming the upload, the gateway spooling and re-sending it, the fake upstream
// parsing and discarding it — so the peak RSS while it runs bounds what the gateway holds.

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"tollgate/app/apptest"
)

// patternReader yields n deterministic bytes without holding them.
type patternReader struct{ off, n int64 }

func (p *patternReader) Read(b []byte) (int, error) {
	if p.off >= p.n {
		return 0, io.EOF
	}
	b = b[:min(int64(len(b)), p.n-p.off)]
	for i := range b {
		b[i] = byte((p.off + int64(i)) * 7 % 253)
	}
	p.off += int64(len(b))
	return len(b), nil
}

// Not parallel: it measures the process, so it runs while no other test of the package does.
func TestMedia_100MBUploadRaisesRSSByLessThan10MB(t *testing.T) {
	apptest.SkipUnlessMemoryPass(t)
	m := newMediaWorld(t)
	if r := m.root.Do("PUT", "/api/admin/settings", map[string]any{"uploads": map[string]any{"image_mb": 50, "audio_mb": 200}}); r.Status != http.StatusOK {
		t.Fatalf("settings: %d %s", r.Status, r.Body)
	}
	const size = 100 << 20
	// A WAV whose header says what follows: 100 MB of 16 kHz mono PCM, 3,276.8 s.
	var hdr bytes.Buffer
	le := func(v any) { _ = binary.Write(&hdr, binary.LittleEndian, v) }
	hdr.WriteString("RIFF")
	le(uint32(36 + size))
	hdr.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(16000), uint32(32000), uint16(2), uint16(16)} {
		le(v)
	}
	hdr.WriteString("data")
	le(uint32(size))
	head := "--b0undary\r\nContent-Disposition: form-data; name=\"file\"; filename=\"long.wav\"\r\nContent-Type: audio/wav\r\n\r\n"
	tail := "\r\n--b0undary\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n--b0undary--\r\n"
	sum := sha256.New()
	_, _ = sum.Write(hdr.Bytes())
	_, _ = io.Copy(sum, &patternReader{n: size})
	wantSHA := hex.EncodeToString(sum.Sum(nil))
	fileLen := int64(hdr.Len()) + size

	// A warm-up upload so the first request's one-time costs (connections, code paths) are not counted.
	m.multipart("/v1/audio/transcriptions", newReqID("warm"), map[string]string{"model": "whisper-1"}, "file", "a.wav", wavFile(1))

	base, rise := apptest.RSSRise(t)

	body := io.MultiReader(strings.NewReader(head), bytes.NewReader(hdr.Bytes()), &patternReader{n: size}, strings.NewReader(tail))
	req, _ := http.NewRequest("POST", m.node.URL+"/v1/audio/transcriptions", body)
	req.ContentLength = int64(len(head)) + fileLen + int64(len(tail))
	req.Header.Set("Authorization", "Bearer "+m.key.Key)
	req.Header.Set("Content-Type", "multipart/form-data; boundary=b0undary")
	id := newReqID("big")
	req.Header.Set("X-Request-Id", id)
	began := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	took := time.Since(began)
	grew := rise()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("upload: %d %s", resp.StatusCode, answer)
	}
	t.Logf("100 MB upload in %v: RSS %d KiB before, +%.1f MB at the peak", took.Round(time.Millisecond), base, float64(grew)/1024)
	if grew > 10*1024 {
		t.Fatalf("RSS rose by %.1f MB during a 100 MB upload, want ≤ 10 MB", float64(grew)/1024)
	}
	last, _ := m.up.Last()
	f, _ := last.Part("file")
	if f.Size != fileLen || f.SHA256 != wantSHA {
		t.Fatalf("upstream got %d bytes sha %s, want %d sha %s", f.Size, f.SHA256, fileLen, wantSHA)
	}
	// Billed for the header's 3,276.8 s at 0.006 USD a minute: 0.32768 USD = 327,680 units.
	wantCost(t, m.logOf(id), "audio.transcriptions", 327_680)
}

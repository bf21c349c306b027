package relay_test

// Done when (issue 16, media): through recording fakes and the official openai SDK, images.generate({n: 2})
// at 0.04 USD per image → 80,000 units; an images.edit upload of a PNG arrives byte-identical; a 3.0 s WAV
// transcription at 0.006 USD per minute → 300 units; speech of 1,000 characters at 15 USD per 1M characters →
// 15,000 units with the audio reaching the client unchanged as it streams; one rerank search at 2 USD per
// 1,000 → 2,000 units; moderations work unmodified.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"tollgate/model"
	"tollgate/relay/relaytest"
)

// mediaWorld is a node with an openai channel for images, audio and moderations and an openai-compatible
// channel for rerank, both on one recording fake, priced per image, minute, character and search.
type mediaWorld struct {
	*world
	up    *relaytest.Upstream
	key   apiKey
	alice *person
}

var mediaModels = []string{"dall-e-2", "gpt-image-1", "whisper-1", "tts-1", "omni-moderation-latest", "text-moderation-latest"}

func newMediaWorld(t *testing.T, opts ...relaytest.Option) *mediaWorld {
	t.Helper()
	w := newWorld(t)
	m := &mediaWorld{world: w, up: fake(t, opts...)}
	oa := openaiChannel(m.up)
	oa.Models = mediaModels
	w.channel(oa)
	w.channel(chanSpec{Type: "openai-compatible", Name: "rerank", BaseURL: m.up.URL, Keys: []string{"jina-key"}, Models: []string{"rerank-v3"}})
	m.price(nil)
	m.alice = w.user("alice", 10_000_000)
	m.key = w.key(m.alice, nil)
	return m
}

// price replaces the price table with the media prices (and extra rows).
func (m *mediaWorld) price(extra []map[string]any) {
	rows := []map[string]any{
		{"model": "dall-e-2", "per_image": "0.04", "per_image_by_size": map[string]string{"1024x1792/hd": "0.12"}},
		{"model": "gpt-image-1", "per_image": "0.01", "input": "5", "output": "40"},
		{"model": "whisper-1", "per_audio_minute": "0.006"},
		{"model": "tts-1", "per_1m_chars": "15"},
		{"model": "rerank-v3", "per_1k_searches": "2"},
		{"model": "omni-moderation-latest", "per_call": "0.0001"},
		{"model": "text-moderation-latest", "input": "1000"},
	}
	r := m.root.Do("PUT", "/api/admin/pricing", append(rows, extra...))
	if r.Status != http.StatusOK {
		m.t.Fatalf("pricing: %d %s", r.Status, r.Body)
	}
}

func (m *mediaWorld) client(reqID string) *openai.Client {
	c := openai.NewClient(option.WithBaseURL(m.node.URL+"/v1"), option.WithAPIKey(m.key.Key), option.WithMaxRetries(0),
		option.WithHeader("X-Request-Id", reqID))
	return &c
}

// wantCost checks a media row: success, its cost, the key's and the user's durable books moved by it.
func wantCost(t *testing.T, l model.UsageLog, endpoint string, cost int64) {
	t.Helper()
	if l.Status != "success" || l.Cost != cost || l.Endpoint != endpoint {
		t.Fatalf("log = %s %s cost %d (%s), want success %s cost %d", l.Status, l.Endpoint, l.Cost, l.Error, endpoint, cost)
	}
}

// wavFile is a PCM WAV of secs seconds (mono, 16 kHz, 16-bit).
func wavFile(secs float64) []byte {
	data := make([]byte, int(secs*32000))
	var b bytes.Buffer
	le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(36 + len(data)))
	b.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(16000), uint32(32000), uint16(2), uint16(16)} {
		le(v)
	}
	b.WriteString("data")
	le(uint32(len(data)))
	b.Write(data)
	return b.Bytes()
}

// pngFile is a PNG signature and header followed by n random bytes: every byte must arrive as sent.
func pngFile(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return append(append([]byte(nil), relaytest.PNG[:33]...), b...)
}

func TestMedia_SDKImagesGenerateTwoAtFourCentsBills80000Units(t *testing.T) {
	t.Parallel()
	m := newMediaWorld(t)
	id := newReqID("img-gen")
	res, err := m.client(id).Images.Generate(context.Background(), openai.ImageGenerateParams{
		Model: "dall-e-2", Prompt: "a lighthouse", N: openai.Int(2), ResponseFormat: openai.ImageGenerateParamsResponseFormatB64JSON})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Data) != 2 {
		t.Fatalf("images = %d", len(res.Data))
	}
	if png, _ := base64.StdEncoding.DecodeString(res.Data[0].B64JSON); !bytes.Equal(png, relaytest.PNG) {
		t.Fatal("the image is not the upstream's")
	}
	l := m.logOf(id)
	wantCost(t, l, "images.generations", 80_000)
	if p := l.Price.V; p.Images != 2 || p.PerImage != "0.04" {
		t.Fatalf("breakdown = %+v", p)
	}
	last, _ := m.up.Last()
	if last.Path != "/v1/images/generations" || last.Get("n").Int() != 2 || last.Key != "sk-upstream-openai-0001" {
		t.Fatalf("upstream got %s %s", last.Path, last.Body)
	}
	// A size and quality with a price of their own; tokens of a token-billed image model add to the image.
	id = newReqID("img-hd")
	a := m.call("POST", "/v1/images/generations", m.key.Key, map[string]any{"model": "dall-e-2", "prompt": "x", "size": "1024x1792", "quality": "hd"}, "X-Request-Id", id)
	if a.status != http.StatusOK {
		t.Fatalf("hd: %d %s", a.status, a.body)
	}
	wantCost(t, m.logOf(id), "images.generations", 120_000)
	id = newReqID("img-tokens")
	if a := m.call("POST", "/v1/images/generations", m.key.Key, map[string]any{"model": "gpt-image-1", "prompt": "x"}, "X-Request-Id", id); a.status != http.StatusOK {
		t.Fatalf("gpt-image-1: %d %s", a.status, a.body)
	}
	// 1 image × 0.01 USD + 10 input × 5 + 20 output × 40 per 1M.
	wantCost(t, m.logOf(id), "images.generations", 10_000+50+800)
}

func TestMedia_SDKImageEditUploadArrivesByteIdentical(t *testing.T) {
	t.Parallel()
	m := newMediaWorld(t)
	png := pngFile(300 << 10)
	id := newReqID("img-edit")
	res, err := m.client(id).Images.Edit(context.Background(), openai.ImageEditParams{
		Image:  openai.ImageEditParamsImageUnion{OfFile: openai.File(bytes.NewReader(png), "cat.png", "image/png")},
		Prompt: "add a hat", Model: "dall-e-2", N: openai.Int(1), Size: openai.ImageEditParamsSize1024x1024})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Data) != 1 {
		t.Fatalf("images = %d", len(res.Data))
	}
	last, _ := m.up.Last()
	img, ok := last.Part("image")
	if last.Path != "/v1/images/edits" || !ok || !bytes.Equal(img.Data, png) || img.FileName != "cat.png" || img.ContentType != "image/png" {
		t.Fatalf("upstream got %s part %q %q %d bytes, identical %v", last.Path, img.FileName, img.ContentType, img.Size, bytes.Equal(img.Data, png))
	}
	if p, _ := last.Part("prompt"); string(p.Data) != "add a hat" || last.Model != "dall-e-2" {
		t.Fatalf("fields: prompt %q model %q", p.Data, last.Model)
	}
	wantCost(t, m.logOf(id), "images.edits", 40_000)
}

func TestMedia_SDKTranscriptionOfThreeSecondWAVBills300Units(t *testing.T) {
	t.Parallel()
	m := newMediaWorld(t, relaytest.WithAudioSeconds(4.5))
	wav := wavFile(3.0)
	id := newReqID("stt")
	res, err := m.client(id).Audio.Transcriptions.New(context.Background(), openai.AudioTranscriptionNewParams{
		File: openai.File(bytes.NewReader(wav), "note.wav", "audio/wav"), Model: openai.AudioModelWhisper1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != relaytest.DefaultText {
		t.Fatalf("text = %q", res.Text)
	}
	// json has no duration: the WAV header's 3.0 s, at 0.006 USD a minute.
	l := m.logOf(id)
	wantCost(t, l, "audio.transcriptions", 300)
	if l.Price.V.AudioSeconds != "3" || l.UsageEstimated {
		t.Fatalf("breakdown = %+v estimated %v", l.Price.V, l.UsageEstimated)
	}
	last, _ := m.up.Last()
	if f, _ := last.Part("file"); !bytes.Equal(f.Data, wav) {
		t.Fatal("the WAV did not arrive byte-identical")
	}
	// verbose_json reports the upstream's own duration, which is what it bills: 4.5 s → 450 units.
	id = newReqID("stt-verbose")
	if _, err := m.client(id).Audio.Transcriptions.New(context.Background(), openai.AudioTranscriptionNewParams{
		File: openai.File(bytes.NewReader(wav), "note.wav", "audio/wav"), Model: openai.AudioModelWhisper1,
		ResponseFormat: openai.AudioResponseFormatVerboseJSON}); err != nil {
		t.Fatal(err)
	}
	wantCost(t, m.logOf(id), "audio.transcriptions", 450)
	// A text answer passes through as text; translations bill the same way.
	id = newReqID("stt-text")
	a := m.multipart("/v1/audio/translations", id, map[string]string{"model": "whisper-1", "response_format": "text"}, "file", "note.wav", wav)
	if a.status != http.StatusOK || a.header.Get("Content-Type") != "text/plain; charset=utf-8" || string(a.body) != relaytest.DefaultText+"\n" {
		t.Fatalf("text answer: %d %q %q", a.status, a.header.Get("Content-Type"), a.body)
	}
	wantCost(t, m.logOf(id), "audio.translations", 300)
}

func TestMedia_SDKSpeechOf1000CharsBills15000UnitsAndStreamsUnchanged(t *testing.T) {
	t.Parallel()
	const chunks, delay = 5, 150 * time.Millisecond
	m := newMediaWorld(t, relaytest.WithChunks(chunks), relaytest.WithChunkDelay(delay))
	input := string([]rune(strings.Repeat("héllo wörld ", 100))[:1000]) // 1,000 characters, more bytes
	id := newReqID("tts")
	start := time.Now()
	resp, err := m.client(id).Audio.Speech.New(context.Background(), openai.AudioSpeechNewParams{Model: openai.SpeechModelTTS1, Input: input, Voice: openai.AudioSpeechNewParamsVoiceUnion{OfString: openai.String("alloy")}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make([]byte, 4096)
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		t.Fatal(err)
	}
	firstAt := time.Since(start)
	rest, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	total := time.Since(start)
	want := bytes.Join(relaytest.SpeechAudio(input, chunks), nil)
	if got := append(first, rest...); !bytes.Equal(got, want) || resp.Header.Get("Content-Type") != "audio/mpeg" {
		t.Fatalf("audio: %d bytes (%s), want %d identical", len(got), resp.Header.Get("Content-Type"), len(want))
	}
	// Streamed as it arrives: the first chunk is here long before the upstream sent the last one.
	if firstAt > total-2*delay {
		t.Fatalf("first chunk after %v of %v: buffered", firstAt, total)
	}
	wantCost(t, m.logOf(id), "audio.speech", 15_000)
}

func TestMedia_RerankOneSearchBills2000Units(t *testing.T) {
	t.Parallel()
	m := newMediaWorld(t)
	id := newReqID("rerank")
	a := m.call("POST", "/v1/rerank", m.key.Key, map[string]any{"model": "rerank-v3", "query": "capital of France",
		"documents": []string{"Paris", "Berlin", "Rome"}, "top_n": 2}, "X-Request-Id", id)
	if a.status != http.StatusOK {
		t.Fatalf("rerank: %d %s", a.status, a.body)
	}
	if got := a.M(t)["results"].([]any); len(got) != 2 {
		t.Fatalf("results = %v", got)
	}
	l := m.logOf(id)
	wantCost(t, l, "rerank", 2_000)
	if l.Price.V.Searches != 1 || l.Price.V.Per1KSearches != "2" {
		t.Fatalf("breakdown = %+v", l.Price.V)
	}
	last, _ := m.up.Last()
	if last.Path != "/v1/rerank" || last.Key != "jina-key" {
		t.Fatalf("upstream got %s with %s", last.Path, last.Key)
	}
}

func TestMedia_SDKModerations(t *testing.T) {
	t.Parallel()
	m := newMediaWorld(t)
	id := newReqID("mod")
	res, err := m.client(id).Moderations.New(context.Background(), openai.ModerationNewParams{Model: "omni-moderation-latest",
		Input: openai.ModerationNewParamsInputUnion{OfStringArray: []string{"hello", "world"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 2 || res.Results[0].Flagged {
		t.Fatalf("results = %+v", res.Results)
	}
	wantCost(t, m.logOf(id), "moderations", 100)
	// Priced by tokens, which moderation answers do not report: the input is counted locally.
	id = newReqID("mod-tokens")
	if a := m.call("POST", "/v1/moderations", m.key.Key, map[string]any{"model": "text-moderation-latest", "input": "hello world"}, "X-Request-Id", id); a.status != http.StatusOK {
		t.Fatalf("moderation: %d %s", a.status, a.body)
	}
	if l := m.logOf(id); l.Status != "success" || l.PromptTokens != 2 || l.Cost != 2000 || !l.UsageEstimated {
		t.Fatalf("token-priced moderation: %s tokens %d cost %d estimated %v", l.Status, l.PromptTokens, l.Cost, l.UsageEstimated)
	}
}

// multipart sends a hand-written upload: fields, then one file part.
func (m *mediaWorld) multipart(path, reqID string, fields map[string]string, fileField, fileName string, file []byte) *answer {
	m.t.Helper()
	var b bytes.Buffer
	for k, v := range fields {
		b.WriteString("--XyZ\r\nContent-Disposition: form-data; name=\"" + k + "\"\r\n\r\n" + v + "\r\n")
	}
	if fileField != "" {
		b.WriteString("--XyZ\r\nContent-Disposition: form-data; name=\"" + fileField + "\"; filename=\"" + fileName + "\"\r\nContent-Type: application/octet-stream\r\n\r\n")
		b.Write(file)
		b.WriteString("\r\n")
	}
	b.WriteString("--XyZ--\r\n")
	return m.raw(path, reqID, "multipart/form-data; boundary=XyZ", b.Bytes())
}

// raw posts body as it is with a content type.
func (m *mediaWorld) raw(path, reqID, ct string, body []byte) *answer {
	m.t.Helper()
	return m.call("POST", path, m.key.Key, body, "Content-Type", ct, "X-Request-Id", reqID)
}

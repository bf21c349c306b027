package relaytest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// MaxPartKept is the largest uploaded part whose bytes a Request keeps (Part.Data); bigger parts keep only
// their size and SHA-256, so a test can stream a 100 MB upload through the fake without it holding the bytes.
const MaxPartKept = 1 << 20

// DefaultAudioSeconds is the duration the fake reports in verbose_json transcriptions.
const DefaultAudioSeconds = 3.0

// Part is one part of a multipart upload the fake received.
type Part struct {
	Name, FileName, ContentType string
	Size                        int64
	SHA256                      string // hex
	Data                        []byte // the bytes, when Size ≤ MaxPartKept
}

// uploadPaths are the multipart endpoints: the fake streams them instead of reading them whole.
var uploadPaths = map[string]bool{"/v1/images/edits": true, "/v1/images/variations": true,
	"/v1/audio/transcriptions": true, "/v1/audio/translations": true}

// readUpload reads a multipart body part by part (hashing, keeping small parts), as OpenAI's API would
// parse it; the form's fields come back by name.
func readUpload(r *http.Request) ([]Part, map[string]string, error) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return nil, nil, errors.New("Content-Type must be multipart/form-data")
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	var parts []Part
	fields := map[string]string{}
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return parts, fields, nil
		}
		if err != nil {
			return nil, nil, err
		}
		pt := Part{Name: p.FormName(), FileName: p.FileName(), ContentType: p.Header.Get("Content-Type")}
		h := sha256.New()
		keep := &capped{limit: MaxPartKept}
		n, err := io.Copy(io.MultiWriter(h, keep), p)
		if err != nil {
			return nil, nil, err
		}
		pt.Size, pt.SHA256 = n, hex.EncodeToString(h.Sum(nil))
		if n <= MaxPartKept {
			pt.Data = keep.b
		}
		if pt.FileName == "" && n <= 4096 {
			fields[pt.Name] = string(keep.b)
		}
		parts = append(parts, pt)
	}
}

// capped keeps the first limit bytes written to it.
type capped struct {
	b     []byte
	limit int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.limit + 1 - len(c.b); room > 0 {
		c.b = append(c.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// Part returns the recorded part named name (the first one), if any.
func (r Request) Part(name string) (Part, bool) {
	for _, p := range r.Parts {
		if p.Name == name {
			return p, true
		}
	}
	return Part{}, false
}

// SpeechAudio is the audio the fake's /v1/audio/speech answers for input: chunks pieces of 4 KiB of
// deterministic bytes (an ID3 tag first), so a test can check what reached the client byte for byte.
func SpeechAudio(input string, chunks int) [][]byte {
	out := make([][]byte, max(chunks, 1))
	seed := len(input)
	for i := range out {
		b := make([]byte, 4096)
		for j := range b {
			b[j] = byte((seed + i*4096 + j*31) % 251)
		}
		out[i] = b
	}
	copy(out[0], "ID3\x04\x00")
	return out
}

// PNG is a 1×1 transparent PNG, the image the fake's image endpoints return (as b64_json or behind a url).
var PNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89" +
	"\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

// images answers generations, edits and variations: n images as b64_json (or url when asked).
func (c *call) images() {
	n := 1
	format := ""
	if c.form != nil {
		if v, err := strconv.Atoi(c.form["n"]); err == nil {
			n = v
		}
		format = c.form["response_format"]
	} else {
		if v := gjson.GetBytes(c.body, "n").Int(); v > 0 {
			n = int(v)
		}
		format = gjson.GetBytes(c.body, "response_format").String()
	}
	data := make([]map[string]any, max(min(n, 10), 1))
	for i := range data {
		if format == "url" {
			data[i] = map[string]any{"url": "https://relaytest.invalid/images/" + strconv.Itoa(c.seq) + "-" + strconv.Itoa(i) + ".png"}
		} else {
			data[i] = map[string]any{"b64_json": base64.StdEncoding.EncodeToString(PNG), "revised_prompt": "a test image"}
		}
	}
	body := map[string]any{"created": c.created, "data": data}
	if c.b.usage && strings.HasPrefix(c.model, "gpt-image") {
		body["usage"] = map[string]any{"input_tokens": c.b.promptTokens, "output_tokens": c.b.completionTokens,
			"total_tokens": c.b.promptTokens + c.b.completionTokens, "input_tokens_details": map[string]any{"text_tokens": c.b.promptTokens, "image_tokens": 0}}
	}
	c.answerValue(body)
}

// transcription answers transcriptions and translations in the asked response_format.
func (c *call) transcription() {
	text := c.b.text
	switch c.form["response_format"] {
	case "text":
		c.answerText("text/plain; charset=utf-8", text+"\n")
	case "srt":
		c.answerText("application/x-subrip", "1\n00:00:00,000 --> 00:00:03,000\n"+text+"\n")
	case "vtt":
		c.answerText("text/vtt", "WEBVTT\n\n00:00:00.000 --> 00:00:03.000\n"+text+"\n")
	case "verbose_json":
		c.answerValue(map[string]any{"task": "transcribe", "language": "english", "duration": c.b.audioSeconds, "text": text,
			"segments": []map[string]any{{"id": 0, "seek": 0, "start": 0.0, "end": c.b.audioSeconds, "text": text}}})
	default:
		c.answerValue(map[string]any{"text": text})
	}
}

// speech answers audio/mpeg bytes in the configured chunks, flushed one by one with the chunk delay.
func (c *call) speech() {
	input := gjson.GetBytes(c.body, "input").String()
	if !utf8.ValidString(input) || input == "" {
		c.plainError(http.StatusBadRequest, "[{'type': 'string_too_short', 'loc': ('body', 'input')}]")
		return
	}
	h := c.w.Header()
	h.Set("Content-Type", "audio/mpeg")
	c.setIDHeaders()
	c.w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(c.w)
	if !c.pause(c.b.firstChunkDelay) {
		return
	}
	f := c.b.fault
	for i, chunk := range SpeechAudio(input, c.b.chunks) {
		if f != nil && i == f.AfterChunks && (f.Kind == FaultReset || f.Kind == FaultHang) {
			if f.Kind == FaultReset {
				resetConn(c.w)
			} else {
				c.hang()
			}
			return
		}
		if i > 0 && !c.pause(c.b.chunkDelay) {
			return
		}
		if _, err := c.w.Write(chunk); err != nil || rc.Flush() != nil {
			return
		}
	}
}

// rerank answers Cohere's shape (Jina's is the same plus usage): results by relevance, top_n of them, and
// the search units billed.
func (c *call) rerank() {
	docs := gjson.GetBytes(c.body, "documents").Array()
	if gjson.GetBytes(c.body, "query").String() == "" || len(docs) == 0 {
		c.plainError(http.StatusBadRequest, "query and documents are required")
		return
	}
	top := int(gjson.GetBytes(c.body, "top_n").Int())
	if top <= 0 || top > len(docs) {
		top = len(docs)
	}
	results := make([]map[string]any, top)
	for i := range results {
		results[i] = map[string]any{"index": i, "relevance_score": 1 / float64(i+2)}
	}
	units := (len(docs) + 99) / 100
	c.answerValue(map[string]any{"id": "rerank-" + strconv.Itoa(c.seq), "results": results,
		"meta": map[string]any{"api_version": map[string]any{"version": "2"}, "billed_units": map[string]any{"search_units": units}}})
}

// moderations answers one result per input, none flagged.
func (c *call) moderations() {
	in := gjson.GetBytes(c.body, "input")
	n := 1
	if in.IsArray() {
		n = max(len(in.Array()), 1)
	}
	cats := map[string]any{}
	scores := map[string]any{}
	for _, k := range []string{"harassment", "harassment/threatening", "hate", "hate/threatening", "illicit", "illicit/violent",
		"self-harm", "self-harm/instructions", "self-harm/intent", "sexual", "sexual/minors", "violence", "violence/graphic"} {
		cats[k], scores[k] = false, 0.0001
	}
	results := make([]map[string]any, n)
	for i := range results {
		results[i] = map[string]any{"flagged": false, "categories": cats, "category_scores": scores, "category_applied_input_types": map[string]any{}}
	}
	c.answerValue(map[string]any{"id": "modr-" + strconv.Itoa(c.seq), "model": c.model, "results": results})
}

func (c *call) answerValue(v any) {
	b, _ := json.Marshal(v)
	c.answer(b)
}

// answerText sends a non-JSON text answer.
func (c *call) answerText(ct, text string) {
	if !c.pause(c.b.firstChunkDelay) {
		return
	}
	c.w.Header().Set("Content-Type", ct)
	c.setIDHeaders()
	c.w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(c.w, text)
}

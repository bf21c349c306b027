package relay_test

// Hostile and failing uploads: every refusal is an OpenAI-shaped error before any upstream call or charge;
// an upload the first channel fails is re-sent byte for byte to the next; spools never outlive their request.

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tollgate/app/apptest"
	"tollgate/relay/relaytest"
)

func TestMedia_BadUploadsAndBodiesGetOpenAIErrorsAndCostNothing(t *testing.T) {
	t.Parallel()
	var dataDir string
	w := newWorld(t, func(e *apptest.Env) { dataDir = e.Cfg.DataDir })
	m := &mediaWorld{world: w, up: fake(t)}
	oa := openaiChannel(m.up)
	oa.Models = mediaModels
	w.channel(oa)
	m.price(nil)
	m.alice = w.user("alice", 10_000_000)
	m.key = w.key(m.alice, nil)
	if r := w.root.Do("PUT", "/api/admin/settings", map[string]any{"uploads": map[string]any{"image_mb": 1, "audio_mb": 1}}); r.Status != http.StatusOK {
		t.Fatalf("settings: %d %s", r.Status, r.Body)
	}
	if r := w.root.Do("PUT", "/api/admin/settings", map[string]any{"uploads": map[string]any{"image_mb": 0, "audio_mb": 1}}); r.Status != http.StatusBadRequest {
		t.Fatalf("a zero limit: %d %s", r.Status, r.Body)
	}
	big := wavFile(40) // 1.28 MB > 1 MiB
	stt := map[string]string{"model": "whisper-1"}
	wav := wavFile(1)
	cases := []struct {
		name   string
		send   func(id string) *answer
		status int
		code   string
	}{
		{"upload over the limit, length known", func(id string) *answer {
			return m.multipart("/v1/audio/transcriptions", id, stt, "file", "a.wav", big)
		}, http.StatusRequestEntityTooLarge, "body_too_large"},
		{"upload over the limit, chunked", func(id string) *answer {
			var b bytes.Buffer
			b.WriteString("--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\n\r\n")
			b.Write(big)
			b.WriteString("\r\n--XyZ--\r\n")
			return m.call("POST", "/v1/audio/transcriptions", m.key.Key, io.MultiReader(&b), "Content-Type", "multipart/form-data; boundary=XyZ", "X-Request-Id", id)
		}, http.StatusRequestEntityTooLarge, "body_too_large"},
		{"not multipart", func(id string) *answer {
			return m.raw("/v1/audio/transcriptions", id, "application/json", []byte(`{"model":"whisper-1"}`))
		}, http.StatusBadRequest, "upload_invalid"},
		{"cut inside a part", func(id string) *answer {
			return m.raw("/v1/images/edits", id, "multipart/form-data; boundary=XyZ", []byte("--XyZ\r\nContent-Disposition: form-data; name=\"image\"; filename=\"a.png\"\r\n\r\nabc"))
		}, http.StatusBadRequest, "upload_invalid"},
		{"model twice", func(id string) *answer {
			b := "--XyZ\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n--XyZ\r\nContent-Disposition: form-data; name=\"MODEL\"\r\n\r\ntts-1\r\n--XyZ--\r\n"
			return m.raw("/v1/audio/transcriptions", id, "multipart/form-data; boundary=XyZ", []byte(b))
		}, http.StatusBadRequest, "duplicate_key"},
		{"a second model smuggled as a file part", func(id string) *answer {
			b := "--XyZ\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n--XyZ\r\nContent-Disposition: form-data; name=\"Model\"; filename=\"m\"\r\n\r\ngpt-4o-transcribe\r\n--XyZ--\r\n"
			return m.raw("/v1/audio/transcriptions", id, "multipart/form-data; boundary=XyZ", []byte(b))
		}, http.StatusBadRequest, "duplicate_key"},
		{"image size twice in different case", func(id string) *answer {
			return m.call("POST", "/v1/images/generations", m.key.Key, `{"model":"dall-e-2","prompt":"x","size":"256x256","SIZE":"1024x1792"}`, "X-Request-Id", id)
		}, http.StatusBadRequest, "duplicate_key"},
		{"no file", func(id string) *answer {
			return m.multipart("/v1/audio/transcriptions", id, stt, "", "", nil)
		}, http.StatusBadRequest, "validation_failed"},
		{"no model", func(id string) *answer {
			return m.multipart("/v1/audio/transcriptions", id, map[string]string{"language": "en"}, "file", "a.wav", wav)
		}, http.StatusBadRequest, "model_required"},
		{"a field too long", func(id string) *answer {
			return m.multipart("/v1/images/edits", id, map[string]string{"model": "dall-e-2", "size": strings.Repeat("9", 2000)}, "image", "a.png", pngFile(10))
		}, http.StatusBadRequest, "validation_failed"},
		{"n not a number in an upload", func(id string) *answer {
			return m.multipart("/v1/images/edits", id, map[string]string{"model": "dall-e-2", "n": "lots"}, "image", "a.png", pngFile(10))
		}, http.StatusBadRequest, "validation_failed"},
		{"n = 11 images", func(id string) *answer {
			return m.call("POST", "/v1/images/generations", m.key.Key, map[string]any{"model": "dall-e-2", "prompt": "x", "n": 11}, "X-Request-Id", id)
		}, http.StatusBadRequest, "validation_failed"},
		{"speech without input", func(id string) *answer {
			return m.call("POST", "/v1/audio/speech", m.key.Key, map[string]any{"model": "tts-1", "voice": "alloy"}, "X-Request-Id", id)
		}, http.StatusBadRequest, "validation_failed"},
		{"images with a duplicated n", func(id string) *answer {
			return m.call("POST", "/v1/images/generations", m.key.Key, `{"model":"dall-e-2","prompt":"x","n":1,"n":10}`, "X-Request-Id", id)
		}, http.StatusBadRequest, "duplicate_key"},
		{"rerank on a channel type without it", func(id string) *answer {
			return m.call("POST", "/v1/rerank", m.key.Key, map[string]any{"model": "dall-e-2", "query": "q", "documents": []string{"a"}}, "X-Request-Id", id)
		}, http.StatusNotFound, "model_wrong_endpoint"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			openAIErr(t, tc.send(newReqID("bad")), tc.status, tc.code)
		})
	}
	if n := m.up.Count(); n != 0 {
		t.Fatalf("the upstream got %d requests", n)
	}
	if got := w.liveBalance(m.alice.id); got != 10_000_000 {
		t.Fatalf("balance = %d", got)
	}
	// The refused uploads left no spool behind.
	left, _ := filepath.Glob(filepath.Join(dataDir, "uploads", "*"))
	if len(left) != 0 {
		t.Fatalf("spool files left: %v", left)
	}
}

func TestMedia_UploadFailedOnOneChannelIsResentByteForByteToTheNext(t *testing.T) {
	t.Parallel()
	var dataDir string
	w := newWorld(t, func(e *apptest.Env) { dataDir = e.Cfg.DataDir })
	bad := fake(t, relaytest.Fail(relaytest.ServerError()))
	good := fake(t)
	first := openaiChannel(bad)
	first.Models, first.Priority = []string{"whisper-1"}, 10
	second := openaiChannel(good)
	second.Models, second.ModelMapping = []string{"whisper-1"}, map[string]string{"whisper-1": "whisper-large-v3"}
	w.channel(first)
	w.channel(second)
	m := &mediaWorld{world: w, up: good}
	m.price(nil)
	m.alice = w.user("alice", 10_000_000)
	m.key = w.key(m.alice, nil)
	wav := wavFile(3.0)
	id := newReqID("retry")
	a := m.multipart("/v1/audio/transcriptions", id, map[string]string{"model": "whisper-1", "language": "en"}, "file", "a.wav", wav)
	if a.status != http.StatusOK {
		t.Fatalf("transcription: %d %s", a.status, a.body)
	}
	if bad.Count() != 1 || good.Count() != 1 {
		t.Fatalf("attempts: %d on the failing channel, %d on the next", bad.Count(), good.Count())
	}
	for _, up := range []*relaytest.Upstream{bad, good} {
		r, _ := up.Last()
		f, _ := r.Part("file")
		lang, _ := r.Part("language")
		if !bytes.Equal(f.Data, wav) || string(lang.Data) != "en" {
			t.Fatalf("%s: the upload did not arrive whole (%d bytes, language %q)", up.URL, f.Size, lang.Data)
		}
	}
	if r, _ := good.Last(); r.Model != "whisper-large-v3" {
		t.Fatalf("mapped model = %q", r.Model)
	}
	l := m.logOf(id)
	wantCost(t, l, "audio.transcriptions", 300)
	if len(l.Attempts.V) != 2 {
		t.Fatalf("attempts = %+v", l.Attempts.V)
	}
	if left, _ := filepath.Glob(filepath.Join(dataDir, "uploads", "*")); len(left) != 0 {
		t.Fatalf("spool files left: %v", left)
	}
	_ = os.Getpid
}

// A channel test of a moderation, rerank, embedding or speech model calls that model's own endpoint (a chat
// call would fail and count against a healthy channel); speech passes on audio bytes, not JSON.
func TestMedia_ChannelTestsCallTheModelsOwnEndpoint(t *testing.T) {
	t.Parallel()
	m := newMediaWorld(t)
	oaID := m.channelID("openai", m.up.URL, []string{"tts-1", "omni-moderation-latest", "text-embedding-3-small"})
	rrID := m.channelID("openai-compatible", m.up.URL, []string{"bge-reranker-v2"})
	for _, tc := range []struct {
		id    int64
		model string
		path  string
	}{
		{oaID, "tts-1", "/v1/audio/speech"}, {oaID, "omni-moderation-latest", "/v1/moderations"},
		{oaID, "text-embedding-3-small", "/v1/embeddings"}, {rrID, "bge-reranker-v2", "/v1/rerank"},
	} {
		res := m.root.Do("POST", fmt.Sprintf("/api/admin/channels/%d/test", tc.id), map[string]any{"model": tc.model})
		if res.Status != http.StatusOK || !strings.Contains(string(res.Body), `"ok":true`) {
			t.Fatalf("%s: %d %s", tc.model, res.Status, res.Body)
		}
		if last, _ := m.up.Last(); last.Path != tc.path || last.Model != tc.model {
			t.Fatalf("%s: the test called %s", tc.model, last.Path)
		}
	}
}

// channelID creates a channel of typ on url serving models.
func (m *mediaWorld) channelID(typ, url string, models []string) int64 {
	return m.channel(chanSpec{Type: typ, Name: fmt.Sprintf("%s-%d", typ, chanSeq.Add(1)), BaseURL: url, Keys: []string{"sk-test-0"}, Models: models})
}

package adaptor_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"tollgate/relay/adaptor"
	"tollgate/relay/adaptor/anthropic"
	"tollgate/relay/adaptor/openai"
)

func TestJoinURL_DoesNotDoubleV1(t *testing.T) {
	cases := map[[2]string]string{
		{"https://api.openai.com", "/v1/chat/completions"}:   "https://api.openai.com/v1/chat/completions",
		{"https://api.openai.com/", "/v1/chat/completions"}:  "https://api.openai.com/v1/chat/completions",
		{"https://proxy.example/v1", "/v1/chat/completions"}: "https://proxy.example/v1/chat/completions",
		{"https://proxy.example/v1/", "/v1/messages"}:        "https://proxy.example/v1/messages",
		{"https://proxy.example/openai", "/v1/embeddings"}:   "https://proxy.example/openai/v1/embeddings",
	}
	for in, want := range cases {
		if got := adaptor.JoinURL(in[0], in[1]); got != want {
			t.Errorf("JoinURL(%q, %q) = %q, want %q", in[0], in[1], got, want)
		}
	}
}

func TestNewRequest_SpeaksEachProtocolsAuth(t *testing.T) {
	ctx := context.Background()
	h := http.Header{}
	h.Add("anthropic-beta", "tools-2024")
	h.Add("anthropic-beta", "prompt-caching")
	call := &adaptor.Call{Endpoint: adaptor.Messages, Stream: true, Body: []byte(`{}`), Header: h, BaseURL: "http://u", Key: "k1"}
	req, err := anthropic.Adaptor{}.NewRequest(ctx, call)
	if err != nil {
		t.Fatal(err)
	}
	if req.Header.Get("x-api-key") != "k1" || req.Header.Get("Authorization") != "" || req.Header.Get("anthropic-version") != anthropic.DefaultVersion ||
		len(req.Header.Values("anthropic-beta")) != 2 || req.Header.Get("Accept") != "text/event-stream" || req.URL.String() != "http://u/v1/messages" {
		t.Fatalf("anthropic request: %s %v", req.URL, req.Header)
	}
	h.Set("anthropic-version", "2026-10-21")
	req, _ = anthropic.Adaptor{}.NewRequest(ctx, call)
	if req.Header.Get("anthropic-version") != "2026-10-21" {
		t.Fatal("the client's anthropic-version is forwarded unchanged")
	}
	oc := &adaptor.Call{Endpoint: adaptor.ChatCompletions, Body: []byte(`{}`), Header: http.Header{}, BaseURL: "http://u/v1", Key: "k2"}
	req, _ = openai.Adaptor{}.NewRequest(ctx, oc)
	if req.Header.Get("Authorization") != "Bearer k2" || req.Header.Get("Content-Type") != "application/json" || req.URL.String() != "http://u/v1/chat/completions" {
		t.Fatalf("openai request: %s %v", req.URL, req.Header)
	}
	if (openai.Adaptor{}).Supports(adaptor.Messages) || !(anthropic.Adaptor{}).Supports(adaptor.CountTokens) {
		t.Fatal("endpoint support")
	}
}

// The endpoint table is the one place adaptors read paths from: every endpoint has a name and a route, an
// OpenAI-layout path where it is OpenAI-shaped, and a deployment suffix a URL builder like Azure's appends.
func TestEndpointTable_OnePlaceForPathsKindsAndSuffixes(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range adaptor.Endpoints() {
		info := adaptor.Info(e)
		if info.Name == "" || info.Route == "" || seen[info.Name] || e.String() != info.Name {
			t.Fatalf("endpoint %d: %+v", e, info)
		}
		seen[info.Name] = true
		if info.Proto == adaptor.OpenAI && info.Path == "" {
			t.Fatalf("%s: OpenAI-shaped without a path", info.Name)
		}
	}
	cases := map[adaptor.Endpoint]struct {
		suffix string
		kind   adaptor.Kind
		body   adaptor.BodyFormat
		answer adaptor.AnswerFormat
	}{
		adaptor.ChatCompletions:     {"chat/completions", adaptor.KindGenerate, adaptor.BodyJSON, adaptor.AnswerJSON},
		adaptor.ImageGenerations:    {"images/generations", adaptor.KindImage, adaptor.BodyJSON, adaptor.AnswerJSON},
		adaptor.ImageEdits:          {"images/edits", adaptor.KindImage, adaptor.BodyMultipart, adaptor.AnswerJSON},
		adaptor.AudioTranscriptions: {"audio/transcriptions", adaptor.KindAudioIn, adaptor.BodyMultipart, adaptor.AnswerAny},
		adaptor.AudioSpeech:         {"audio/speech", adaptor.KindSpeech, adaptor.BodyJSON, adaptor.AnswerBinary},
		adaptor.Rerank:              {"rerank", adaptor.KindRerank, adaptor.BodyJSON, adaptor.AnswerJSON},
	}
	for e, want := range cases {
		info := adaptor.Info(e)
		if info.Suffix() != want.suffix || info.Kind != want.kind || info.Body != want.body || info.Answer != want.answer {
			t.Errorf("%s: %+v suffix %q, want %+v", e, info, info.Suffix(), want)
		}
		// What a deployment-style builder (Azure) makes of it, knowing nothing of the endpoint.
		if got := "/openai/deployments/dep/" + info.Suffix(); got != "/openai/deployments/dep/"+want.suffix {
			t.Errorf("%s: deployment URL %s", e, got)
		}
	}
	for _, k := range []adaptor.Kind{adaptor.KindImage, adaptor.KindAudioIn, adaptor.KindSpeech, adaptor.KindRerank, adaptor.KindModerate} {
		if !k.Media() {
			t.Errorf("kind %d is a media kind", k)
		}
		if _, ok := adaptor.EndpointFor(k, adaptor.Anthropic); ok {
			t.Errorf("kind %d translates to Anthropic", k)
		}
	}
	if adaptor.KindGenerate.Media() || adaptor.KindCount.Media() {
		t.Fatal("token kinds are not media kinds")
	}
	oa, compat := openai.Adaptor{}, openai.Adaptor{ChatOnly: true}
	if !oa.Supports(adaptor.ImageEdits) || !oa.Supports(adaptor.AudioSpeech) || oa.Supports(adaptor.Rerank) ||
		!compat.Supports(adaptor.Rerank) || compat.Supports(adaptor.Responses) || (anthropic.Adaptor{}).Supports(adaptor.ImageGenerations) {
		t.Fatal("media endpoint support")
	}
}

// An upload goes to the upstream streamed, with its own content type and length, and to the table's path.
func TestNewRequest_StreamsAnUpload(t *testing.T) {
	c := &adaptor.Call{Endpoint: adaptor.AudioTranscriptions, Header: http.Header{}, BaseURL: "http://u/v1", Key: "k",
		Upload: strings.NewReader("--b\r\n--b--\r\n"), UploadSize: 12, ContentType: "multipart/form-data; boundary=b"}
	req, err := openai.Adaptor{}.NewRequest(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if req.URL.String() != "http://u/v1/audio/transcriptions" || req.ContentLength != 12 ||
		req.Header.Get("Content-Type") != "multipart/form-data; boundary=b" || req.Header.Get("Authorization") != "Bearer k" {
		t.Fatalf("upload request: %s %d %v", req.URL, req.ContentLength, req.Header)
	}
}

package relaytest_test

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"tollgate/relay/relaytest"
)

func TestChat_NonStreamEchoesModelAndReportsUsage(t *testing.T) {
	tests := []struct {
		name      string
		opts      []relaytest.Option
		wantUsage bool
		prompt    int64
		cached    int64
	}{
		{"defaults", nil, true, 10, 0},
		{"fixed tokens", []relaytest.Option{relaytest.WithTokens(7, 3), relaytest.WithCacheTokens(4, 0)}, true, 7, 4},
		{"usage off", []relaytest.Option{relaytest.WithUsage(false)}, false, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := relaytest.New(tt.opts...)
			defer up.Close()
			r := post(t, nil, up.URL+"/v1/chat/completions", `{"model":"gpt-x","messages":[{"role":"user","content":"hi"}]}`)
			if r.err != nil || r.status != 200 {
				t.Fatalf("status %d err %v", r.status, r.err)
			}
			j := gjson.ParseBytes(r.body)
			if j.Get("model").String() != "gpt-x" || j.Get("object").String() != "chat.completion" {
				t.Errorf("body %s", r.body)
			}
			if j.Get("choices.0.message.content").String() == "" || j.Get("choices.0.finish_reason").String() != "stop" {
				t.Errorf("no content: %s", r.body)
			}
			if got := j.Get("usage").Exists(); got != tt.wantUsage {
				t.Fatalf("usage present = %v, want %v: %s", got, tt.wantUsage, r.body)
			}
			if tt.wantUsage {
				if j.Get("usage.prompt_tokens").Int() != tt.prompt || j.Get("usage.prompt_tokens_details.cached_tokens").Int() != tt.cached {
					t.Errorf("usage %s", j.Get("usage").Raw)
				}
			}
		})
	}
}

func TestChat_StreamFramesLikeOpenAI(t *testing.T) {
	tests := []struct {
		name         string
		opts         []relaytest.Option
		includeUsage bool
		wantUsage    bool
	}{
		{"usage asked", nil, true, true},
		{"usage not asked", nil, false, false},
		{"usage asked but upstream gives none", []relaytest.Option{relaytest.WithUsage(false)}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := relaytest.New(append(tt.opts, relaytest.WithChunks(4))...)
			defer up.Close()
			body := `{"model":"gpt-s","stream":true,"messages":[]}`
			if tt.includeUsage {
				body = `{"model":"gpt-s","stream":true,"stream_options":{"include_usage":true},"messages":[]}`
			}
			r := post(t, nil, up.URL+"/v1/chat/completions", body)
			if r.err != nil || r.status != 200 {
				t.Fatalf("status %d err %v", r.status, r.err)
			}
			// role chunk + 4 content + finish [+ usage] + [DONE]
			want := 7
			if tt.wantUsage {
				want = 8
			}
			if len(r.events) != want {
				t.Fatalf("got %d events, want %d: %+v", len(r.events), want, r.events)
			}
			if r.events[len(r.events)-1].data != "[DONE]" {
				t.Errorf("last event %q", r.events[len(r.events)-1].data)
			}
			var text strings.Builder
			var usage gjson.Result
			for _, e := range r.events[:len(r.events)-1] {
				j := gjson.Parse(e.data)
				if j.Get("model").String() != "gpt-s" || j.Get("object").String() != "chat.completion.chunk" {
					t.Errorf("chunk %s", e.data)
				}
				if tt.includeUsage && tt.wantUsage && !j.Get("usage").Exists() {
					t.Errorf("chunk without usage:null when include_usage: %s", e.data)
				}
				text.WriteString(j.Get("choices.0.delta.content").String())
				if u := j.Get("usage"); u.IsObject() {
					usage = u
					if len(j.Get("choices").Array()) != 0 {
						t.Errorf("usage chunk has choices: %s", e.data)
					}
				}
			}
			if text.String() != "Hello from the relaytest" {
				t.Errorf("text %q", text.String())
			}
			if tt.wantUsage != usage.Exists() || (tt.wantUsage && usage.Get("completion_tokens").Int() != 20) {
				t.Errorf("usage %s", usage.Raw)
			}
		})
	}
}

func TestCompletions_StreamAndNonStream(t *testing.T) {
	up := relaytest.New(relaytest.WithChunks(2))
	defer up.Close()
	r := post(t, nil, up.URL+"/v1/completions", `{"model":"davinci","prompt":"x"}`)
	j := gjson.ParseBytes(r.body)
	if r.status != 200 || j.Get("object").String() != "text_completion" || j.Get("choices.0.text").String() != "Hello from" || j.Get("usage.total_tokens").Int() != 30 {
		t.Fatalf("non-stream %d %s", r.status, r.body)
	}
	r = post(t, nil, up.URL+"/v1/completions", `{"model":"davinci","prompt":"x","stream":true,"stream_options":{"include_usage":true}}`)
	if len(r.events) != 5 || r.events[4].data != "[DONE]" || gjson.Get(r.events[3].data, "usage.prompt_tokens").Int() != 10 {
		t.Fatalf("stream events %+v", r.events)
	}
}

func TestEmbeddings_OneVectorPerInput(t *testing.T) {
	up := relaytest.New()
	defer up.Close()
	tests := []struct {
		body  string
		n     int
		check func(gjson.Result) bool
	}{
		{`{"model":"e","input":"one"}`, 1, func(j gjson.Result) bool { return len(j.Get("data.0.embedding").Array()) == 8 }},
		{`{"model":"e","input":["a","b","c"],"dimensions":4}`, 3, func(j gjson.Result) bool { return len(j.Get("data.2.embedding").Array()) == 4 }},
		{`{"model":"e","input":[1,2,3]}`, 1, func(gjson.Result) bool { return true }},
		{`{"model":"e","input":"x","encoding_format":"base64"}`, 1, func(j gjson.Result) bool {
			raw, err := base64.StdEncoding.DecodeString(j.Get("data.0.embedding").String())
			return err == nil && len(raw) == 32
		}},
	}
	for _, tt := range tests {
		r := post(t, nil, up.URL+"/v1/embeddings", tt.body)
		j := gjson.ParseBytes(r.body)
		if r.status != 200 || len(j.Get("data").Array()) != tt.n || !tt.check(j) || j.Get("usage.prompt_tokens").Int() != 10 || j.Get("model").String() != "e" {
			t.Errorf("%s → %d %s", tt.body, r.status, r.body)
		}
	}
}

func TestModels_ListsConfiguredIDsInBothShapes(t *testing.T) {
	up := relaytest.New(relaytest.WithModels("m1", "m2"))
	defer up.Close()
	r := post(t, nil, up.URL+"/v1/models", "")
	if r.status != 200 || gjson.GetBytes(r.body, "data.#.id").String() != `["m1","m2"]` || gjson.GetBytes(r.body, "object").String() != "list" {
		t.Fatalf("openai models %d %s", r.status, r.body)
	}
	r = post(t, nil, up.URL+"/v1/models", "", "anthropic-version", "2023-06-01")
	if gjson.GetBytes(r.body, "data.0.type").String() != "model" || gjson.GetBytes(r.body, "last_id").String() != "m2" {
		t.Fatalf("anthropic models %s", r.body)
	}
}

func TestRouting_RejectsUnknownPathsAndBadJSON(t *testing.T) {
	up := relaytest.New()
	defer up.Close()
	tests := []struct {
		path, body string
		status     int
	}{
		{"/v1/nope", `{}`, 404},
		{"/v1/chat/completions", `{"model":`, 400},
		{"/v1/chat/completions", "", 405},
	}
	for _, tt := range tests {
		r := post(t, nil, up.URL+tt.path, tt.body)
		if r.status != tt.status || !gjson.GetBytes(r.body, "error.message").Exists() {
			t.Errorf("%s %q → %d %s, want %d", tt.path, tt.body, r.status, r.body, tt.status)
		}
	}
}

// With send stamps every content delta says when it was written, in order, and a stamp parses back.
func TestChat_SendStampsTellWhenEachDeltaWasWritten(t *testing.T) {
	up := relaytest.New(relaytest.WithChunks(3), relaytest.WithChunkDelay(20*time.Millisecond), relaytest.WithSendStamps())
	defer up.Close()
	before := time.Now()
	r := post(t, nil, up.URL+"/v1/chat/completions", `{"model":"gpt-s","stream":true,"messages":[]}`)
	if r.err != nil || r.status != 200 {
		t.Fatalf("status %d err %v", r.status, r.err)
	}
	var stamps []time.Time
	for _, ev := range r.events {
		if at, ok := relaytest.ParseSendStamp([]byte(ev.data)); ok {
			stamps = append(stamps, at)
		}
	}
	if len(stamps) != 3 {
		t.Fatalf("%d stamped deltas in %+v, want 3", len(stamps), r.events)
	}
	for i, at := range stamps {
		if at.Before(before) || at.After(time.Now()) || (i > 0 && at.Sub(stamps[i-1]) < 20*time.Millisecond) {
			t.Fatalf("stamp %d = %v: not in the call, or closer than the pause to the one before (%v)", i, at, stamps)
		}
	}
	if _, ok := relaytest.ParseSendStamp([]byte(`{"content":"sent@12ab"}`)); ok {
		t.Fatal("a malformed stamp parsed")
	}
}

package relaytest_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"tollgate/relay/relaytest"
)

func TestFaults_StatusAnswersSpeakTheCallersProtocol(t *testing.T) {
	tests := []struct {
		name          string
		fault         relaytest.Fault
		path          string
		status        int
		field, value  string
		header, hvalS string
	}{
		{"429 openai", relaytest.RateLimited(2500 * time.Millisecond), "/v1/chat/completions", 429, "error.code", "rate_limit_exceeded", "Retry-After", "3"},
		{"429 reset header", relaytest.RateLimited(20 * time.Second), "/v1/chat/completions", 429, "error.type", "requests", "x-ratelimit-reset-requests", "20s"},
		{"429 anthropic", relaytest.RateLimited(time.Second), "/v1/messages", 429, "error.type", "rate_limit_error", "Retry-After", "1"},
		{"500 openai", relaytest.ServerError(), "/v1/chat/completions", 500, "error.type", "server_error", "", ""},
		{"500 anthropic", relaytest.ServerError(), "/v1/messages", 500, "error.type", "api_error", "", ""},
		{"401 openai", relaytest.InvalidKey(), "/v1/chat/completions", 401, "error.code", "invalid_api_key", "", ""},
		{"401 anthropic", relaytest.InvalidKey(), "/v1/messages", 401, "error.type", "authentication_error", "", ""},
		{"403", relaytest.Forbidden(), "/v1/messages", 403, "error.type", "permission_error", "", ""},
		{"400", relaytest.BadRequest(), "/v1/chat/completions", 400, "error.type", "invalid_request_error", "", ""},
		{"404 model openai", relaytest.ModelNotFound(), "/v1/chat/completions", 404, "error.code", "model_not_found", "", ""},
		{"404 model anthropic", relaytest.ModelNotFound(), "/v1/messages", 404, "error.message", "model: m", "", ""},
		{"quota openai", relaytest.InsufficientQuota(), "/v1/chat/completions", 429, "error.code", "insufficient_quota", "", ""},
		{"quota anthropic", relaytest.InsufficientQuota(), "/v1/messages", 400, "error.type", "invalid_request_error", "", ""},
		{"529 anthropic", relaytest.Overloaded(), "/v1/messages", 529, "error.type", "overloaded_error", "", ""},
		{"503 openai", relaytest.Status(503), "/v1/responses", 503, "error.type", "server_error", "", ""},
		{"502 html", relaytest.BadGateway(), "/v1/chat/completions", 502, "", "", "Content-Type", "text/html"},
		{"custom body", relaytest.Fault{Kind: relaytest.FaultStatus, Status: 418, Body: `{"x":1}`}, "/v1/embeddings", 418, "x", "1", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := relaytest.New(relaytest.Fail(tt.fault))
			defer up.Close()
			for _, stream := range []string{"false", "true"} {
				r := post(t, nil, up.URL+tt.path, `{"model":"m","stream":`+stream+`}`)
				if r.status != tt.status {
					t.Fatalf("stream=%s status %d, want %d: %s", stream, r.status, tt.status, r.body)
				}
				if tt.field != "" && gjson.GetBytes(r.body, tt.field).String() != tt.value {
					t.Errorf("%s = %q in %s", tt.field, gjson.GetBytes(r.body, tt.field).String(), r.body)
				}
				if tt.header != "" && !strings.HasPrefix(r.header.Get(tt.header), tt.hvalS) {
					t.Errorf("header %s = %q", tt.header, r.header.Get(tt.header))
				}
			}
		})
	}
}

func TestFaults_ResetMidStreamCutsTheConnection(t *testing.T) {
	for _, path := range []string{"/v1/chat/completions", "/v1/messages", "/v1/responses"} {
		t.Run(path, func(t *testing.T) {
			up := relaytest.New(relaytest.WithChunks(5), relaytest.Fail(relaytest.Reset(2)))
			defer up.Close()
			r := post(t, nil, up.URL+path, `{"model":"m","stream":true}`)
			if r.status != 200 || r.err == nil {
				t.Fatalf("status %d err %v, want 200 and a read error", r.status, r.err)
			}
			deltas := 0
			for _, e := range r.events {
				if e.name == "content_block_delta" || e.name == "response.output_text.delta" ||
					gjson.Get(e.data, "choices.0.delta.content").String() != "" {
					deltas++
				}
			}
			if deltas != 2 {
				t.Errorf("got %d deltas before the reset, want 2: %s", deltas, names(r.events))
			}
			for _, e := range r.events {
				if strings.Contains(e.data, "[DONE]") || e.name == "message_stop" || e.name == "response.completed" {
					t.Errorf("stream finished despite reset: %v", names(r.events))
				}
			}
		})
	}
}

func TestFaults_ResetBeforeAnswerAndMidBody(t *testing.T) {
	up := relaytest.New(relaytest.Fail(relaytest.Reset(0)))
	defer up.Close()
	if r := post(t, nil, up.URL+"/v1/chat/completions", `{"model":"m"}`); r.err == nil {
		t.Fatalf("want transport error, got %d", r.status)
	}
	up.Set(relaytest.Fail(relaytest.Reset(1)))
	if r := post(t, nil, up.URL+"/v1/chat/completions", `{"model":"m"}`); r.status != 200 || r.err == nil {
		t.Fatalf("want 200 then a body error, got %d %v", r.status, r.err)
	}
}

func TestFaults_HangUntilTheClientGivesUp(t *testing.T) {
	tests := []struct {
		name  string
		fault relaytest.Fault
		body  string
	}{
		{"before headers", relaytest.Hang(), `{"model":"m"}`},
		{"idle mid-stream", relaytest.HangAfter(1), `{"model":"m","stream":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := relaytest.New(relaytest.Fail(tt.fault))
			defer up.Close()
			c := &http.Client{Timeout: 150 * time.Millisecond}
			r := post(t, c, up.URL+"/v1/chat/completions", tt.body)
			if r.err == nil {
				t.Fatalf("want a timeout, got %d with %d events", r.status, len(r.events))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			for up.Active() > 0 && ctx.Err() == nil {
				time.Sleep(5 * time.Millisecond)
			}
			if up.Active() != 0 || up.Canceled() != 1 {
				t.Errorf("active %d canceled %d after client gave up", up.Active(), up.Canceled())
			}
		})
	}
}

func TestFaults_CloseReleasesHungRequests(t *testing.T) {
	up := relaytest.New(relaytest.Fail(relaytest.Hang()))
	errc := make(chan error, 1)
	go func() {
		_, err := http.Post(up.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{}`))
		errc <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := up.WaitForRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { up.Close(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("Close blocked on a hung request")
	}
	<-errc
}

func TestFaults_InvalidJSONAndStreamError(t *testing.T) {
	up := relaytest.New(relaytest.WithChunks(3), relaytest.Fail(relaytest.InvalidJSON()))
	defer up.Close()
	r := post(t, nil, up.URL+"/v1/chat/completions", `{"model":"m"}`)
	if r.status != 200 || gjson.ValidBytes(r.body) {
		t.Fatalf("want 200 with broken JSON, got %d %s", r.status, r.body)
	}
	r = post(t, nil, up.URL+"/v1/chat/completions", `{"model":"m","stream":true}`)
	if len(r.events) < 2 || gjson.Valid(r.events[1].data) {
		t.Fatalf("want a garbled event after the role chunk: %+v", r.events)
	}
	up.Set(relaytest.Fail(relaytest.StreamError(2)))
	r = post(t, nil, up.URL+"/v1/messages", `{"model":"m","stream":true}`)
	last := r.events[len(r.events)-1]
	if last.name != "error" || gjson.Get(last.data, "error.type").String() != "overloaded_error" || len(r.events) != 6 {
		t.Fatalf("events %s", names(r.events))
	}
	r = post(t, nil, up.URL+"/v1/chat/completions", `{"model":"m","stream":true}`)
	if last := r.events[len(r.events)-1]; !gjson.Get(last.data, "error.message").Exists() {
		t.Fatalf("openai stream error %+v", r.events)
	}
}

func TestFailFirst_FailsNThenSucceeds(t *testing.T) {
	up := relaytest.New(relaytest.FailFirst(2, relaytest.ServerError()))
	defer up.Close()
	var got []int
	for range 4 {
		got = append(got, post(t, nil, up.URL+"/v1/chat/completions", `{"model":"m"}`).status)
	}
	if want := []int{500, 500, 200, 200}; !equal(got, want) {
		t.Fatalf("statuses %v, want %v", got, want)
	}
	up.Set(relaytest.WithChunks(1)) // unrelated change keeps the spent count
	if s := post(t, nil, up.URL+"/v1/chat/completions", `{"model":"m"}`).status; s != 200 {
		t.Fatalf("status %d after unrelated Set", s)
	}
}

func TestOverrides_PerKeyAndPerModel(t *testing.T) {
	up := relaytest.New(
		relaytest.ForKey("bad-key", relaytest.Fail(relaytest.InvalidKey())),
		relaytest.ForKey("limited", relaytest.Fail(relaytest.RateLimited(time.Second))),
		relaytest.ForModel("gone", relaytest.Fail(relaytest.ModelNotFound())),
		relaytest.ForModel("slow", relaytest.WithTokens(1, 2)),
	)
	defer up.Close()
	tests := []struct {
		key, model string
		status     int
	}{
		{"good-key", "m", 200},
		{"bad-key", "m", 401},
		{"limited", "m", 429},
		{"good-key", "gone", 404},
		{"bad-key", "gone", 401}, // key override is layered last
	}
	for _, tt := range tests {
		r := post(t, nil, up.URL+"/v1/chat/completions", `{"model":"`+tt.model+`"}`, "Authorization", "Bearer "+tt.key)
		if r.status != tt.status {
			t.Errorf("key %s model %s: %d, want %d (%s)", tt.key, tt.model, r.status, tt.status, r.body)
		}
	}
	r := post(t, nil, up.URL+"/v1/messages", `{"model":"m"}`, "x-api-key", "bad-key")
	if r.status != 401 || gjson.GetBytes(r.body, "error.type").String() != "authentication_error" {
		t.Errorf("x-api-key bad-key: %d %s", r.status, r.body)
	}
	r = post(t, nil, up.URL+"/v1/chat/completions", `{"model":"slow"}`)
	if gjson.GetBytes(r.body, "usage.total_tokens").Int() != 3 {
		t.Errorf("model override tokens: %s", r.body)
	}
	up.Set(relaytest.ForKey("bad-key")) // removes the override
	if s := post(t, nil, up.URL+"/v1/chat/completions", `{"model":"m"}`, "Authorization", "Bearer bad-key").status; s != 200 {
		t.Errorf("after removing override: %d", s)
	}
}

func TestDelays_SlowFirstByteAndChunkPacing(t *testing.T) {
	up := relaytest.New(relaytest.WithHeaderDelay(60 * time.Millisecond))
	defer up.Close()
	start := time.Now()
	post(t, nil, up.URL+"/v1/chat/completions", `{"model":"m"}`)
	if d := time.Since(start); d < 60*time.Millisecond {
		t.Errorf("header delay: answered after %v", d)
	}
	up.Reset(relaytest.WithChunks(3), relaytest.WithFirstChunkDelay(50*time.Millisecond), relaytest.WithChunkDelay(20*time.Millisecond))
	req, _ := http.NewRequest(http.MethodPost, up.URL+"/v1/chat/completions", strings.NewReader(`{"model":"m","stream":true}`))
	start = time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if d := time.Since(start); d > 45*time.Millisecond {
		t.Logf("headers took %v (expected before the first chunk delay)", d)
	}
	evs, err := readSSE(resp.Body)
	if err != nil || len(evs) != 6 {
		t.Fatalf("events %d err %v", len(evs), err)
	}
	if d := evs[0].at.Sub(start); d < 50*time.Millisecond {
		t.Errorf("first event after %v, want ≥ 50ms", d)
	}
	for i := 2; i <= 3; i++ {
		if gap := evs[i].at.Sub(evs[i-1].at); gap < 15*time.Millisecond {
			t.Errorf("gap before content chunk %d = %v, want ≈ 20ms", i, gap)
		}
	}
}

func TestSet_SwitchesBehaviourWhileRequestsRun(t *testing.T) {
	up := relaytest.New(relaytest.WithRecording(false))
	defer up.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 4)
	for range 4 {
		go func() {
			for ctx.Err() == nil {
				r := post(t, nil, up.URL+"/v1/chat/completions", `{"model":"m","stream":true}`)
				if r.err != nil && !errors.Is(r.err, context.Canceled) {
					errc <- r.err
					return
				}
				if r.status != 200 && r.status != 500 {
					errc <- errors.New("unexpected status")
					return
				}
			}
			errc <- nil
		}()
	}
	for i := range 50 {
		if i%2 == 0 {
			up.Set(relaytest.Fail(relaytest.ServerError()), relaytest.WithChunks(i))
		} else {
			up.Set(relaytest.Succeed(), relaytest.ForKey("k"+string(rune('a'+i%26)), relaytest.WithUsage(false)))
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	for range 4 {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	if up.Count() == 0 || len(up.Requests()) != 0 {
		t.Errorf("count %d, recorded %d with recording off", up.Count(), len(up.Requests()))
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

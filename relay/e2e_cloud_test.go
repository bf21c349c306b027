package relay_test

// Done when (channel types): Azure — the fake records /openai/deployments/{dep}/chat/completions?api-version=…
// with an api-key header; Vertex — 100 calls cause one token exchange; Bedrock — requests carry a SigV4
// signature that the AWS SDK for Go's signer recomputes, and a streamed answer decoded from event-stream frames
// reaches an OpenAI and an Anthropic caller, metered and billed.

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"

	"tollgate/relay/relaytest"
)

// cloudSpec is a channel with type-specific config, as the admin API takes it.
type cloudSpec struct {
	chanSpec
	BaseURL string         `json:"base_url"`
	Config  map[string]any `json:"config"`
}

// cloudWorld is a node with prices for the cloud test models and a user key.
func cloudWorld(t *testing.T, models ...string) *matrixWorld {
	w := newWorld(t)
	var rows []price
	for _, m := range models {
		rows = append(rows, price{Model: m, Input: "1", Output: "2"})
	}
	w.prices(rows...)
	p := w.user("cloud", 10_000_000)
	return &matrixWorld{world: w, key: w.key(p, nil).Key}
}

func TestAzure_DeploymentURLVersionAndAPIKeyHeader(t *testing.T) {
	t.Parallel()
	az := relaytest.NewAzure()
	t.Cleanup(az.Close)
	w := cloudWorld(t, "gpt-4o-mini")
	w.postChannel(cloudSpec{chanSpec: chanSpec{Type: "azure", Name: "azure-1", Keys: []string{"azure-key-0001"}, Models: []string{"gpt-4o-mini"}},
		BaseURL: az.URL + "/openai/", Config: map[string]any{"azure": map[string]any{"api_version": "2024-10-21",
			"deployments": map[string]string{"gpt-4o-mini": "prod-mini"}}}})
	for _, stream := range []bool{false, true} {
		id := newReqID("azure")
		got, err := callOpenAIChat(t, w, "gpt-4o-mini", id, stream, false)
		if err != nil || !strings.HasPrefix(got.text, fullText) {
			t.Fatalf("stream=%v: %v %q", stream, err, got.text)
		}
		seen := az.Seen()
		last := seen[len(seen)-1]
		if last.Path != "/openai/deployments/prod-mini/chat/completions" || last.Query != "api-version=2024-10-21" {
			t.Fatalf("azure saw %s?%s", last.Path, last.Query)
		}
		if last.Header.Get("api-key") != "azure-key-0001" || last.Header.Get("Authorization") != "" {
			t.Fatalf("azure auth headers: api-key %q, Authorization %q", last.Header.Get("api-key"), last.Header.Get("Authorization"))
		}
		wantBilled(t, w.logOf(id), 50, 10, 20)
	}
	// The Responses API lives on Azure's v1 surface, the deployment as the body's model.
	id := newReqID("azure-resp")
	if _, err := callResponses(t, w, "gpt-4o-mini", id, false, false); err != nil {
		t.Fatalf("responses: %v", err)
	}
	seen := az.Seen()
	last := seen[len(seen)-1]
	if last.Path != "/openai/v1/responses" || gjson.GetBytes(last.Body, "model").String() != "prod-mini" || last.Header.Get("api-key") != "azure-key-0001" {
		t.Fatalf("responses on azure: %s model %s", last.Path, gjson.GetBytes(last.Body, "model"))
	}
	wantBilled(t, w.logOf(id), 50, 10, 20)
}

func TestVertex_HundredCallsCostOneTokenExchange(t *testing.T) {
	t.Parallel()
	vx := relaytest.NewVertex()
	t.Cleanup(vx.Close)
	w := cloudWorld(t, "gemini-2.5-flash", "claude-sonnet-4-5")
	w.postChannel(cloudSpec{chanSpec: chanSpec{Type: "vertex", Name: "vertex-1", Keys: []string{vx.Key},
		Models: []string{"gemini-2.5-flash", "claude-sonnet-4-5"}},
		BaseURL: vx.URL, Config: map[string]any{"vertex": map[string]any{"region": "us-central1"}}})
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 100 {
		wg.Go(func() {
			m := "gemini-2.5-flash"
			if i%2 == 1 {
				m = "claude-sonnet-4-5"
			}
			a, err := w.tryCall(t.Context(), "POST", "/v1/chat/completions", w.key, chatBody(m, false))
			if err == nil && a.status != http.StatusOK {
				err = fmt.Errorf("%s: %d %s", m, a.status, a.body)
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := vx.Exchanges(); n != 1 {
		t.Fatalf("100 calls made %d token exchanges, want 1", n)
	}
	paths := map[string]int{}
	for _, r := range vx.Seen() {
		paths[r.Path]++
	}
	const root = "/v1/projects/tollgate-test/locations/us-central1/publishers/"
	if paths[root+"google/models/gemini-2.5-flash:generateContent"] != 50 || paths[root+"anthropic/models/claude-sonnet-4-5:rawPredict"] != 50 || paths["/token"] != 1 {
		t.Fatalf("vertex saw %v", paths)
	}
	// Streams: Gemini over streamGenerateContent?alt=sse to an OpenAI caller, Claude over streamRawPredict to an
	// Anthropic caller, each billed from the upstream's usage.
	id := newReqID("vx-gem")
	if got, err := callOpenAIChat(t, w, "gemini-2.5-flash", id, true, false); err != nil || !strings.HasPrefix(got.text, fullText) {
		t.Fatalf("gemini stream: %v %q", err, got.text)
	}
	wantBilled(t, w.logOf(id), 50, 10, 20)
	id = newReqID("vx-claude")
	if got, err := callAnthropic(t, w, "claude-sonnet-4-5", id, true, false); err != nil || !strings.HasPrefix(got.text, fullText) {
		t.Fatalf("claude stream: %v %+v", err, got)
	}
	wantBilled(t, w.logOf(id), 50, 10, 20)
	seen := vx.Seen()
	last := seen[len(seen)-1]
	if last.Path != root+"anthropic/models/claude-sonnet-4-5:streamRawPredict" {
		t.Fatalf("claude stream went to %s", last.Path)
	}
	if n := vx.Exchanges(); n != 1 {
		t.Fatalf("token exchanges = %d after the streams, want still 1", n)
	}
}

func TestBedrock_SigV4VerifiedAndEventStreamReachesOpenAIAndAnthropicCallers(t *testing.T) {
	t.Parallel()
	br := relaytest.NewBedrock("eu-west-3", relaytest.ForModel("anthropic.claude-sonnet-4-5-20250929-v1:0", relaytest.WithToolCall(matrixTool, matrixArgs)))
	t.Cleanup(br.Close)
	w := cloudWorld(t, "claude-sonnet-4-5", "claude-haiku")
	cfg := map[string]any{"bedrock": map[string]any{"region": "eu-west-3", "model_ids": map[string]string{
		"claude-sonnet-4-5": "anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-haiku": "anthropic.claude-haiku-4-5-20251001-v1:0"}}}
	w.postChannel(cloudSpec{chanSpec: chanSpec{Type: "bedrock", Name: "bedrock-1", Keys: []string{br.Key()},
		Models: []string{"claude-sonnet-4-5", "claude-haiku"}}, BaseURL: br.URL, Config: cfg})

	cases := []struct {
		name   string
		call   func(*testing.T, *matrixWorld, string, string, bool, bool) (matrixAnswer, error)
		model  string
		stream bool
		tool   bool
	}{
		{"openai caller, stream", callOpenAIChat, "claude-haiku", true, false},
		{"anthropic caller, stream", callAnthropic, "claude-haiku", true, false},
		{"openai caller, stream, tool", callOpenAIChat, "claude-sonnet-4-5", true, true},
		{"anthropic caller, stream, tool", callAnthropic, "claude-sonnet-4-5", true, true},
		{"openai caller, invoke", callOpenAIChat, "claude-haiku", false, false},
		{"anthropic caller, invoke", callAnthropic, "claude-haiku", false, false},
	}
	for _, c := range cases {
		id := newReqID("bedrock")
		got, err := c.call(t, w, c.model, id, c.stream, c.tool)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if c.tool && (got.toolName != matrixTool || !sameJSON(got.args, matrixArgs)) {
			t.Fatalf("%s: tool call %q %q", c.name, got.toolName, got.args)
		}
		if !c.tool && !strings.HasPrefix(got.text, fullText) {
			t.Fatalf("%s: text %q", c.name, got.text)
		}
		if got.prompt != 10 || got.complete != 20 {
			t.Fatalf("%s: usage told %d+%d", c.name, got.prompt, got.complete)
		}
		l := w.logOf(id)
		wantBilled(t, l, 50, 10, 20)
		if l.UpstreamProtocol != "anthropic" {
			t.Fatalf("%s: upstream protocol %s", c.name, l.UpstreamProtocol)
		}
		seen := br.Seen()
		last := seen[len(seen)-1]
		action := "invoke"
		if c.stream {
			action = "invoke-with-response-stream"
		}
		ids := map[string]string{"claude-haiku": "anthropic.claude-haiku-4-5-20251001-v1:0", "claude-sonnet-4-5": "anthropic.claude-sonnet-4-5-20250929-v1:0"}
		if want := "/model/" + strings.ReplaceAll(ids[c.model], ":", "%3A") + "/" + action; last.Path != want {
			t.Fatalf("%s: bedrock saw %s, want %s", c.name, last.Path, want)
		}
		if auth := last.Header.Get("Authorization"); !strings.Contains(auth, "/eu-west-3/bedrock/aws4_request") || !strings.Contains(auth, "SignedHeaders=content-length;content-type;host;x-amz-content-sha256;x-amz-date,") {
			t.Fatalf("%s: Authorization %s", c.name, auth)
		}
	}
	if v, r := br.Verified.Load(), br.Refused.Load(); v != int64(len(cases)) || r != 0 {
		t.Fatalf("signatures verified %d refused %d, want %d and 0", v, r, len(cases))
	}

	// The fake's check can fail: a channel signing with the wrong secret is refused (403, a key-level failure).
	w2 := cloudWorld(t, "claude-haiku")
	w2.postChannel(cloudSpec{chanSpec: chanSpec{Type: "bedrock", Name: "bedrock-bad", Keys: []string{br.AccessKeyID + ":not-the-secret"},
		Models: []string{"claude-haiku"}}, BaseURL: br.URL, Config: cfg})
	a := w2.call("POST", "/v1/chat/completions", w2.key, chatBody("claude-haiku", false))
	if a.status < 400 || br.Refused.Load() == 0 {
		t.Fatalf("a forged signature: %d %s, refused %d", a.status, a.body, br.Refused.Load())
	}
}

// Every client protocol through every cloud type, streamed and not, text and tool call, read by the official
// SDKs (the matrix of e2e_matrix_test.go over the cloud fronts): Azure (OpenAI), Vertex Gemini, Vertex Claude
// (publisher from the config), Bedrock (event stream).
func TestCloudMatrix_EveryClientProtocolThroughEveryCloudType(t *testing.T) {
	t.Parallel()
	tool := func(m string) relaytest.Option {
		return relaytest.ForModel(m, relaytest.WithToolCall(matrixTool, matrixArgs))
	}
	az := relaytest.NewAzure(tool("cx-azure-tool"))
	vx := relaytest.NewVertex(tool("cx-vgem-tool"), tool("cx-vclaude-tool"))
	br := relaytest.NewBedrock("us-east-2", tool("cx-bedrock-tool"))
	t.Cleanup(az.Close)
	t.Cleanup(vx.Close)
	t.Cleanup(br.Close)
	types := []struct {
		name, upstream string // upstream: the protocol a chat caller's call is sent in ("" = as the matrix's openai type)
	}{{"azure", ""}, {"vgem", "gemini"}, {"vclaude", "anthropic"}, {"bedrock", "anthropic"}}
	var models []string
	for _, ty := range types {
		models = append(models, "cx-"+ty.name+"-text", "cx-"+ty.name+"-tool")
	}
	w := cloudWorld(t, models...)
	w.postChannel(cloudSpec{chanSpec: chanSpec{Type: "azure", Name: "cx-azure", Keys: []string{"az-key"}, Models: models[0:2]},
		BaseURL: az.URL, Config: map[string]any{"azure": map[string]any{"api_version": "2024-10-21"}}})
	w.postChannel(cloudSpec{chanSpec: chanSpec{Type: "vertex", Name: "cx-vertex", Keys: []string{vx.Key}, Models: models[2:6]},
		BaseURL: vx.URL, Config: map[string]any{"vertex": map[string]any{"region": "us-east5",
			"publishers": map[string]string{"cx-vclaude-text": "anthropic", "cx-vclaude-tool": "anthropic"}}}})
	w.postChannel(cloudSpec{chanSpec: chanSpec{Type: "bedrock", Name: "cx-bedrock", Keys: []string{br.Key()}, Models: models[6:8]},
		BaseURL: br.URL, Config: map[string]any{"bedrock": map[string]any{"region": "us-east-2"}}})
	for _, cl := range matrixClients {
		for _, ty := range types {
			for _, stream := range []bool{false, true} {
				for _, withTool := range []bool{false, true} {
					name := fmt.Sprintf("%s→%s stream=%v tool=%v", cl.proto, ty.name, stream, withTool)
					t.Run(name, func(t *testing.T) {
						model := "cx-" + ty.name + "-text"
						if withTool {
							model = "cx-" + ty.name + "-tool"
						}
						id := newReqID("cx")
						got, err := cl.call(t, w, model, id, stream, withTool)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						if withTool {
							if got.toolName != matrixTool || !sameJSON(got.args, matrixArgs) {
								t.Fatalf("tool call = %q %q (text %q)", got.toolName, got.args, got.text)
							}
						} else if !strings.HasPrefix(got.text, fullText) {
							t.Fatalf("text = %q", got.text)
						}
						l := w.logOf(id)
						wantBilled(t, l, 50, 10, 20)
						want := ty.upstream
						if want == "" {
							want = upstreamProtocol(cl.proto, "openai")
						}
						if l.ClientProtocol != cl.proto || l.UpstreamProtocol != want {
							t.Fatalf("log protocols %s→%s, want %s→%s", l.ClientProtocol, l.UpstreamProtocol, cl.proto, want)
						}
					})
				}
			}
		}
	}
	if vx.Exchanges() != 1 || br.Refused.Load() != 0 {
		t.Fatalf("vertex exchanges %d, bedrock refused %d", vx.Exchanges(), br.Refused.Load())
	}
}

// An exception Bedrock sends inside the event stream (here serviceUnavailableException after two deltas) reaches
// the caller as its protocol's error event, after the text already sent, and is logged with its class.
func TestBedrock_StreamExceptionReachesTheCallerAsAnErrorEvent(t *testing.T) {
	t.Parallel()
	br := relaytest.NewBedrock("us-east-1", relaytest.Fail(relaytest.StreamError(2)))
	t.Cleanup(br.Close)
	w := cloudWorld(t, "claude-haiku")
	w.postChannel(cloudSpec{chanSpec: chanSpec{Type: "bedrock", Name: "br-exc", Keys: []string{br.Key()}, Models: []string{"claude-haiku"}},
		BaseURL: br.URL, Config: map[string]any{"bedrock": map[string]any{"region": "us-east-1"}}})
	_, evs, _ := w.stream("/v1/messages", w.key, messagesBody("claude-haiku", true))
	if len(evs) < 3 {
		t.Fatalf("events %+v", evs)
	}
	last := evs[len(evs)-1]
	if last.name != "error" || gjson.Get(last.data, "error.type").String() != "overloaded_error" ||
		!strings.Contains(gjson.Get(last.data, "error.message").String(), "serviceUnavailableException") {
		t.Fatalf("last event %s %s", last.name, last.data)
	}
	deltas := 0
	for _, e := range evs {
		if e.name == "content_block_delta" {
			deltas++
		}
	}
	if deltas != 2 {
		t.Fatalf("%d deltas before the exception, want 2", deltas)
	}
	// An OpenAI caller gets the text so far, then an error in its own shape.
	_, evs, _ = w.stream("/v1/chat/completions", w.key, chatBody("claude-haiku", true))
	if len(evs) == 0 || !strings.Contains(evs[len(evs)-1].data, `"error"`) {
		t.Fatalf("openai caller's last event: %+v", evs[len(evs)-1])
	}
}

package relay_test

// Done when: the official OpenAI and Anthropic Go SDKs, pointed at Tollgate with an sk- key, work for chat
// (stream and non-stream), embeddings, Responses and Messages, and are billed to the unit.

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"tollgate/model"
)

// fullText is what the fake answers with its default 5 chunks.
const fullText = "Hello from the relaytest fake"

func (s *standard) openaiClient(reqID string, opts ...option.RequestOption) *openai.Client {
	base := []option.RequestOption{option.WithBaseURL(s.node.URL + "/v1"), option.WithAPIKey(s.key.Key),
		option.WithMaxRetries(0), option.WithHeader("X-Request-Id", reqID)}
	c := openai.NewClient(append(base, opts...)...)
	return &c
}

func (s *standard) anthropicClient(reqID string, opts ...aoption.RequestOption) *anthropic.Client {
	base := []aoption.RequestOption{aoption.WithoutEnvironmentDefaults(), aoption.WithBaseURL(s.node.URL),
		aoption.WithMaxRetries(0), aoption.WithHeader("X-Request-Id", reqID)}
	c := anthropic.NewClient(append(base, opts...)...)
	return &c
}

// wantBilled checks a success log row: cost, tokens, not estimated, and the key's and user's durable books.
func wantBilled(t *testing.T, l model.UsageLog, cost, prompt, completion int64) {
	t.Helper()
	if l.Status != "success" || l.Cost != cost || l.PromptTokens != prompt || l.CompletionTokens != completion || l.UsageEstimated {
		t.Fatalf("log = status %s cost %d tokens %d+%d estimated %v, want success cost %d tokens %d+%d exact",
			l.Status, l.Cost, l.PromptTokens, l.CompletionTokens, l.UsageEstimated, cost, prompt, completion)
	}
}

func TestSDK_OpenAIChat_NonStreamAndStream(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000)
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{Model: "gpt-4o-mini",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}

	t.Run("non-stream", func(t *testing.T) {
		id := newReqID("sdk-chat")
		resp, err := s.openaiClient(id).Chat.Completions.New(ctx, params)
		if err != nil {
			t.Fatalf("chat: %v", err)
		}
		if len(resp.Choices) != 1 || resp.Choices[0].Message.Content != fullText || resp.Usage.TotalTokens != 30 {
			t.Fatalf("chat answer = %+v", resp)
		}
		l := s.logOf(id)
		wantBilled(t, l, 50, 10, 20)
		if l.Stream || l.Endpoint != "chat.completions" || l.ChannelID != s.oaID || l.Model != "gpt-4o-mini" {
			t.Fatalf("log row = %+v", l)
		}
	})

	for _, include := range []bool{false, true} {
		name := "stream without include_usage"
		if include {
			name = "stream with include_usage"
		}
		t.Run(name, func(t *testing.T) {
			id := newReqID("sdk-stream")
			p := params
			if include {
				p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
			}
			st := s.openaiClient(id).Chat.Completions.NewStreaming(ctx, p)
			var text strings.Builder
			var usageChunks int
			var acc openai.ChatCompletionAccumulator
			for st.Next() {
				ch := st.Current()
				acc.AddChunk(ch)
				if len(ch.Choices) == 0 {
					usageChunks++
					if ch.Usage.PromptTokens != 10 || ch.Usage.CompletionTokens != 20 {
						t.Errorf("usage chunk = %s", ch.RawJSON())
					}
				}
				for _, c := range ch.Choices {
					text.WriteString(c.Delta.Content)
				}
			}
			if err := st.Err(); err != nil {
				t.Fatalf("stream: %v", err)
			}
			if text.String() != fullText {
				t.Fatalf("streamed text = %q, want %q", text.String(), fullText)
			}
			want := 0
			if include {
				want = 1
			}
			if usageChunks != want {
				t.Fatalf("client saw %d usage-only chunks, want %d (include_usage=%v)", usageChunks, want, include)
			}
			// Either way the relay asked the upstream for usage, so the bill is exact.
			last, _ := s.oa.Last()
			if !last.Get("stream_options.include_usage").Bool() {
				t.Fatalf("upstream was not asked for usage: %s", last.Body)
			}
			l := s.logOf(id)
			wantBilled(t, l, 50, 10, 20)
			if !l.Stream || l.FirstByteMs < 0 || l.FirstByteMs > l.ElapsedMs {
				t.Fatalf("stream log: stream=%v first_byte_ms=%d elapsed_ms=%d", l.Stream, l.FirstByteMs, l.ElapsedMs)
			}
		})
	}
}

func TestSDK_OpenAIEmbeddings(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000)
	id := newReqID("sdk-emb")
	resp, err := s.openaiClient(id).Embeddings.New(context.Background(), openai.EmbeddingNewParams{
		Model: "text-embedding-3-small", Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"a", "b"}}})
	if err != nil {
		t.Fatalf("embeddings: %v", err)
	}
	if len(resp.Data) != 2 || len(resp.Data[0].Embedding) == 0 || resp.Usage.PromptTokens != 10 {
		t.Fatalf("embeddings answer = %+v", resp)
	}
	// 10 prompt tokens × 0.5 USD/1M = 5 units; no output.
	wantBilled(t, s.logOf(id), 5, 10, 0)
}

func TestSDK_OpenAIResponses_NonStreamAndStream(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000)
	ctx := context.Background()
	params := responses.ResponseNewParams{Model: "gpt-4o-mini", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}}

	id := newReqID("sdk-resp")
	resp, err := s.openaiClient(id).Responses.New(ctx, params)
	if err != nil {
		t.Fatalf("responses: %v", err)
	}
	if resp.OutputText() != fullText || resp.Usage.InputTokens != 10 || resp.Usage.OutputTokens != 20 {
		t.Fatalf("responses answer: text %q usage %+v", resp.OutputText(), resp.Usage)
	}
	wantBilled(t, s.logOf(id), 50, 10, 20)

	id = newReqID("sdk-resp-stream")
	st := s.openaiClient(id).Responses.NewStreaming(ctx, params)
	var text strings.Builder
	completed := false
	for st.Next() {
		ev := st.Current()
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
		case "response.completed":
			completed = true
			if ev.Response.Usage.OutputTokens != 20 {
				t.Errorf("completed usage = %+v", ev.Response.Usage)
			}
		}
	}
	if err := st.Err(); err != nil {
		t.Fatalf("responses stream: %v", err)
	}
	if !completed || text.String() != fullText {
		t.Fatalf("responses stream: completed=%v text=%q", completed, text.String())
	}
	l := s.logOf(id)
	wantBilled(t, l, 50, 10, 20)
	if !l.Stream || l.Endpoint != "responses" {
		t.Fatalf("log = %+v", l)
	}
}

func TestSDK_AnthropicMessages_HeadersAuthAndStream(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000)
	ctx := context.Background()
	params := anthropic.MessageNewParams{Model: "claude-sonnet-4-5", MaxTokens: 64,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}}
	const beta = "prompt-caching-2024-07-31,fine-grained-tool-streaming-2025-05-14"

	auths := map[string]aoption.RequestOption{
		"bearer":    aoption.WithAPIKey(s.key.Key), // the Go SDK sends Authorization: Bearer
		"x-api-key": aoption.WithHeader("x-api-key", s.key.Key),
	}
	for name, auth := range auths {
		t.Run("non-stream "+name, func(t *testing.T) {
			id := newReqID("sdk-msg")
			var sent http.Header // what the SDK put on the wire, to compare with what reached the upstream
			spy := aoption.WithMiddleware(func(r *http.Request, next aoption.MiddlewareNext) (*http.Response, error) {
				sent = r.Header.Clone()
				return next(r)
			})
			msg, err := s.anthropicClient(id, auth, spy, aoption.WithHeader("anthropic-beta", beta)).Messages.New(ctx, params)
			if err != nil {
				t.Fatalf("messages: %v", err)
			}
			if len(msg.Content) != 1 || msg.Content[0].Text != fullText || msg.Usage.InputTokens != 10 || msg.Usage.OutputTokens != 20 {
				t.Fatalf("message = %+v", msg)
			}
			// 10 × 3 + 20 × 15 = 330 units.
			wantBilled(t, s.logOf(id), 330, 10, 20)
			last, _ := s.an.Last()
			if got := last.Header.Values("Anthropic-Beta"); !slices.Equal(got, []string{beta}) {
				t.Fatalf("upstream anthropic-beta = %q, want %q unchanged", got, beta)
			}
			if got, want := last.Header.Get("Anthropic-Version"), sent.Get("Anthropic-Version"); got == "" || got != want {
				t.Fatalf("upstream anthropic-version = %q, the SDK sent %q", got, want)
			}
			if last.Key != "sk-ant-upstream-0001" || strings.Contains(strings.Join(last.Header.Values("Authorization"), ""), s.key.Key) {
				t.Fatalf("upstream got key %q / auth %q: the client's sk- key must not travel upstream", last.Key, last.Header.Get("Authorization"))
			}
		})
	}

	t.Run("stream", func(t *testing.T) {
		id := newReqID("sdk-msg-stream")
		st := s.anthropicClient(id, aoption.WithAPIKey(s.key.Key), aoption.WithHeader("anthropic-version", "2023-06-01"),
			aoption.WithHeader("anthropic-beta", beta)).Messages.NewStreaming(ctx, params)
		var msg anthropic.Message
		for st.Next() {
			if err := msg.Accumulate(st.Current()); err != nil {
				t.Fatalf("accumulate: %v", err)
			}
		}
		if err := st.Err(); err != nil {
			t.Fatalf("messages stream: %v", err)
		}
		if len(msg.Content) != 1 || msg.Content[0].Text != fullText || msg.Usage.OutputTokens != 20 {
			t.Fatalf("streamed message = %+v", msg)
		}
		l := s.logOf(id)
		wantBilled(t, l, 330, 10, 20)
		last, _ := s.an.Last()
		if !last.Stream || last.Header.Get("Anthropic-Beta") != beta || last.Header.Get("Anthropic-Version") != "2023-06-01" {
			t.Fatalf("upstream request: stream=%v beta=%q version=%q", last.Stream, last.Header.Get("Anthropic-Beta"), last.Header.Get("Anthropic-Version"))
		}
	})
}

func TestSDK_ModelsListsWhatTheKeyMayCall(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000)
	ctx := context.Background()

	page, err := s.openaiClient(newReqID("models")).Models.List(ctx)
	if err != nil {
		t.Fatalf("models: %v", err)
	}
	var ids []string
	for _, m := range page.Data {
		ids = append(ids, m.ID)
	}
	if want := []string{"claude-sonnet-4-5", "gpt-4o", "gpt-4o-mini", "text-embedding-3-small"}; !slices.Equal(ids, want) {
		t.Fatalf("unrestricted key models = %v, want %v", ids, want)
	}

	narrow := s.key
	s.key = s.world.key(s.alice, map[string]any{"models": []string{"gpt-4o-mini", "claude-sonnet-4-5", "not-routed"}})
	defer func() { s.key = narrow }()
	page, err = s.openaiClient(newReqID("models")).Models.List(ctx)
	if err != nil {
		t.Fatalf("models: %v", err)
	}
	ids = ids[:0]
	for _, m := range page.Data {
		ids = append(ids, m.ID)
	}
	if want := []string{"claude-sonnet-4-5", "gpt-4o-mini"}; !slices.Equal(ids, want) {
		t.Fatalf("restricted key models = %v, want %v", ids, want)
	}

	ap, err := s.anthropicClient(newReqID("models"), aoption.WithHeader("x-api-key", s.key.Key)).Models.List(ctx, anthropic.ModelListParams{})
	if err != nil {
		t.Fatalf("anthropic models: %v", err)
	}
	ids = ids[:0]
	for _, m := range ap.Data {
		ids = append(ids, m.ID)
	}
	if want := []string{"claude-sonnet-4-5", "gpt-4o-mini"}; !slices.Equal(ids, want) {
		t.Fatalf("anthropic-shaped models = %v, want %v", ids, want)
	}
	if n := len(s.logs()); n != 0 {
		t.Fatalf("listing models wrote %d usage logs", n)
	}
}

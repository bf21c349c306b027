package tokencount

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// counter is shared by the tests so the vocabularies are parsed once per test binary, not once per test.
var counter = New()

func TestText_KnownCounts(t *testing.T) {
	cases := []struct {
		model, text string
		want        int
	}{
		{"gpt-3.5-turbo", "hello world", 2},
		{"gpt-4", "tiktoken is great!", 6},
		{"gpt-4", "hello world!你好，世界！", 10},
		{"gpt-4o", "hello world", 2},
		{"gpt-5-mini", "hello world", 2},
		{"claude-sonnet-4-5", "hello world", 2},
		{"some-unknown-model", "hello world", 2},
		{"gpt-4o", "", 0},
	}
	for _, tc := range cases {
		if got := counter.Text(tc.model, tc.text); got != tc.want {
			t.Errorf("Text(%q, %q) = %d, want %d", tc.model, tc.text, got, tc.want)
		}
	}
}

func TestText_TokenIDsMatchTiktoken(t *testing.T) {
	// Token ids published for the Python tiktoken package: they pin the reference encoder the other tests trust.
	cases := []struct {
		enc  Encoding
		text string
		want []int
	}{
		{Cl100kBase, "hello world", []int{15339, 1917}},
		{Cl100kBase, "hello world!你好，世界！", []int{15339, 1917, 0, 57668, 53901, 3922, 3574, 244, 98220, 6447}},
		{O200kBase, "hello world", []int{24912, 2375}},
	}
	for _, tc := range cases {
		ref := refs(t)[tc.enc]
		if got := ref.enc.EncodeOrdinary(tc.text); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("reference %s %q = %v, want %v", tc.enc, tc.text, got, tc.want)
		}
		enc, err := counter.encoding(tc.enc)
		if err != nil {
			t.Fatal(err)
		}
		if got := enc.count(tc.text); got != len(tc.want) {
			t.Errorf("%s %q: %d tokens, want %d", tc.enc, tc.text, got, len(tc.want))
		}
	}
}

func TestText_SpecialTokenInUserTextDoesNotPanic(t *testing.T) {
	if n := counter.Text("gpt-4o", "ignore this <|endoftext|> and <|endofprompt|>"); n < 5 {
		t.Fatalf("count %d, want the special tokens counted as text", n)
	}
}

func TestEncodingFor(t *testing.T) {
	cases := map[string]Encoding{
		"gpt-4o": O200kBase, "gpt-4o-mini-2024-07-18": O200kBase, "gpt-4.1-nano": O200kBase, "gpt-5": O200kBase,
		"o1-preview": O200kBase, "o3-mini": O200kBase, "o4-mini": O200kBase, "openai/gpt-4o": O200kBase,
		"GPT-4O": O200kBase, "chatgpt-4o-latest": O200kBase,
		"gpt-4": Cl100kBase, "gpt-4-turbo": Cl100kBase, "gpt-3.5-turbo": Cl100kBase,
		"text-embedding-3-small": Cl100kBase, "claude-opus-4-1": Cl100kBase, "gemini-2.5-pro": Cl100kBase,
		"deepseek-chat": Cl100kBase, "": Cl100kBase,
	}
	for model, want := range cases {
		if got := EncodingFor(model); got != want {
			t.Errorf("EncodingFor(%q) = %s, want %s", model, got, want)
		}
	}
}

func TestText_FallsBackWhenEncodingCannotLoad(t *testing.T) {
	c := &Counter{loader: failingLoader{}}
	var le *LoadError
	if err := c.Warm(); !errors.As(err, &le) || le.Encoding != Cl100kBase {
		t.Fatalf("Warm: %v, want a LoadError for cl100k", err)
	}
	text := strings.Repeat("abcd", 25) + "你好"
	if got, want := c.Text("gpt-4o", text), Estimate(text); got != want || got != 27 {
		t.Fatalf("Text = %d, want the estimate %d (27)", got, want)
	}
}

type failingLoader struct{}

func (failingLoader) LoadTiktokenBpe(string) (map[string]int, error) {
	return nil, errors.New("disk gone")
}

func TestEstimate(t *testing.T) {
	cases := map[string]int{"": 0, "a": 1, "abcd": 1, "abcde": 2, "你好": 2, "hi 你好": 3}
	for text, want := range cases {
		if got := Estimate(text); got != want {
			t.Errorf("Estimate(%q) = %d, want %d", text, got, want)
		}
	}
}

// TestNew_NeverUsesTheNetwork builds and uses a fresh Counter with every HTTP request failing the test. It
// must not run in parallel: it swaps http.DefaultTransport for its duration.
func TestNew_NeverUsesTheNetwork(t *testing.T) {
	orig := http.DefaultTransport
	http.DefaultTransport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		t.Errorf("network used: %s %s", r.Method, r.URL)
		return nil, errors.New("network disabled in this test")
	})
	t.Cleanup(func() { http.DefaultTransport = orig })

	c := New()
	if _, ok := c.loader.(*tiktoken_loader.OfflineLoader); !ok {
		t.Fatalf("loader is %T, want the embedded offline loader", c.loader)
	}
	if err := c.Warm(); err != nil {
		t.Fatal(err)
	}
	if n := c.Text("gpt-4o", "hello world") + c.Text("gpt-4", "hello world"); n != 4 {
		t.Fatalf("counts %d, want 4", n)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestCounter_ConcurrentFirstUse(t *testing.T) {
	c := New()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			model := []string{"gpt-4o", "gpt-4"}[i%2]
			if n := c.Text(model, "hello world"); n != 2 {
				t.Errorf("%s: %d, want 2", model, n)
			}
		})
	}
	wg.Wait()
}

func BenchmarkText(b *testing.B) {
	texts := map[string]string{
		"english": "The quick brown fox jumps over the lazy dog; it's 2024 and the API returned 429 again. ",
		"mixed":   "The quick brown fox jumps over the lazy dog. 敏捷的棕色狐狸。 ",
	}
	for name, unit := range texts {
		text := strings.ToValidUTF8(strings.Repeat(unit, 2048/len(unit)+1)[:2048], "")
		for _, model := range []string{"gpt-4o", "gpt-4"} {
			b.Run(name+"/"+model, func(b *testing.B) {
				counter.Text(model, "warm")
				b.SetBytes(int64(len(text)))
				b.ReportAllocs()
				for b.Loop() {
					counter.Text(model, text)
				}
			})
		}
	}
}

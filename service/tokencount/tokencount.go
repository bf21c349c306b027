// Package tokencount counts tokens offline, for prepaid estimates and for billing streams whose upstream sent no
// usage. Nothing is ever downloaded: the BPE ranks come from the files embedded in tiktoken-go-loader.
//
// The counting itself is done here (split.go, bpe.go) rather than through tiktoken-go, for two reasons:
// tiktoken.GetEncoding's default loader fetches the files over HTTP and SetBpeLoader writes an unsynchronized
// package variable (a data race as soon as two goroutines or two packages get there), and its regexp2
// pre-tokenizer runs at ~3 MB/s, 60 ms of CPU for a 200 KB prompt on the hot path. The tests check every
// count against tiktoken-go's own encoder.
package tokencount

import (
	"strings"
	"sync"
	"unicode/utf8"

	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// Encoding names the BPE vocabularies the counter can load.
type Encoding string

// The encodings embedded in the binary that model families map to.
const (
	// O200kBase is the vocabulary of gpt-4o, gpt-4.1, gpt-5 and the o-series.
	O200kBase Encoding = "o200k_base"
	// Cl100kBase is the vocabulary of gpt-4 / gpt-3.5 / text-embedding-3, and our approximation for the rest.
	Cl100kBase Encoding = "cl100k_base"
)

// fileFor names the embedded BPE file of an encoding and the pre-tokenizer that goes with it.
func fileFor(e Encoding) (file string, next func(string, int) int, ok bool) {
	switch e {
	case Cl100kBase:
		return "cl100k_base.tiktoken", nextCl100k, true
	case O200kBase:
		return "o200k_base.tiktoken", nextO200k, true
	}
	return "", nil, false
}

// loader reads BPE ranks by file name; the production one reads the embedded files, tests inject failures.
type loader interface {
	LoadTiktokenBpe(file string) (map[string]int, error)
}

// slot loads one encoding at most once; a failure is remembered and the counter estimates instead.
type slot struct {
	once sync.Once
	enc  *vocab
	err  error
}

// Counter counts tokens for a model. It is safe for concurrent use; build one in main.go and share it.
// Each vocabulary (both together: ~15 MB of heap) is parsed on first use, or up front with Warm.
type Counter struct {
	loader loader
	cl100k slot
	o200k  slot
}

// New returns a Counter that reads only the BPE files embedded in the binary.
func New() *Counter {
	return &Counter{loader: tiktoken_loader.NewOfflineLoader()}
}

// Warm loads every encoding now, so the first request does not pay the ~0.2 s parse; call it from main.go.
func (c *Counter) Warm() error {
	for _, e := range []Encoding{Cl100kBase, O200kBase} {
		if _, err := c.encoding(e); err != nil {
			return err
		}
	}
	return nil
}

func (c *Counter) slot(e Encoding) *slot {
	if e == O200kBase {
		return &c.o200k
	}
	return &c.cl100k
}

func (c *Counter) encoding(e Encoding) (*vocab, error) {
	s := c.slot(e)
	s.once.Do(func() { s.enc, s.err = c.build(e) })
	return s.enc, s.err
}

func (c *Counter) build(e Encoding) (*vocab, error) {
	file, next, ok := fileFor(e)
	if !ok {
		return nil, &LoadError{Encoding: e, Err: errUnknownEncoding}
	}
	ranks, err := c.loader.LoadTiktokenBpe(file)
	if err != nil {
		return nil, &LoadError{Encoding: e, Err: err}
	}
	return &vocab{ranks: ranks, next: next}, nil
}

// EncodingFor maps a model name to the vocabulary used to count it. Unknown families (claude, gemini, open
// models) get cl100k: not their real tokenizer, but within roughly ±20 % on prose, which is what an estimate needs.
func EncodingFor(model string) Encoding {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 { // "openai/gpt-4o" as routers name models
		m = m[i+1:]
	}
	for _, p := range []string{"gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "chatgpt-4o", "o1", "o3", "o4", "gpt-oss", "codex"} {
		if strings.HasPrefix(m, p) {
			return O200kBase
		}
	}
	return Cl100kBase
}

// Text counts the tokens of text as model would. It never fails: if the vocabulary cannot be loaded it
// returns a length-based estimate.
func (c *Counter) Text(model, text string) int {
	if text == "" {
		return 0
	}
	enc, err := c.encoding(EncodingFor(model))
	if err != nil {
		return Estimate(text)
	}
	// Special tokens ("<|endoftext|>") typed by a user are counted as the text they are, as EncodeOrdinary does.
	return enc.count(text)
}

// Estimate approximates a token count without a vocabulary: about four bytes per token for ASCII text and
// one token per other character (CJK is 1–1.5 tokens a character in cl100k, under one in o200k).
func Estimate(text string) int {
	ascii, other := 0, 0
	for i := 0; i < len(text); {
		if text[i] < utf8.RuneSelf {
			ascii++
			i++
			continue
		}
		_, n := utf8.DecodeRuneInString(text[i:])
		other++
		i += n
	}
	return (ascii+3)/4 + other
}

// LoadError reports a vocabulary that could not be built; Text never returns it, Warm does.
type LoadError struct {
	Encoding Encoding
	Err      error
}

// Error implements error.
func (e *LoadError) Error() string {
	return "load encoding " + string(e.Encoding) + ": " + e.Err.Error()
}

// Unwrap exposes the cause to errors.Is/As.
func (e *LoadError) Unwrap() error { return e.Err }

type constError string

func (e constError) Error() string { return string(e) }

const errUnknownEncoding = constError("unknown encoding")

package tokencount

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// The patterns and special tokens of tiktoken (as in tiktoken-go v0.1.8), for the reference encoder.
const (
	cl100kPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	o200kPattern  = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

type reference struct {
	enc   *tiktoken.Tiktoken
	split *regexp2.Regexp
	next  func(string, int) int
}

// references builds tiktoken-go's encoder for each vocabulary once per test binary: it is the oracle the
// hand-written splitter and BPE must agree with.
var references = sync.OnceValues(func() (map[Encoding]reference, error) {
	out := map[Encoding]reference{}
	for _, e := range []struct {
		enc     Encoding
		file    string
		pattern string
		special map[string]int
		next    func(string, int) int
	}{
		{Cl100kBase, "cl100k_base.tiktoken", cl100kPattern, map[string]int{"<|endoftext|>": 100257}, nextCl100k},
		{O200kBase, "o200k_base.tiktoken", o200kPattern, map[string]int{"<|endoftext|>": 199999}, nextO200k},
	} {
		ranks, err := tiktoken_loader.NewOfflineLoader().LoadTiktokenBpe(e.file)
		if err != nil {
			return nil, err
		}
		bpe, err := tiktoken.NewCoreBPE(ranks, e.special, e.pattern)
		if err != nil {
			return nil, err
		}
		out[e.enc] = reference{
			enc: tiktoken.NewTiktoken(bpe, &tiktoken.Encoding{Name: string(e.enc), PatStr: e.pattern,
				MergeableRanks: ranks, SpecialTokens: e.special}, map[string]any{}),
			split: regexp2.MustCompile(e.pattern, regexp2.None),
			next:  e.next,
		}
	}
	return out, nil
})

func refs(t testing.TB) map[Encoding]reference {
	t.Helper()
	r, err := references()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (r reference) pieces(text string) []string {
	var out []string
	m, _ := r.split.FindStringMatch(text)
	for m != nil {
		out = append(out, m.String())
		m, _ = r.split.FindNextMatch(m)
	}
	return out
}

func ourPieces(next func(string, int) int, text string) []string {
	var out []string
	for i := 0; i < len(text); {
		e := next(text, i)
		out = append(out, text[i:e])
		i = e
	}
	return out
}

// checkAgainstReference fails if the pieces or the token count of text differ from tiktoken-go's.
func checkAgainstReference(t testing.TB, text string) {
	t.Helper()
	for name, r := range refs(t) {
		want, got := r.pieces(text), ourPieces(r.next, text)
		if fmt.Sprintf("%q", want) != fmt.Sprintf("%q", got) {
			t.Fatalf("%s split of %q:\n got  %q\n want %q", name, text, got, want)
		}
		v, err := counter.encoding(name)
		if err != nil {
			t.Fatal(err)
		}
		if w, g := len(r.enc.EncodeOrdinary(text)), v.count(text); w != g {
			t.Fatalf("%s count of %q = %d, want %d", name, text, g, w)
		}
	}
}

var splitCases = []string{
	"hello world", "Hello, World! It's 2024-06-01.", "I'm sure you'll see they've gone; he'd said she's 'quoted'.",
	"DON'T SHOUT'S", "a  b   c\n\n\td  \n ", "   leading and trailing   ", "line1\r\nline2\n\n\nline3",
	"numbers 1234567 and 3.14159 and ١٢٣٤", "path/to/file.go:12 //comment\n/*x*/", "x/\n/y",
	"你好，世界！こんにちは。안녕하세요", "Привет, Мир! ΑΒΓ αβγ", "naïve café résumé", "cafe\u0301 e\u0301\u0301",
	"ǅemal ʰello Ⅻ ½ ２０２４", "مرحبا بالعالم", "नमस्ते दुनिया", "emoji 😀👍🏽 and 🇫🇷!", "nbsp\u00a0here\u3000and\u2028there",
	"<|endoftext|> is text here", "CamelCaseWordsAndHTTPServer", "snake_case_words", "'s 'S 're 'll 'd 'x '",
	"\u0085\v\f mixed", "tab\tseparated\tvalues\n", "```go\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n```",
	strings.Repeat("a", 3000), strings.Repeat("ab ", 500), strings.Repeat("!?", 700),
}

func TestSplitAndCount_MatchTiktoken(t *testing.T) {
	for _, text := range splitCases {
		checkAgainstReference(t, text)
	}
}

// TestSplitAndCount_MatchTiktokenOnRandomText draws strings from every character class the patterns
// distinguish, so backtracking corners (marks, titlecase, modifier letters, lone apostrophes) get exercised.
func TestSplitAndCount_MatchTiktokenOnRandomText(t *testing.T) {
	pool := []rune("aZzA09 '  \t\n\r\v\f/.,!?-_\"sStTmMdDlLrReEvV" +
		"éÉßçñŒœ\u0301\u0308ǅǈʰʲˆ々ー一二中文カタあ가ДдЖжΩωاب\u0928\u093e\u094dⅫ½²٣２\u00a0\u3000\u2028\u0085😀🏽\u200d")
	rng := rand.New(rand.NewPCG(1, 2))
	iterations := 3000 // 20,000 were run while writing the splitter; FuzzSplitAndCount goes further
	if testing.Short() {
		iterations = 300
	}
	var b strings.Builder
	for range iterations {
		b.Reset()
		for range rng.IntN(40) {
			b.WriteRune(pool[rng.IntN(len(pool))])
		}
		checkAgainstReference(t, b.String())
	}
}

// TestCount_LongPiecesMatchTiktoken covers the heap merge: one pre-tokenizer piece of hundreds of bytes.
func TestCount_LongPiecesMatchTiktoken(t *testing.T) {
	const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	rng := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	for i := range 60 {
		b.Reset()
		alphabet := b64[:52] // letters only: one \p{L}+ piece
		if i%2 == 1 {
			alphabet = "!?.,;:-"
		}
		for range longPiece + rng.IntN(2000) {
			b.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
		checkAgainstReference(t, b.String())
	}
}

func FuzzSplitAndCount(f *testing.F) {
	for _, s := range splitCases {
		f.Add(s)
	}
	f.Add("bad \xff\xfe utf-8 \xc3")
	f.Fuzz(func(t *testing.T, text string) {
		if !utf8.ValidString(text) {
			// The reference sees invalid UTF-8 as U+FFFD where we keep the bytes: only require a sane count.
			if n := counter.Text("gpt-4o", text) + counter.Text("gpt-4", text); n < 2 || n > 2*len(text) {
				t.Fatalf("count %d for %d invalid bytes", n, len(text))
			}
			return
		}
		checkAgainstReference(t, text)
	})
}

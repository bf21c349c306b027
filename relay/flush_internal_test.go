package relay

import (
	"bufio"
	"strings"
	"testing"
)

type countingFlusher struct{ n int }

func (f *countingFlusher) Flush() { f.n++ }

// An event is flushed at once unless the next one is already complete in the read buffer: a partial event
// buffered never holds the one before it back.
func TestFlushUnlessMore_HoldsOnlyForACompleteBufferedEvent(t *testing.T) {
	for _, c := range []struct {
		name, buffered string
		flush          bool
	}{
		{"nothing buffered", "", true},
		{"a partial event", "data: {\"a\":", true},
		{"a whole line, no blank line yet", "data: {}\n", true},
		{"a complete event", "data: {}\n\n", false},
		{"a complete CRLF event", "data: {}\r\n\r\n", false},
		{"a complete event and a partial one", "data: 1\n\ndata: 2", false},
		{"a lone blank line", "\n", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := "data: 0\n\n" + c.buffered
			br := bufio.NewReaderSize(strings.NewReader(src), 64)
			if _, err := br.ReadSlice('\n'); err != nil { // "data: 0\n"
				t.Fatal(err)
			}
			if _, err := br.ReadSlice('\n'); err != nil { // the blank line ending it
				t.Fatal(err)
			}
			f := &countingFlusher{}
			flushUnlessMore(f, br)
			if got := f.n == 1; got != c.flush {
				t.Fatalf("buffered %q: flushed %v, want %v", c.buffered, got, c.flush)
			}
		})
	}
}

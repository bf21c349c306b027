package relay

import (
	"bufio"
	"strings"
	"testing"
)

type countingFlusher struct{ n int }

func (f *countingFlusher) Flush() { f.n++ }

// readEvent consumes one "data: …\n\n" event from br.
func readEvent(t *testing.T, br *bufio.Reader) {
	t.Helper()
	for _, want := range []string{"data", "\n"} {
		line, err := br.ReadSlice('\n')
		if err != nil || !strings.HasPrefix(string(line), want) {
			t.Fatalf("read %q, %v; want a line starting %q", line, err, want)
		}
	}
}

// An event the client was waiting for goes out at once whatever is buffered behind it; events that were
// already waiting in the buffer (a backlog) are held only while another complete one is buffered: a partial
// event buffered never holds the one before it back.
func TestCoalescer_FlushesAnAwaitedEventAtOnceAndABacklogTogether(t *testing.T) {
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
			// Three events arrive in one read, then whatever is buffered: the first was awaited, so it is
			// flushed although two complete ones are behind it; the second was waiting (held: the third is
			// complete); the third's flush depends on what is buffered after it.
			br := bufio.NewReaderSize(strings.NewReader("data: 0\n\ndata: 1\n\ndata: 2\n\n"+c.buffered), 256)
			f := &countingFlusher{}
			fl := coalescer{w: f, br: br}
			readEvent(t, br)
			fl.written(false)
			if f.n != 1 {
				t.Fatalf("the awaited event: %d flushes, want 1", f.n)
			}
			readEvent(t, br)
			fl.written(false)
			if f.n != 1 {
				t.Fatalf("a backlog event with a complete one behind it: %d flushes, want 1 (held)", f.n)
			}
			readEvent(t, br)
			fl.written(false)
			if got := f.n == 2; got != c.flush {
				t.Fatalf("buffered %q: flushed %v, want %v", c.buffered, got, c.flush)
			}
		})
	}
	t.Run("the last event goes out at once", func(t *testing.T) {
		br := bufio.NewReaderSize(strings.NewReader("data: 0\n\ndata: 1\n\ndata: 2\n\n"), 256)
		f := &countingFlusher{}
		fl := coalescer{w: f, br: br, behind: true}
		readEvent(t, br)
		fl.written(true)
		if f.n != 1 {
			t.Fatalf("%d flushes, want 1", f.n)
		}
	})
}

package relay

import (
	"io"
	"strings"
	"testing"
)

// A pooled stream buffer reads the next stream's source, never the last one's, and keeps its event scratch only
// while it is small.
func TestStreamBuf_ReusedReaderReadsTheNewSourceAndDropsAnOversizedScratch(t *testing.T) {
	r := &Relay{}
	sb := r.takeStreamBuf(strings.NewReader("first"))
	got, _ := io.ReadAll(sb.r)
	if string(got) != "first" {
		t.Fatalf("read %q", got)
	}
	r.putStreamBuf(sb, make([]byte, 10, 2<<10))
	if sb.ev == nil || len(sb.ev) != 0 || cap(sb.ev) != 2<<10 {
		t.Fatalf("small scratch not kept empty: len %d cap %d", len(sb.ev), cap(sb.ev))
	}
	sb.ev = make([]byte, 0, maxPooledEvent+1)
	r.putStreamBuf(sb, sb.ev)
	if sb.ev != nil {
		t.Fatalf("oversized scratch kept: cap %d", cap(sb.ev))
	}
	next := r.takeStreamBuf(strings.NewReader("second"))
	got, _ = io.ReadAll(next.r)
	if string(got) != "second" {
		t.Fatalf("reused reader read %q", got)
	}
}

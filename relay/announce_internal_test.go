package relay

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"tollgate/service/usagelog"
)

// announcedAtWrite records, at the first body write, how many log rows the writer had been told are coming.
type announcedAtWrite struct {
	http.ResponseWriter
	logs *usagelog.Writer
	seen int64
}

func (w *announcedAtWrite) Write(p []byte) (int, error) {
	if w.seen < 0 {
		w.seen = w.logs.Settling()
	}
	return w.ResponseWriter.Write(p)
}

// A complete JSON answer reaches the client only after its log row is announced: a caller that has the answer
// and flushes the log writer then waits for the row (the attempt's bookkeeping, a Redis round trip with the
// sticky binding, runs after the answer went out and before serve hands the request to finish). Announcing
// again later (serve) counts it once; a probe's request (no writer) announces nothing.
func TestWriteJSON_AnnouncesTheRowBeforeTheAnswerGoesOut(t *testing.T) {
	logs := usagelog.NewWriter(nil, 4, 4, time.Hour)
	defer func() { // bounded: a failing check leaves a row announced, which Close would wait for
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = logs.Close(ctx)
	}()
	rec := &announcedAtWrite{ResponseWriter: httptest.NewRecorder(), logs: logs, seen: -1}
	c, _ := gin.CreateTestContext(rec)
	rq := &request{logs: logs}
	writeJSON(c, rq, http.StatusOK, []byte(`{"ok":true}`))
	if rec.seen != 1 {
		t.Fatalf("rows announced when the answer was written: %d, want 1", rec.seen)
	}
	rq.announce()
	if n := logs.Settling(); n != 1 {
		t.Fatalf("announced twice: %d rows settling, want 1", n)
	}
	logs.End()

	probe := &request{}
	rec2 := &announcedAtWrite{ResponseWriter: httptest.NewRecorder(), logs: logs, seen: -1}
	c2, _ := gin.CreateTestContext(rec2)
	writeJSON(c2, probe, http.StatusOK, []byte(`{}`))
	if rec2.seen != 0 || logs.Settling() != 0 {
		t.Fatalf("a probe's answer announced a row: %d at write, %d settling", rec2.seen, logs.Settling())
	}
}

package main

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"tollgate/relay/relaytest"
)

// newTargets starts a fake upstream and an in-process plain proxy in front of it.
func newTargets(t *testing.T) []Target {
	t.Helper()
	up := relaytest.New(relaytest.WithRecording(false),
		relaytest.ForModel(modelPaced, relaytest.WithChunks(pacedChunks), relaytest.WithChunkDelay(pacedDelay)))
	t.Cleanup(up.Close)
	h, err := newPlainProxy(up.URL)
	if err != nil {
		t.Fatal(err)
	}
	px := httptest.NewServer(h)
	t.Cleanup(px.Close)
	return []Target{{Name: "direct", URL: up.URL, Key: "k"}, {Name: "proxy", URL: px.URL, Key: "k"}}
}

func TestClosed_MeasuresNonStreamThroughput(t *testing.T) {
	ts := newTargets(t)
	g := NewGen(5 * time.Second)
	defer g.Close()
	for _, tg := range ts {
		s := g.Closed(context.Background(), tg, shotPlain(), Phase{8, 50 * time.Millisecond, 300 * time.Millisecond}).Summary()
		if s.N == 0 || s.Errors != 0 || s.RPS <= 0 || s.P50 <= 0 || s.P99 < s.P50 {
			t.Errorf("%s: %+v", tg.Name, s)
		}
	}
}

func TestInterleaved_StreamsReachEveryTargetWithAllEvents(t *testing.T) {
	ts := newTargets(t)
	g := NewGen(5 * time.Second)
	defer g.Close()
	res := g.Interleaved(context.Background(), ts, shotStream(modelPaced), Phase{2, 0, 400 * time.Millisecond})
	for _, tg := range ts {
		r := res[tg.Name]
		if len(r.Samples) == 0 || r.Errors != 0 {
			t.Fatalf("%s: %d samples, %d errors (%v)", tg.Name, len(r.Samples), r.Errors, r.Err)
		}
		// role + 20 content + finish + usage + [DONE]
		if n := len(r.Samples[0].Arrivals); n != pacedChunks+4 {
			t.Errorf("%s: %d events", tg.Name, n)
		}
	}
	st := pacedStats(res)
	if st["proxy"].GapP50 < 4 || st["direct"].MaxLag != 0 {
		t.Errorf("paced stats %+v", st)
	}
}

func TestDo_FlagsBrokenStreamsAndErrorStatuses(t *testing.T) {
	up := relaytest.New(relaytest.Fail(relaytest.Reset(2)))
	defer up.Close()
	g := NewGen(5 * time.Second)
	defer g.Close()
	tg := Target{Name: "x", URL: up.URL, Key: "k"}
	if s := g.Do(context.Background(), tg, shotStream(modelFast)); s.Err == nil {
		t.Error("reset stream counted as success")
	}
	up.Set(relaytest.Fail(relaytest.ServerError()))
	if s := g.Do(context.Background(), tg, shotPlain()); s.Err == nil {
		t.Error("500 counted as success")
	}
}

func TestStreamsThroughProxy_NoSpuriousErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("load loop")
	}
	ts := newTargets(t)
	g := NewGen(5 * time.Second)
	defer g.Close()
	res := g.Interleaved(context.Background(), ts, shotStream(modelFast), Phase{1, 0, 2 * time.Second})
	for _, tg := range ts {
		if r := res[tg.Name]; r.Errors != 0 {
			t.Errorf("%s: %d errors of %d: %v", tg.Name, r.Errors, len(r.Samples), r.Err)
		}
	}
}

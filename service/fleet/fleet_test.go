package fleet

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"tollgate/model"
	"tollgate/model/modeltest"
)

// store opens a fresh database for the test: MariaDB on the MySQL pass, a SQLite file otherwise.
func store(t *testing.T) (open func() *model.Store) {
	t.Helper()
	dsn, path := "", filepath.Join(t.TempDir(), "fleet.db")
	if os.Getenv(modeltest.EnvDSN) != "" {
		dsn = modeltest.FreshMySQL(t, "tg_fleet")
	}
	return func() *model.Store {
		s, err := model.Open(dsn, path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if err := s.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
		return s
	}
}

type clock struct{ ns atomic.Int64 }

func (c *clock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *clock) add(d time.Duration)     { c.ns.Add(int64(d)) }
func newClock(t time.Time) *clock        { c := &clock{}; c.ns.Store(t.UnixNano()); return c }
func req(ch int64, class string) Request { return reqOn("m1", ch, class) }

func reqOn(model string, ch int64, class string) Request {
	return Request{Model: model, Attempts: []Attempt{{ChannelID: ch, Class: class, Latency: 40 * time.Millisecond}},
		FirstByte: 10 * time.Millisecond, Prompt: 100, Output: 20}
}

// Two nodes on one database: each writes its own rows, reads merge them, a restarted node reads what the
// others wrote, and a retried attempt counts for both channels but the request once.
func TestFleet_TwoNodesMergeAndSurviveARestart(t *testing.T) {
	open := store(t)
	c := newClock(time.Date(2026, 12, 2, 10, 0, 30, 0, time.UTC))
	a, b := New(open(), nil, c.now), New(open(), nil, c.now)
	ctx := context.Background()
	for range 30 {
		a.Observe(req(1, ""))
	}
	for range 20 {
		b.Observe(req(1, ""))
	}
	b.Observe(Request{Model: "m1", Attempts: []Attempt{{ChannelID: 1, Class: "server", Latency: time.Second}, {ChannelID: 2, Class: "", Latency: 50 * time.Millisecond}},
		FirstByte: 20 * time.Millisecond, Prompt: 1, Output: 1})
	for _, n := range []*Recorder{a, b, a} { // a flushes twice: its second write replaces its first
		if err := n.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	c.add(2 * time.Minute)
	a.Observe(req(1, "timeout"))
	if err := a.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	fresh := New(open(), nil, c.now) // a node started later
	ss, err := fresh.Window(ctx, 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	by := ByChannel(ss)
	one, two := by[1], by[2]
	if one.Requests != 51 || one.Attempts != 52 || one.Successes != 50 || one.Classes["server"] != 1 || one.Classes["timeout"] != 1 ||
		one.PromptTokens != 5100 || two.Requests != 1 || two.Attempts != 1 {
		t.Fatalf("channel 1 %+v, channel 2 %+v", one, two)
	}
	if one.LatencyP50Ms < 32 || one.LatencyP50Ms > 64 || one.FirstByteP50Ms < 8 || one.FirstByteP50Ms > 16 {
		t.Fatalf("p50 latency %.1f ms (want 32–64 for 40 ms), first byte %.1f", one.LatencyP50Ms, one.FirstByteP50Ms)
	}
	if s, _ := fresh.Window(ctx, time.Minute); ByChannel(s)[1].Requests != 1 {
		t.Fatalf("last minute: %+v", ByChannel(s)[1])
	}
}

// Minutes older than three hours roll into hours and hours older than eight days into days, every node's rows
// into one, and the totals of a day-long window do not change by it.
func TestFleet_CompactionKeepsTotals(t *testing.T) {
	open := store(t)
	c := newClock(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))
	a, b := New(open(), nil, c.now), New(open(), nil, c.now)
	ctx := context.Background()
	for i := range 90 { // 90 minutes of traffic from two nodes
		a.Observe(reqOn("m1", 1, ""))
		b.Observe(reqOn("m2", 1, "server"))
		if i%10 == 0 {
			_ = a.Flush(ctx)
			_ = b.Flush(ctx)
		}
		c.add(time.Minute)
	}
	_ = a.Flush(ctx)
	_ = b.Flush(ctx)
	c.add(2 * time.Hour)
	before, _ := New(open(), nil, c.now).Window(ctx, 24*time.Hour)
	c.add(3 * time.Hour)
	if err := a.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	s := open()
	var minutes, hours int64
	s.DB.Model(&model.FleetBucket{}).Where("res = ?", model.ResMinute).Count(&minutes)
	s.DB.Model(&model.FleetBucket{}).Where("res = ? AND node = ?", model.ResHour, "*").Count(&hours)
	if minutes != 0 || hours != 4 { // 2 hours × 2 models
		t.Fatalf("after compaction: %d minute rows, %d hour rows", minutes, hours)
	}
	after, _ := New(s, nil, c.now).Window(ctx, 24*time.Hour)
	if got, want := ByChannel(after)[1], ByChannel(before)[1]; got.Requests != 180 || got.Requests != want.Requests ||
		got.Successes != want.Successes || got.LatencyP95Ms != want.LatencyP95Ms {
		t.Fatalf("24 h window after compaction %+v, before %+v", got, want)
	}
	c.add(9 * 24 * time.Hour)
	if err := a.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	week, _ := New(s, nil, c.now).Window(ctx, 11*24*time.Hour)
	if got := ByChannel(week)[1]; got.Requests != 180 || got.Classes["server"] != 90 {
		t.Fatalf("11-day window after rolling into days: %+v", got)
	}
}

func TestQuantile_FromTheHistogram(t *testing.T) {
	var h []int64
	addHist(&h, nil)
	for range 90 {
		h[bucketOf(10*time.Millisecond)]++
	}
	for range 10 {
		h[bucketOf(3*time.Second)]++
	}
	if p50, p95 := quantile(h, 0.5), quantile(h, 0.95); p50 < 8 || p50 > 16 || p95 < 2048 || p95 > 4096 {
		t.Fatalf("p50 %.1f p95 %.1f", p50, p95)
	}
	if quantile(nil, 0.5) != 0 {
		t.Fatal("empty histogram")
	}
}

package health

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestMetrics_WindowsByClass(t *testing.T) {
	tr, clk := newSolo(t, testConfig())
	tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 0})
	tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 0, Class: ClassServer, Err: "502 bad gateway"})
	tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 1, Class: ClassClient})
	tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 1, Class: ClassRateLimited})
	cases := []struct {
		advance      time.Duration
		m1, h1, d1   int64
		successRate  float64
		key0Failures int64 // server errors of key 0 in 1h
	}{
		{0, 4, 4, 4, 1.0 / 3, 1},
		{59 * time.Second, 4, 4, 4, 1.0 / 3, 1},
		{2 * time.Minute, 0, 4, 4, 1.0 / 3, 1},
		{time.Hour, 0, 0, 4, 1, 0},
		{24 * time.Hour, 0, 0, 0, 1, 0},
	}
	start := clk.Now()
	for _, tc := range cases {
		clk.Set(start.Add(tc.advance))
		m := tr.Snapshot(1, 2).Metrics
		if m.Counts["1m"].Total != tc.m1 || m.Counts["1h"].Total != tc.h1 || m.Counts["24h"].Total != tc.d1 {
			t.Fatalf("+%v: counts %+v", tc.advance, m.Counts)
		}
		if diff := m.SuccessRate - tc.successRate; diff > 1e-9 || diff < -1e-9 {
			t.Fatalf("+%v: success rate %v, want %v", tc.advance, m.SuccessRate, tc.successRate)
		}
		if got := tr.Snapshot(1, 2).Keys[0].Metrics.Counts["1h"].ByClass["server"]; got != tc.key0Failures {
			t.Fatalf("+%v: key 0 server errors %d", tc.advance, got)
		}
	}
	h := tr.Snapshot(1, 2)
	bc := h.Metrics.Counts["24h"].ByClass
	if len(bc) != 0 {
		t.Fatalf("24h by class after a day: %v", bc)
	}
	if h.Metrics.LastError != "rate_limited" || h.Keys[0].LastError != "502 bad gateway" {
		t.Fatalf("last errors %q / %q", h.Metrics.LastError, h.Keys[0].LastError)
	}
	if h.Metrics.LastErrorAt == nil || !h.Metrics.LastErrorAt.Equal(start) {
		t.Fatalf("last error at %v", h.Metrics.LastErrorAt)
	}
}

func TestMetrics_ByClassNames(t *testing.T) {
	tr, _ := newSolo(t, testConfig())
	for _, c := range []Class{ClassSuccess, ClassSuccess, ClassTimeout, ClassCanceled, "brand_new"} {
		tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: -1, Class: c})
	}
	got := tr.Snapshot(1, 0).Metrics.Counts["1m"]
	want := map[string]int64{"success": 2, "timeout": 1, "canceled": 1, "other": 1}
	if got.Total != 5 || len(got.ByClass) != len(want) {
		t.Fatalf("counts %+v", got)
	}
	for k, v := range want {
		if got.ByClass[k] != v {
			t.Fatalf("by class %v, want %v", got.ByClass, want)
		}
	}
}

func TestMetrics_LatencyPercentilesAndEWMA(t *testing.T) {
	tr, _ := newSolo(t, testConfig())
	// 100 slow samples that the 512-sample ring must forget, then 1..512 ms.
	for range 100 {
		tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 0, Latency: time.Hour, FirstByte: time.Hour})
	}
	for i := 1; i <= 512; i++ {
		d := time.Duration(i) * time.Millisecond
		tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 0, Latency: 2 * d, FirstByte: d})
	}
	// Failures carry no latency sample but do carry a first byte.
	tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 0, Class: ClassTimeout, Latency: time.Hour})
	m := tr.Snapshot(1, 1).Metrics
	checks := []struct {
		name      string
		got, want float64
	}{
		{"first byte p50", m.FirstByteP50ms, 256},
		{"first byte p95", m.FirstByteP95ms, 487},
		{"first byte p99", m.FirstByteP99ms, 507},
		{"latency p50", m.LatencyP50ms, 512},
		{"latency p95", m.LatencyP95ms, 974},
		{"latency p99", m.LatencyP99ms, 1014},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// The EWMA (α 0.2) of a rising ramp trails the last sample by about (1-α)/α steps.
	if m.FirstByteEWMAms < 507 || m.FirstByteEWMAms > 509 || m.LatencyEWMAms < 1014 || m.LatencyEWMAms > 1018 {
		t.Errorf("EWMA first byte %v, latency %v", m.FirstByteEWMAms, m.LatencyEWMAms)
	}
	if k := tr.Snapshot(1, 1).Keys[0].Metrics; k.LatencyP50ms != 512 {
		t.Errorf("key latency p50 %v", k.LatencyP50ms)
	}

	tr2, _ := newSolo(t, testConfig())
	tr2.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: -1, Latency: 100 * time.Millisecond})
	tr2.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: -1, Latency: 200 * time.Millisecond})
	if got := tr2.Snapshot(1, 0).Metrics.LatencyEWMAms; got < 119.999 || got > 120.001 {
		t.Errorf("EWMA of 100, 200 = %v, want 120", got)
	}
}

func TestMetrics_ActiveAndRateLimit(t *testing.T) {
	tr, clk := newSolo(t, testConfig())
	end1 := tr.Begin(1, 0)
	end2 := tr.Begin(1, 1)
	end3 := tr.Begin(1, -1)
	h := tr.Snapshot(1, 2)
	if h.Metrics.Active != 3 || h.Keys[0].Metrics.Active != 1 || h.Keys[1].Metrics.Active != 1 {
		t.Fatalf("active %d / %d / %d", h.Metrics.Active, h.Keys[0].Metrics.Active, h.Keys[1].Metrics.Active)
	}
	end1()
	end1() // idempotent
	end3()
	h = tr.Snapshot(1, 2)
	if h.Metrics.Active != 1 || h.Keys[0].Metrics.Active != 0 || h.Keys[1].Metrics.Active != 1 {
		t.Fatalf("after ends: active %d / %d / %d", h.Metrics.Active, h.Keys[0].Metrics.Active, h.Keys[1].Metrics.Active)
	}
	end2()

	reset := clk.Now().Add(time.Minute)
	tr.Record(Outcome{ChannelID: 1, Key: 0, RateLimitRemaining: 42, RateLimitReset: reset})
	tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 0}) // no headers: keeps the last known values
	m := tr.Snapshot(1, 1).Keys[0].Metrics
	if m.RateLimitRemaining != 42 || m.RateLimitReset == nil || !m.RateLimitReset.Equal(reset) {
		t.Fatalf("rate limit %d %v", m.RateLimitRemaining, m.RateLimitReset)
	}
}

func TestSnapshot_JSONIsSnakeCase(t *testing.T) {
	tr, _ := newSolo(t, testConfig())
	fail(tr, 1, 0, ClassServer, 5)
	b, err := json.Marshal(tr.Snapshot(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{
		`"state":"open"`, `"cooldown_until":`, `"trips":1`, `"keys":[{"index":0,"state":"open"`,
		`"unsupported_models":[]`, `"counts":{"1h":{"total":5,"by_class":{"server":5}}`, `"success_rate":0`,
		`"latency_ewma_ms":`, `"first_byte_p99_ms":`, `"active":0`, `"last_error":"server"`, `"last_error_at":`,
		`"rate_limit_remaining":-1`, `"forced":false`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("JSON lacks %s:\n%s", want, s)
		}
	}
}

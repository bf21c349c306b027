package health

import (
	"testing"
	"time"
)

func TestKey_RateLimitCoolsOnlyTheKey(t *testing.T) {
	cases := []struct {
		name string
		o    Outcome
		want time.Duration // cooldown from now
	}{
		{"retry-after wins", Outcome{RetryAfter: 7 * time.Second, RateLimitReset: time.Time{}}, 7 * time.Second},
		{"no hint uses the default", Outcome{}, 30 * time.Second},
		{"upstream reset time", Outcome{RateLimitRemaining: 0}, 0}, // filled below: reset in 12 s
		{"absurd retry-after is capped", Outcome{RetryAfter: 72 * time.Hour}, 24 * time.Hour},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr, clk := newSolo(t, testConfig())
			o := tc.o
			o.ChannelID, o.Key, o.Class, o.Status = 1, 0, ClassRateLimited, 429
			if i == 2 {
				o.RateLimitReset = clk.Now().Add(12 * time.Second)
				tc.want = 12 * time.Second
			}
			for range 20 { // a 429 storm on one key
				tr.Record(o)
			}
			if ok, _ := tr.Allow(1); !ok {
				t.Fatal("429s opened the channel")
			}
			if tr.KeyAllowed(1, 0) {
				t.Fatal("429'd key still allowed")
			}
			if !tr.KeyAllowed(1, 1) {
				t.Fatal("a sibling key was cooled")
			}
			h := tr.Snapshot(1, 2)
			if h.State != StateClosed || h.Keys[0].State != "cooling" || h.Keys[1].State != "ok" {
				t.Fatalf("snapshot: %+v", h)
			}
			if got := h.Keys[0].CooldownUntil.Sub(clk.Now()); got != tc.want {
				t.Fatalf("cooldown %v, want %v", got, tc.want)
			}
			clk.Advance(tc.want - time.Millisecond)
			if tr.KeyAllowed(1, 0) {
				t.Fatal("key allowed before its cooldown ended")
			}
			clk.Advance(time.Millisecond)
			if !tr.KeyAllowed(1, 0) {
				t.Fatal("key still cooling after its cooldown")
			}
		})
	}
}

func TestKey_AuthAndQuotaDisableOnlyTheKey(t *testing.T) {
	for _, class := range []Class{ClassAuth, ClassUpstreamQuota} {
		t.Run(string(class), func(t *testing.T) {
			tr, clk := newSolo(t, testConfig())
			tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 1, Class: class, Status: 401, Err: "invalid api key"})
			if tr.KeyAllowed(1, 1) {
				t.Fatal("key not disabled")
			}
			if !tr.KeyAllowed(1, 0) || !tr.KeyAllowed(1, 2) {
				t.Fatal("sibling keys disabled")
			}
			if ok, _ := tr.Allow(1); !ok {
				t.Fatal("channel refused")
			}
			kh := tr.Snapshot(1, 3).Keys[1]
			if kh.State != "disabled" || kh.LastError != "invalid api key" {
				t.Fatalf("key health %+v", kh)
			}
			clk.Advance(23 * time.Hour)
			if tr.KeyAllowed(1, 1) {
				t.Fatal("key re-enabled before AuthDisable")
			}
			clk.Advance(time.Hour)
			if !tr.KeyAllowed(1, 1) {
				t.Fatal("key still disabled after AuthDisable")
			}
		})
	}
}

func TestKey_AllKeysDisabled(t *testing.T) {
	tr, _ := newSolo(t, testConfig())
	if tr.AllKeysDisabled(1, 0) || tr.AllKeysDisabled(1, 3) {
		t.Fatal("no keys disabled yet")
	}
	tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 0, Class: ClassAuth})
	tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 2, Class: ClassUpstreamQuota})
	tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 1, Class: ClassRateLimited}) // cooling is not disabled
	if tr.AllKeysDisabled(1, 3) {
		t.Fatal("key 1 is only cooling")
	}
	tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 1, Class: ClassAuth})
	if !tr.AllKeysDisabled(1, 3) {
		t.Fatal("every key is disabled")
	}
	if tr.AllKeysDisabled(1, 4) {
		t.Fatal("key 3 was never disabled")
	}
	if tr.AllKeysDisabled(2, 3) {
		t.Fatal("another channel is untouched")
	}
}

func TestKey_OwnBreakerOpensWithoutTheChannel(t *testing.T) {
	cfg := testConfig()
	cfg.FailureRatio = 0.9 // the channel's ratio stays under it while a sibling key succeeds
	tr, clk := newSolo(t, cfg)
	for range 5 {
		tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 0, Class: ClassServer})
		tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 1})
	}
	if ok, _ := tr.Allow(1); !ok {
		t.Fatal("channel opened")
	}
	if tr.KeyAllowed(1, 0) || !tr.KeyAllowed(1, 1) {
		t.Fatal("key 0's breaker should be open and key 1's closed")
	}
	if got := tr.Snapshot(1, 2).Keys[0].State; got != "open" {
		t.Fatalf("key 0 state %q", got)
	}
	clk.Advance(30 * time.Second)
	if !tr.KeyAllowed(1, 0) {
		t.Fatal("key not half open after its cooldown")
	}
	if got := tr.Snapshot(1, 2).Keys[0].State; got != "half_open" {
		t.Fatalf("key 0 state %q", got)
	}
	tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 0, Class: ClassServer})
	if tr.KeyAllowed(1, 0) {
		t.Fatal("a failure in HALF_OPEN did not reopen the key")
	}
	clk.Advance(time.Minute)
	tr.KeyAllowed(1, 0)
	tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 0})
	tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 0})
	if got := tr.Snapshot(1, 2).Keys[0].State; got != "ok" {
		t.Fatalf("key not closed after CloseAfter successes: %q", got)
	}
}

func TestModel_UnsupportedExcludesOnlyTheModel(t *testing.T) {
	tr, clk := newSolo(t, testConfig())
	for range 10 {
		tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 0, Model: "gpt-9", Class: ClassModelUnsupported, Status: 404})
	}
	if tr.ModelAllowed(1, "gpt-9") {
		t.Fatal("model still allowed on the channel")
	}
	if !tr.ModelAllowed(1, "gpt-4o") || !tr.ModelAllowed(2, "gpt-9") {
		t.Fatal("exclusion leaked to another model or channel")
	}
	if ok, _ := tr.Allow(1); !ok || !tr.KeyAllowed(1, 0) {
		t.Fatal("model_unsupported touched the channel or key")
	}
	if got := tr.Snapshot(1, 1).UnsupportedModels; len(got) != 1 || got[0] != "gpt-9" {
		t.Fatalf("unsupported models %v", got)
	}
	tr.MarkModelOK(1, "gpt-9")
	if !tr.ModelAllowed(1, "gpt-9") {
		t.Fatal("MarkModelOK did not restore the model")
	}
	tr.Record(Outcome{RateLimitRemaining: -1, ChannelID: 1, Key: 0, Model: "gpt-9", Class: ClassModelUnsupported})
	clk.Advance(24 * time.Hour)
	if !tr.ModelAllowed(1, "gpt-9") {
		t.Fatal("exclusion outlived ModelDisable")
	}
}

func TestTracker_NoSharingWithoutCacheOrBus(t *testing.T) {
	clk := newClock()
	tr := New(Config{}, nil, nil, clk.Now)
	fail(tr, 1, 0, ClassServer, 5)
	if ok, _ := tr.Allow(1); ok {
		t.Fatal("defaults: 5 consecutive failures should open")
	}
	clk.Advance(30 * time.Second)
	if ok, probe := tr.Allow(1); !ok || !probe {
		t.Fatal("defaults: 30 s cooldown")
	}
	tr.Reset(1)
	tr.MarkModelOK(1, "m")
}

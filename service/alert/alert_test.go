package alert

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"tollgate/service/mail/smtptest"
	"tollgate/service/setting"
)

func TestVerify_RefusesTamperedStaleAndWrongSecret(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"event":"channel.opened"}`)
	sig := Sign("s3cret-s3cret-s3cret", now.Unix(), body)
	ts := strconv.FormatInt(now.Unix(), 10)
	for _, tc := range []struct {
		name, secret, sig, ts string
		body                  []byte
		ok                    bool
	}{
		{"good", "s3cret-s3cret-s3cret", sig, ts, body, true},
		{"tampered body", "s3cret-s3cret-s3cret", sig, ts, append(body, ' '), false},
		{"other secret", "other-other-other-1", sig, ts, body, false},
		{"timestamp moved", "s3cret-s3cret-s3cret", sig, strconv.FormatInt(now.Unix()+1, 10), body, false},
		{"not a timestamp", "s3cret-s3cret-s3cret", sig, "soon", body, false},
	} {
		err := Verify(tc.secret, tc.sig, tc.ts, tc.body, now, 5*time.Minute)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err %v", tc.name, err)
		}
	}
	if Verify("s3cret-s3cret-s3cret", sig, ts, body, now.Add(10*time.Minute), 5*time.Minute) == nil {
		t.Error("a ten-minute-old delivery verified")
	}
}

func TestRender_ChineseForZhAndEnglishOtherwise(t *testing.T) {
	ev := Event{Name: setting.EventBalanceLow, Data: map[string]any{"username": "alice", "balance": int64(1_500_000), "threshold": int64(2_000_000)}}
	subj, text, html := render(ev, "zh-CN")
	if subj != "您的余额不足" || !strings.Contains(text, "1.5 USD") || !strings.Contains(html, "2 USD") {
		t.Fatalf("zh: %q %q %q", subj, text, html)
	}
	if subj, _, _ := render(ev, ""); subj != "Your balance is running low" {
		t.Fatalf("default language subject %q", subj)
	}
	ev = Event{Name: setting.EventChannelOpened, Data: map[string]any{"channel": "<b>x</b>", "channel_id": 3}}
	if _, _, html := render(ev, "en"); strings.Contains(html, "<b>x") {
		t.Fatalf("html not escaped: %s", html)
	}
}

func TestDeliver_SpeaksSMTPToTheSink(t *testing.T) {
	sink, err := smtptest.New()
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	s := &Service{d: Deps{Now: time.Now}, opt: Options{}}
	s.opt.defaults()
	cfg := setting.SMTP{Host: sink.Host(), Port: sink.Port(), TLS: setting.SMTPTLSNone, From: "Ops <ops@example.com>"}
	r := s.sendMail(context.Background(), cfg, "bob@example.com", "en", Event{Name: setting.EventTest})
	if r.err != nil || r.attempts != 1 {
		t.Fatalf("send: %+v", r)
	}
	m := sink.Wait(1, 5*time.Second)
	if len(m) != 1 || m[0].From != "ops@example.com" || m[0].To[0] != "bob@example.com" || m[0].Subject != "Tollgate test alert" ||
		!strings.Contains(m[0].Text, "test alert") || !strings.Contains(m[0].HTML, "<h3>") {
		t.Fatalf("sink got %+v", m)
	}
	// STARTTLS required but not offered: refused, nothing sent.
	cfg.TLS = setting.SMTPTLSStartTLS
	if r := s.sendMail(context.Background(), cfg, "bob@example.com", "en", Event{Name: setting.EventTest}); r.err == nil {
		t.Fatal("sent without the STARTTLS it was told to require")
	}
	if r := s.sendMail(context.Background(), cfg, "bob@example.com\r\nBcc: eve@example.com", "en", Event{Name: setting.EventTest}); r.err == nil {
		t.Fatal("a recipient with a line break was accepted")
	}
	if n := len(sink.Messages()); n != 1 {
		t.Fatalf("sink has %d messages, want 1", n)
	}
}

func TestErrorRates_CountOnlyTheWindow(t *testing.T) {
	var e errorRates
	now := time.Unix(1_800_000_000, 0)
	for i := range 10 {
		e.add(now, "m", i < 6, 60)
	}
	if c := e.sums(now, 60)["m"]; c != [2]int64{10, 6} {
		t.Fatalf("sums %v", c)
	}
	if c := e.sums(now.Add(2*time.Minute), 60)["m"]; c != [2]int64{0, 0} {
		t.Fatalf("after the window: %v", c)
	}
}

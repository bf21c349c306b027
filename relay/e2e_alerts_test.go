package relay_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"tollgate/app/apptest"
	"tollgate/model"
	"tollgate/relay/relaytest"
	"tollgate/service/alert"
	"tollgate/service/mail/smtptest"
)

const hookSecret = "whsec-test-0123456789abcdef"

// hookDelivery is one request a receiver got.
type hookDelivery struct {
	event, key string
	sigErr     error
	body       string
}

// receiver is a local webhook endpoint that checks every signature and answers status.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []hookDelivery
	status int
}

func newReceiver(t *testing.T, status int) *receiver {
	t.Helper()
	rc := &receiver{status: status}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		err := alert.Verify(hookSecret, r.Header.Get(alert.HeaderSignature), r.Header.Get(alert.HeaderTimestamp), body, time.Now(), 5*time.Minute)
		rc.mu.Lock()
		rc.got = append(rc.got, hookDelivery{event: r.Header.Get(alert.HeaderEvent), sigErr: err, body: string(body)})
		st := rc.status
		rc.mu.Unlock()
		w.WriteHeader(st)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) deliveries(event string) []hookDelivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []hookDelivery
	for _, d := range rc.got {
		if event == "" || d.event == event {
			out = append(out, d)
		}
	}
	return out
}

func fastAlerts(e *apptest.Env) {
	e.Options.Alerts = alert.Options{Backoff: 20 * time.Millisecond, CheckEvery: 50 * time.Millisecond}
}

func (w *world) alertRows(where ...any) []model.AlertLog {
	w.t.Helper()
	var rows []model.AlertLog
	q := w.node.App.Store.DB.Order("id")
	if len(where) > 0 {
		q = q.Where(where[0], where[1:]...)
	}
	if err := q.Find(&rows).Error; err != nil {
		w.t.Fatalf("alert rows: %v", err)
	}
	return rows
}

// A channel whose breaker trips sends exactly one signed webhook, however often it trips within the cooldown;
// the delivery is in the alert log.
func TestAlerts_ChannelTripSendsOneSignedWebhook(t *testing.T) {
	r := newResilient(t, fastAlerts)
	rc := newReceiver(t, http.StatusOK)
	r.settings(map[string]any{"alerts": map[string]any{"webhooks": []any{
		map[string]any{"url": rc.URL + "/hook?token=abc", "secret": hookSecret, "events": []string{"channel.opened"}}}}})
	flaky, spare := fake(t), fake(t)
	flakyID := r.channel(openaiChannel(flaky).at(10))
	r.channel(openaiChannel(spare))

	r.openByFailures(flaky, flakyID)
	waitUntil(t, 10*time.Second, "the webhook", func() bool { return len(rc.deliveries("")) >= 1 })
	// Trip it again within the cooldown: reset by the admin, fail again.
	if res := r.root.Do("POST", fmt.Sprintf("/api/admin/channels/%d/breaker", flakyID), map[string]any{"action": "reset"}); res.Status != http.StatusOK {
		t.Fatalf("reset: %d %s", res.Status, res.Body)
	}
	r.openByFailures(flaky, flakyID)
	time.Sleep(500 * time.Millisecond)

	got := rc.deliveries("")
	if len(got) != 1 {
		t.Fatalf("receiver got %d deliveries, want exactly 1: %+v", len(got), got)
	}
	d := got[0]
	if d.event != "channel.opened" || d.sigErr != nil {
		t.Fatalf("delivery event %q signature %v", d.event, d.sigErr)
	}
	if !strings.Contains(d.body, fmt.Sprintf(`"channel_id":%d`, flakyID)) || !strings.Contains(d.body, `"key":"channel:`) {
		t.Fatalf("body %s does not name the channel", d.body)
	}
	// Tampered bodies and stale timestamps are refused by the same check.
	if alert.Verify(hookSecret, alert.Sign(hookSecret, time.Now().Unix(), []byte(d.body)), fmt.Sprint(time.Now().Unix()), []byte(d.body+" "), time.Now(), time.Minute) == nil {
		t.Fatal("a tampered body verified")
	}
	old := time.Now().Add(-time.Hour).Unix()
	if alert.Verify(hookSecret, alert.Sign(hookSecret, old, []byte(d.body)), fmt.Sprint(old), []byte(d.body), time.Now(), 5*time.Minute) == nil {
		t.Fatal("an hour-old delivery verified (replay)")
	}
	waitUntil(t, 5*time.Second, "the alert log row", func() bool { return len(r.alertRows("event = ?", "channel.opened")) == 1 })
	row := r.alertRows("event = ?", "channel.opened")[0]
	if row.Channel != "webhook" || row.Status != "sent" || row.Attempts != 1 || row.Target != rc.URL+"/hook?…" {
		t.Fatalf("alert row %+v", row)
	}
	res := r.root.Do("GET", "/api/admin/alerts?event=channel.opened", nil)
	var page struct {
		Items []model.AlertLog `json:"items"`
	}
	res.JSON(t, &page)
	if res.Status != http.StatusOK || len(page.Items) != 1 || page.Items[0].ID != row.ID {
		t.Fatalf("GET /api/admin/alerts: %d %s", res.Status, res.Body)
	}
}

// A receiver answering 500 is retried three times (four attempts), then the alert is given up and logged.
func TestAlerts_WebhookAnswering500IsRetriedThreeTimes(t *testing.T) {
	w := newWorld(t, fastAlerts)
	rc := newReceiver(t, http.StatusInternalServerError)
	w.settings(map[string]any{"alerts": map[string]any{"webhooks": []any{map[string]any{"url": rc.URL, "secret": hookSecret}}}})
	res := w.root.Do("POST", "/api/admin/alerts/test", map[string]any{"channel": "webhook"})
	if res.Status != http.StatusOK {
		t.Fatalf("test send: %d %s", res.Status, res.Body)
	}
	if got := rc.deliveries(""); len(got) != 4 {
		t.Fatalf("receiver got %d attempts, want 1 + 3 retries", len(got))
	} else {
		for _, d := range got {
			if d.sigErr != nil || d.event != "test" {
				t.Fatalf("attempt event %q signature %v", d.event, d.sigErr)
			}
		}
	}
	rows := w.alertRows()
	if len(rows) != 1 || rows[0].Status != "failed" || rows[0].Attempts != 4 || !strings.Contains(rows[0].Error, "500") {
		t.Fatalf("alert rows %+v", rows)
	}
	// A receiver that refuses with a 4xx is not retried.
	rc.mu.Lock()
	rc.status, rc.got = http.StatusForbidden, nil
	rc.mu.Unlock()
	w.root.Do("POST", "/api/admin/alerts/test", map[string]any{"channel": "webhook"})
	if got := rc.deliveries(""); len(got) != 1 {
		t.Fatalf("a 403 was tried %d times, want once", len(got))
	}
	// No e-mail configured: a clear 409.
	wantCode(t, w.root.Do("POST", "/api/admin/alerts/test", map[string]any{"channel": "email"}), http.StatusConflict, "alert_no_target")
	wantCode(t, w.root.Do("POST", "/api/admin/alerts/test", map[string]any{"channel": "pigeon"}), http.StatusBadRequest, "validation_failed")
}

// A user whose balance crosses their own threshold gets one e-mail in their language, and no second one
// while the balance stays below.
func TestAlerts_BalanceBelowThresholdSendsOneEmail(t *testing.T) {
	s := newStandardWith(t, 1_000_000, []func(*apptest.Env){fastAlerts})
	sink, err := smtptest.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sink.Close)
	s.settings(map[string]any{"alerts": map[string]any{"smtp": map[string]any{
		"host": sink.Host(), "port": sink.Port(), "tls": "none", "from": "Tollgate <alerts@tollgate.test>"}}})

	call := func() {
		t.Helper()
		a := s.call("POST", "/v1/chat/completions", s.key.Key, chatBody("gpt-4o-mini", false))
		if a.status != http.StatusOK {
			t.Fatalf("chat: %d %s", a.status, a.body)
		}
	}
	call()
	s.flush()
	bal := s.liveBalance(s.alice.id)
	cost := int64(1_000_000) - bal
	if cost <= 0 {
		t.Fatalf("a call cost %d", cost)
	}
	// The next call takes the balance below the threshold.
	threshold := bal - cost/2
	// A user's new address needs the code sent to it; an admin sets one directly.
	if res := s.root.Do("PATCH", fmt.Sprintf("/api/admin/users/%d", s.alice.id), map[string]any{"email": "alice@example.com"}); res.Status != http.StatusOK {
		t.Fatalf("admin sets the e-mail: %d %s", res.Status, res.Body)
	}
	res := s.alice.c.Do("PATCH", "/api/user/self", map[string]any{"balance_alert": threshold, "language": "zh-CN", "email": "alice@example.com"})
	if res.Status != http.StatusOK || !strings.Contains(string(res.Body), fmt.Sprintf(`"balance_alert":%d`, threshold)) {
		t.Fatalf("PATCH /api/user/self: %d %s", res.Status, res.Body)
	}
	for range 5 {
		call()
	}
	msgs := sink.Wait(1, 10*time.Second)
	time.Sleep(500 * time.Millisecond)
	if msgs = sink.Messages(); len(msgs) != 1 {
		t.Fatalf("sink got %d e-mails, want exactly 1", len(msgs))
	}
	m := msgs[0]
	if len(m.To) != 1 || m.To[0] != "alice@example.com" || m.From != "alerts@tollgate.test" {
		t.Fatalf("envelope from %q to %v", m.From, m.To)
	}
	if m.Subject != "您的余额不足" || !strings.Contains(m.Text, "alice") || !strings.Contains(m.HTML, "<p>") {
		t.Fatalf("message subject %q text %q html %q", m.Subject, m.Text, m.HTML)
	}
	waitUntil(t, 5*time.Second, "the alert log row", func() bool { return len(s.alertRows("event = ?", "balance.low")) == 1 })
	row := s.alertRows("event = ?", "balance.low")[0]
	if row.Channel != "email" || row.Status != "sent" || row.Target != "alice@example.com" || row.Attempts != 1 {
		t.Fatalf("alert row %+v", row)
	}
}

// Hostile alert settings and profile edits are refused by field; secrets are shown masked and a masked
// secret sent back keeps the stored one.
func TestAlerts_SettingsAndProfileValidation(t *testing.T) {
	w := newWorld(t)
	good := map[string]any{"url": "https://hooks.example.com/t", "secret": hookSecret}
	for _, tc := range []struct {
		name   string
		alerts map[string]any
		field  string
	}{
		{"ftp url", map[string]any{"webhooks": []any{map[string]any{"url": "ftp://x/y", "secret": hookSecret}}}, "alerts.webhooks.url"},
		{"url with user", map[string]any{"webhooks": []any{map[string]any{"url": "https://u:p@x/y", "secret": hookSecret}}}, "alerts.webhooks.url"},
		{"short secret", map[string]any{"webhooks": []any{map[string]any{"url": "https://x/y", "secret": "short"}}}, "alerts.webhooks.secret"},
		{"unknown event", map[string]any{"webhooks": []any{map[string]any{"url": "https://x/y", "secret": hookSecret, "events": []string{"boom"}}}}, "alerts.webhooks.events"},
		{"tls mode", map[string]any{"smtp": map[string]any{"host": "smtp.x", "from": "a@x", "tls": "ssl"}}, "alerts.smtp.tls"},
		{"host without from", map[string]any{"smtp": map[string]any{"host": "smtp.x", "from": ""}}, "alerts.smtp.from"},
		{"header injection", map[string]any{"smtp": map[string]any{"host": "smtp.x", "from": "a@x\r\nBcc: b@y"}}, "alerts.smtp.from"},
		{"port", map[string]any{"smtp": map[string]any{"port": 70000}}, "alerts.smtp.port"},
		{"cooldown", map[string]any{"cooldown_s": 1}, "alerts.cooldown_s"},
		{"threshold", map[string]any{"error_rate": map[string]any{"threshold": 1.5}}, "alerts.error_rate.threshold"},
		{"summary hour", map[string]any{"daily_summary_hour_utc": 24}, "alerts.daily_summary_hour_utc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := w.root.Do("PUT", "/api/admin/settings", map[string]any{"alerts": tc.alerts})
			wantCode(t, res, http.StatusBadRequest, "validation_failed")
			if !strings.Contains(string(res.Body), tc.field) {
				t.Fatalf("error does not name %s: %s", tc.field, res.Body)
			}
		})
	}
	w.settings(map[string]any{"alerts": map[string]any{"webhooks": []any{good},
		"smtp": map[string]any{"host": "smtp.example.com", "from": "a@example.com", "password": "smtp-password-123456"}}})
	res := w.root.Do("GET", "/api/admin/settings", nil)
	if body := string(res.Body); strings.Contains(body, hookSecret) || strings.Contains(body, "smtp-password-123456") || !strings.Contains(body, "****") {
		t.Fatalf("settings show a secret: %s", body)
	}
	var opt model.Option
	if err := w.node.App.Store.DB.Where("`key` = ?", "alerts").First(&opt).Error; err != nil {
		t.Fatal(err)
	}
	if strings.Contains(opt.Value, hookSecret) || strings.Contains(opt.Value, "smtp-password") {
		t.Fatalf("secrets stored in the clear: %s", opt.Value)
	}
	// Send back what GET showed (masked), change the cooldown only: the secrets stay.
	var shown struct {
		Alerts map[string]any `json:"alerts"`
	}
	res.JSON(t, &shown)
	shown.Alerts["cooldown_s"] = 120
	w.settings(map[string]any{"alerts": shown.Alerts})
	st := w.node.App.Settings.Get().Alerts
	if st.Webhooks[0].Secret != hookSecret || st.SMTP.Password != "smtp-password-123456" || st.CooldownS != 120 {
		t.Fatalf("after a masked round trip: %+v", st)
	}
	wantCode(t, w.root.Do("PUT", "/api/admin/settings", map[string]any{"alerts": map[string]any{"webhooks": []any{
		map[string]any{"url": "https://other.example.com", "secret": "abcd****wxyz"}}}}), http.StatusBadRequest, "validation_failed")

	p := w.user("bob", 0)
	for _, body := range []map[string]any{{"balance_alert": -1}, {"balance_alert": int64(1) << 60}, {"language": "fr"},
		{"email": "not an email"}} {
		wantCode(t, p.c.Do("PATCH", "/api/user/self", body), http.StatusBadRequest, "validation_failed")
	}
	wantCode(t, p.c.Do("PATCH", "/api/user/self", `{"balance_alert": "5"}`), http.StatusBadRequest, "validation_failed")
	wantCode(t, p.c.Do("GET", "/api/admin/alerts", nil), http.StatusForbidden, "forbidden")
	wantCode(t, w.root.Do("GET", "/api/admin/alerts?cursor=x", nil), http.StatusBadRequest, "validation_failed")
	wantCode(t, w.root.Do("GET", "/api/admin/alerts?limit=1000", nil), http.StatusBadRequest, "validation_failed")
}

func wantCode(t testing.TB, r *apptest.Resp, status int, code string) {
	t.Helper()
	if r.Status != status || !strings.Contains(string(r.Body), `"code":"`+code+`"`) {
		t.Fatalf("got %d %s, want %d %s", r.Status, r.Body, status, code)
	}
}

// A model failing above the error-rate threshold raises one model.error_rate; a key the upstream refuses raises
// key.disabled, and the channel switched off for it channel.auto_disabled: each once.
func TestAlerts_ErrorRateKeyDisabledAndAutoDisabled(t *testing.T) {
	w := newWorld(t, tolerant, fastAlerts)
	w.prices()
	w.settings(map[string]any{"channel_test_interval": 0})
	rc := newReceiver(t, http.StatusOK)
	w.settings(map[string]any{"alerts": map[string]any{
		"webhooks":   []any{map[string]any{"url": rc.URL, "secret": hookSecret}},
		"error_rate": map[string]any{"threshold": 0.5, "window_s": 60, "min_requests": 3}}})
	up := fake(t, relaytest.Fail(relaytest.ServerError()))
	chID := w.channel(openaiChannel(up))
	p := w.user("carol", 1_000_000)
	k := w.key(p, nil)
	for range 4 {
		if a := w.call("POST", "/v1/chat/completions", k.Key, chatBody("gpt-4o-mini", false)); a.status < 500 {
			t.Fatalf("a failing upstream answered %d", a.status)
		}
	}
	waitUntil(t, 10*time.Second, "model.error_rate", func() bool { return len(rc.deliveries("model.error_rate")) >= 1 })

	up.Set(relaytest.Fail(relaytest.InvalidKey()))
	w.call("POST", "/v1/chat/completions", k.Key, chatBody("gpt-4o-mini", false))
	waitUntil(t, 10*time.Second, "key.disabled and channel.auto_disabled", func() bool {
		return len(rc.deliveries("key.disabled")) >= 1 && len(rc.deliveries("channel.auto_disabled")) >= 1
	})
	time.Sleep(300 * time.Millisecond) // the ticker keeps judging the window: still one alert
	for _, ev := range []string{"model.error_rate", "key.disabled", "channel.auto_disabled"} {
		got := rc.deliveries(ev)
		if len(got) != 1 || got[0].sigErr != nil {
			t.Fatalf("%s: %d deliveries (%+v), want one signed", ev, len(got), got)
		}
	}
	if d := rc.deliveries("key.disabled")[0]; !strings.Contains(d.body, fmt.Sprintf(`"channel_id":%d`, chID)) || !strings.Contains(d.body, `"class":"auth"`) {
		t.Fatalf("key.disabled body %s", d.body)
	}
	if d := rc.deliveries("model.error_rate")[0]; !strings.Contains(d.body, `"model":"gpt-4o-mini"`) {
		t.Fatalf("model.error_rate body %s", d.body)
	}
}

// A fresh install shows its alert lists as [] (never null), which the console iterates.
func TestAlerts_SettingsShowEmptyListsNotNull(t *testing.T) {
	w := newWorld(t)
	w.settings(map[string]any{"alerts": map[string]any{"webhooks": []any{map[string]any{"url": "https://x.example/h", "secret": hookSecret}}}})
	body := string(w.root.Do("GET", "/api/admin/settings", nil).Body)
	if !strings.Contains(body, `"events":[]`) || !strings.Contains(body, `"admin_to":[]`) || strings.Contains(body, `"webhooks":null`) {
		t.Fatalf("alerts lists: %s", body)
	}
}

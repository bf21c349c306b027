package app_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"tollgate/service/payment/epay/epaytest"
)

// TestAttack_EpaySubmitSignReplayedAsNotify: the same merchant key signs our submit.php URL (handed to the
// customer as pay_url) and verifies the gateway's notify, and the signed string k=v&k=v has no escaping. A
// customer who chooses the Host header of POST /api/user/topup (no PUBLIC_URL) puts "&trade_status=..." into
// notify_url and return_url; the submit sign then also reads as the sign of a notify that says TRADE_SUCCESS.
// That forged notify must be refused and credit nothing.
func TestAttack_EpaySubmitSignReplayedAsNotify(t *testing.T) {
	w := newTopupWorld(t)
	user := w.node.SignUp(t, "forger", "Tollgate-pay-77")
	start := tpBalance(t, user)

	host := "h&trade_status=TRADE_SUCCESS&u=v"
	req, err := http.NewRequest("POST", w.node.URL+"/api/user/topup",
		strings.NewReader(`{"provider":"epay","method":"alipay","amount":"10.00"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+user.Token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 201 {
		t.Logf("an order with a crafted Host is refused: %d %s", res.StatusCode, body)
		// Refused outright: nothing signed. A sign made before (an old pay_url) must still not read as a notify:
		// the notify itself is refused when a value holds '&', even with a valid sign.
		o := w.order(user, "epay", "alipay", "10.00")
		no := o["order_no"].(string)
		p := w.gw.PaidParams(no, "10.00", "alipay")
		p["name"] = "Top-up " + no + "&x=y"
		w.gw.Resign(p)
		if status, out, _ := epaytest.Post(w.notifyURL(), p); status != 400 || !strings.Contains(out, "notify_malformed") {
			t.Fatalf("a signed notify with '&' in a value: %d %s, want 400 notify_malformed", status, out)
		}
		if tpBalance(t, user) != start {
			t.Fatalf("balance moved: %d → %d", start, tpBalance(t, user))
		}
		tpBooks(t, w.node, user)
		return
	}
	var o struct {
		OrderNo string `json:"order_no"`
		PayURL  string `json:"pay_url"`
	}
	if err := json.Unmarshal(body, &o); err != nil {
		t.Fatal(err)
	}
	_, q := tpPayQuery(t, o.PayURL)
	// Re-split the signed submit string so that it reads as a notify.
	p := map[string]string{
		"money": q.Get("money"), "name": q.Get("name"),
		"notify_url":   "http://h&trade_status=TRADE_SUCCESS&u=v/api/payment/epay/notify",
		"out_trade_no": q.Get("out_trade_no"), "pid": q.Get("pid"),
		"return_url": "http://h", "trade_status": "TRADE_SUCCESS",
		"u":    "v/wallet/return?order=" + o.OrderNo + "&type=" + q.Get("type"),
		"sign": q.Get("sign"), "sign_type": "MD5",
	}
	if q.Get("notify_url") != "http://"+host+"/api/payment/epay/notify" {
		t.Fatalf("notify_url = %q", q.Get("notify_url"))
	}
	status, out, err := epaytest.Post(w.notifyURL(), p)
	if err != nil {
		t.Fatal(err)
	}
	if status == 200 || tpBalance(t, user) != start {
		t.Fatalf("a notify forged from the submit sign was taken: %d %s, balance %d → %d", status, out, start, tpBalance(t, user))
	}
	tpBooks(t, w.node, user)
}

// TestAttack_EpayParameterPollution: a genuine signed notify with a second copy of a name (in the query and the
// form body, or twice in one of them), or with a changed value in the body over a genuine query, is refused and
// credits nothing; the genuine notify then credits once.
func TestAttack_EpayParameterPollution(t *testing.T) {
	w := newTopupWorld(t)
	user := w.node.SignUp(t, "polluter", "Tollgate-pay-77")
	start := tpBalance(t, user)
	o := w.order(user, "epay", "alipay", "10.00")
	no := o["order_no"].(string)
	genuine := w.gw.PaidParams(no, "10.00", "alipay")
	q := url.Values{}
	for k, v := range genuine {
		q.Set(k, v)
	}
	send := func(query, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest("POST", w.notifyURL()+"?"+query, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	for _, c := range []struct{ name, query, body string }{
		{"money overridden in the body", q.Encode(), "money=100.00"},
		{"money twice in the query", q.Encode() + "&money=100.00", ""},
		{"money twice in the body", "", q.Encode() + "&money=10.00"},
		{"a NUL after money", strings.Replace(q.Encode(), "money=10.00", "money=10.00%00", 1), ""},
		{"fullwidth digits", strings.Replace(q.Encode(), "money=10.00", "money=%EF%BC%91%EF%BC%90.00", 1), ""},
	} {
		if status, out := send(c.query, c.body); status != 400 {
			t.Fatalf("%s: %d %s, want 400", c.name, status, out)
		}
	}
	if got := tpBalance(t, user); got != start {
		t.Fatalf("polluted notifies moved the balance: %d → %d", start, got)
	}
	if status, out := send(q.Encode(), ""); status != 200 || out != "success" {
		t.Fatalf("genuine notify: %d %s", status, out)
	}
	if got := tpBalance(t, user); got != start+1369863 {
		t.Fatalf("balance %d, want %d", got, start+1369863)
	}
	tpBooks(t, w.node, user)
}

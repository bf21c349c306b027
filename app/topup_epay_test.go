package app_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"tollgate/model"
	"tollgate/service/payment/epay/epaytest"
)

func TestEpay_ValidNotifyCreditsExactlyOnceAndRefusesForgeries(t *testing.T) {
	w := newTopupWorld(t)
	user := w.node.SignUp(t, "payer", "Tollgate-pay-77")
	start := tpBalance(t, user)

	o := w.order(user, "epay", "alipay", "10.00")
	orderNo := o["order_no"].(string)
	if o["quota"].(float64) != 1369863 || o["amount"] != "10.00" || o["currency"] != "CNY" || o["status"] != "pending" {
		t.Fatalf("order = %v", o)
	}
	u, q := tpPayQuery(t, o["pay_url"].(string))
	if u.Path != "/submit.php" || !strings.HasPrefix(o["pay_url"].(string), w.gw.URL) {
		t.Fatalf("pay_url = %s", o["pay_url"])
	}
	if why := w.gw.CheckSubmit(q); why != "" {
		t.Fatalf("the gateway refuses our submit: %s (%v)", why, q)
	}
	if q.Get("out_trade_no") != orderNo || q.Get("money") != "10.00" || q.Get("type") != "alipay" ||
		q.Get("notify_url") != w.notifyURL() || q.Get("return_url") != w.node.URL+"/wallet/return?order="+orderNo {
		t.Fatalf("submit params = %v", q)
	}

	// Forged, tampered and misdirected notifies: 400, nothing moves.
	stripeOrder := &model.TopupOrder{OrderNo: "T20260101000000stripeorder1", UserID: tpUserID(t, user), Provider: "stripe",
		Amount: "10.00", Currency: "CNY", Quota: 1369863, Status: model.TopupPending, ExpiresAt: time.Now().Add(time.Hour)}
	if err := w.node.App.Store.CreateTopup(context.Background(), stripeOrder); err != nil {
		t.Fatal(err)
	}
	forge := func(change func(p map[string]string), resign bool) map[string]string {
		p := w.gw.PaidParams(orderNo, "10.00", "alipay")
		change(p)
		if resign {
			w.gw.Resign(p)
		}
		return p
	}
	cases := []struct {
		name string
		p    map[string]string
		code string
	}{
		{"money changed, sign kept", forge(func(p map[string]string) { p["money"] = "100.00" }, false), "notify_bad_signature"},
		{"money changed and re-signed", forge(func(p map[string]string) { p["money"] = "1.00" }, true), "notify_amount_mismatch"},
		{"signed with another key", func() map[string]string {
			p := w.gw.PaidParams(orderNo, "10.00", "alipay")
			p["sign"] = epaytest.SignParams(p, "not-the-key")
			return p
		}(), "notify_bad_signature"},
		{"no sign", forge(func(p map[string]string) { delete(p, "sign") }, false), "notify_bad_signature"},
		{"wrong pid", forge(func(p map[string]string) { p["pid"] = "2002" }, true), "notify_wrong_merchant"},
		{"TRADE_CLOSED", forge(func(p map[string]string) { p["trade_status"] = "TRADE_CLOSED" }, true), "notify_not_paid"},
		{"unknown order", forge(func(p map[string]string) { p["out_trade_no"] = "T20260101000000nosuchorder" }, true), "notify_unknown_order"},
		{"an order of the stripe provider", forge(func(p map[string]string) { p["out_trade_no"] = stripeOrder.OrderNo }, true), "notify_unknown_order"},
	}
	for _, c := range cases {
		status, body, err := epaytest.Post(w.notifyURL(), c.p)
		if err != nil || status != 400 || !strings.Contains(body, `"code":"`+c.code+`"`) {
			t.Fatalf("%s: %d %s (%v), want 400 %s", c.name, status, body, err, c.code)
		}
	}
	if got := tpBalance(t, user); got != start {
		t.Fatalf("forgeries moved the balance: %d → %d", start, got)
	}
	if n := tpAuditCount(t, w.node, "topup.notify_rejected", ""); n != int64(len(cases)) {
		t.Fatalf("rejected-notify audit rows = %d, want %d", n, len(cases))
	}

	// The real notify, five times at once and then again: one credit, "success" every time.
	valid := w.gw.PaidParams(orderNo, "10.00", "alipay")
	var wg sync.WaitGroup
	answers := make(chan string, 5)
	for i := 0; i < 5; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, body, err := epaytest.Post(w.notifyURL(), valid)
			answers <- fmt.Sprintf("%d %s %v", status, body, err)
		}()
	}
	wg.Wait()
	close(answers)
	for a := range answers {
		if a != "200 success <nil>" {
			t.Fatalf("concurrent notify answered %q", a)
		}
	}
	for i := 0; i < 5; i++ {
		if status, body, err := epaytest.Get(w.notifyURL(), valid); status != 200 || body != "success" || err != nil {
			t.Fatalf("repeat %d: %d %q %v", i, status, body, err)
		}
	}
	if got := tpBalance(t, user) - start; got != 1369863 {
		t.Fatalf("credited %d units, want exactly 1369863", got)
	}
	st := tpOrder(t, user, orderNo)
	if st["status"] != "paid" || st["trade_no"] != valid["trade_no"] || st["paid_at"] == nil {
		t.Fatalf("order after notify = %v", st)
	}
	if n := tpAuditCount(t, w.node, "topup.paid", ""); n != 1 {
		t.Fatalf("topup.paid audit rows = %d, want 1", n)
	}
	// A changed amount on the now-paid order is still refused, and still moves nothing.
	if status, _, _ := epaytest.Post(w.notifyURL(), forge(func(p map[string]string) { p["money"] = "20.00" }, true)); status != 400 {
		t.Fatalf("tampered notify of a paid order: %d", status)
	}

	// "10" is the same money as "10.00"; GET carries the notify as well as POST.
	o2 := w.order(user, "epay", "wxpay", "10")
	if o2["amount"] != "10.00" {
		t.Fatalf("amount stored as %v, want 10.00", o2["amount"])
	}
	if status, body, _ := epaytest.Get(w.notifyURL(), w.gw.PaidParams(o2["order_no"].(string), "10", "wxpay")); status != 200 || body != "success" {
		t.Fatalf("notify with money 10: %d %s", status, body)
	}

	// The fake gateway's pay button (the browser's path): notify, then back to the console's return page.
	o3 := w.order(user, "epay", "alipay", "5.5")
	_, q3 := tpPayQuery(t, o3["pay_url"].(string))
	page, err := http.Get(o3["pay_url"].(string))
	if err != nil || page.StatusCode != 200 {
		t.Fatalf("gateway page: %v %v", page, err)
	}
	page.Body.Close()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noFollow.Post(w.gw.URL+"/pay?"+q3.Encode(), "application/x-www-form-urlencoded", nil)
	if err != nil || res.StatusCode != http.StatusFound || res.Header.Get("Location") != w.node.URL+"/wallet/return?order="+o3["order_no"].(string) {
		t.Fatalf("pay button: %v %v", res, err)
	}
	res.Body.Close()
	if s := tpOrder(t, user, o3["order_no"].(string)); s["status"] != "paid" {
		t.Fatalf("order after pay button = %v", s)
	}
	want := int64(1369863 + 1369863 + 753425) // 5.50 / 7.3 = 0.753424657… USD
	if got := tpBalance(t, user) - start; got != want {
		t.Fatalf("credited %d, want %d", got, want)
	}
	tpBooks(t, w.node, user)
}

func TestEpay_LatePaymentOfAnExpiredOrderIsStillCredited(t *testing.T) {
	w := newTopupWorld(t)
	user := w.node.SignUp(t, "late", "Tollgate-pay-77")
	o := w.order(user, "epay", "alipay", "7.30")
	no := o["order_no"].(string)
	if err := w.node.App.Store.DB.Model(&model.TopupOrder{}).Where("order_no = ?", no).
		Update("expires_at", time.Now().Add(-time.Minute)).Error; err != nil {
		t.Fatal(err)
	}
	if s := tpOrder(t, user, no); s["status"] != "expired" {
		t.Fatalf("overdue order shows %v", s["status"])
	}
	r := user.Do("GET", "/api/user/topups?status=expired", nil)
	wantStatus(t, r, 200)
	if m := r.M(t); m["total"].(float64) != 1 {
		t.Fatalf("expired list = %s", r.Body)
	}
	if status, body, _ := epaytest.Post(w.notifyURL(), w.gw.PaidParams(no, "7.30", "alipay")); status != 200 || body != "success" {
		t.Fatalf("late notify: %d %s", status, body)
	}
	if s := tpOrder(t, user, no); s["status"] != "paid" || tpBalance(t, user) != 1_000_000 {
		t.Fatalf("late payment: order %v, balance %d", s["status"], tpBalance(t, user))
	}
	tpBooks(t, w.node, user)
}

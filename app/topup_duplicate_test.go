package app_test

import (
	"encoding/json"
	"testing"
	"time"

	"tollgate/app/apptest"
	"tollgate/model"
	"tollgate/service/payment/epay/epaytest"
	"tollgate/service/payment/stripe/stripetest"
)

// tpDuplicates returns the details of the topup.duplicate_payment rows of an order.
func tpDuplicates(t *testing.T, n *apptest.Node, orderNo string) []map[string]any {
	t.Helper()
	var rows []model.AuditLog
	if err := n.App.Store.DB.Where("action = ? AND target = ?", "topup.duplicate_payment", orderNo).Order("id").Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	out := make([]map[string]any, 0, len(rows))
	for _, r := range rows {
		var d map[string]any
		if err := json.Unmarshal([]byte(r.Detail), &d); err != nil {
			t.Fatalf("detail %q: %v", r.Detail, err)
		}
		out = append(out, d)
	}
	return out
}

func TestEpay_SecondPaymentOfAPaidOrderIsAuditedNotCredited(t *testing.T) {
	w := newTopupWorld(t)
	user := w.node.SignUp(t, "twicepayer", "Tollgate-pay-77")
	no := w.order(user, "epay", "alipay", "10.00")["order_no"].(string)
	first := w.gw.PaidParams(no, "10.00", "alipay")
	second := w.gw.PaidParams(no, "10.00", "alipay") // the fake gateway numbers each payment anew
	if first["trade_no"] == second["trade_no"] {
		t.Fatalf("the gateway gave both payments trade_no %s", first["trade_no"])
	}
	for i, p := range []map[string]string{first, first, second, first} {
		if status, body, err := epaytest.Post(w.notifyURL(), p); status != 200 || body != "success" || err != nil {
			t.Fatalf("notify %d: %d %q %v", i, status, body, err)
		}
	}
	if got := tpBalance(t, user); got != 1369863 {
		t.Fatalf("balance %d, want one credit of 1369863", got)
	}
	if s := tpOrder(t, user, no); s["trade_no"] != first["trade_no"] {
		t.Fatalf("order trade_no %v, want the first payment %s", s["trade_no"], first["trade_no"])
	}
	d := tpDuplicates(t, w.node, no)
	if len(d) != 1 {
		t.Fatalf("duplicate_payment rows = %v, want 1 (redeliveries of the first payment write none)", d)
	}
	if d[0]["order_no"] != no || d[0]["trade_no"] != first["trade_no"] || d[0]["duplicate_trade_no"] != second["trade_no"] ||
		d[0]["amount"] != "10.00" || d[0]["currency"] != "CNY" || d[0]["provider"] != "epay" || d[0]["user_id"].(float64) != float64(tpUserID(t, user)) {
		t.Fatalf("duplicate_payment detail = %v", d[0])
	}
	tpBooks(t, w.node, user)
}

func TestStripe_SecondPaymentOfAPaidOrderIsAuditedNotCredited(t *testing.T) {
	w := newStripeWorld(t)
	user := w.node.SignUp(t, "twicestripe", "Tollgate-pay-77")
	r := user.Do("POST", "/api/user/topup", map[string]any{"provider": "stripe", "amount": "10.00"})
	wantStatus(t, r, 201)
	no := r.M(t)["order_no"].(string)
	sess, ok := w.api.SessionFor(no)
	if !ok {
		t.Fatal("no session")
	}
	paid := w.api.Object(sess, "complete", "paid", nil)
	other := w.api.Object(sess, "complete", "paid", func(m map[string]any) { m["payment_intent"] = "pi_second_payment" })
	send := func(name string, e stripetest.Event) {
		t.Helper()
		if status, body, err := e.Deliver(w.hook()); err != nil || status != 200 {
			t.Fatalf("%s: %d %s (%v)", name, status, body, err)
		}
	}
	send("paid", stripetest.NewEvent("evt_a", "checkout.session.completed", "2025-03-31.basil", paid, stripeWebhook, time.Time{}))
	send("same payment, another event", stripetest.NewEvent("evt_b", "checkout.session.async_payment_succeeded", "2025-03-31.basil", paid, stripeWebhook, time.Time{}))
	send("another payment", stripetest.NewEvent("evt_c", "checkout.session.completed", "2025-03-31.basil", other, stripeWebhook, time.Time{}))
	if got := tpBalance(t, user); got != 10_000_000 {
		t.Fatalf("balance %d, want one credit of 10000000", got)
	}
	first := paid["payment_intent"]
	if s := tpOrder(t, user, no); s["trade_no"] != first {
		t.Fatalf("order trade_no %v, want %v", s["trade_no"], first)
	}
	d := tpDuplicates(t, w.node, no)
	if len(d) != 1 {
		t.Fatalf("duplicate_payment rows = %v, want 1", d)
	}
	if d[0]["order_no"] != no || d[0]["trade_no"] != first || d[0]["duplicate_trade_no"] != "pi_second_payment" ||
		d[0]["amount"] != "10.00" || d[0]["currency"] != "USD" || d[0]["provider"] != "stripe" || d[0]["event_id"] != "evt_c" {
		t.Fatalf("duplicate_payment detail = %v", d[0])
	}
	tpBooks(t, w.node, user)
}

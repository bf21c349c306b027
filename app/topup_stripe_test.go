package app_test

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"tollgate/app/apptest"
	"tollgate/service/payment/stripe/stripetest"
)

const (
	stripeKey     = "sk_test_tollgate_0123456789abcdef"
	stripeWebhook = "whsec_tollgate_0123456789abcdef"
)

// stripeWorld is a node whose Stripe API base points at a fake, with Stripe enabled (USD at rate 1).
type stripeWorld struct {
	node *apptest.Node
	root *apptest.Client
	api  *stripetest.API
}

func newStripeWorld(t *testing.T) *stripeWorld {
	api := stripetest.New(t, stripeKey)
	env := apptest.NewEnv(t)
	env.Cfg.StripeAPIBase = api.URL
	node := env.Start(t)
	w := &stripeWorld{node: node, root: node.Root(t), api: api}
	r := w.root.Do("PUT", "/api/admin/settings", map[string]any{"payment": map[string]any{
		"stripe": map[string]any{"enabled": true, "secret_key": stripeKey, "webhook_secret": stripeWebhook,
			"currency": "USD", "rate": "1", "min_amount": "1", "max_amount": "500"}}})
	wantStatus(t, r, 200)
	return w
}

func (w *stripeWorld) hook() string { return w.node.URL + "/api/payment/stripe/webhook" }

func TestStripe_SignedCompletedEventCreditsOnceAndRefusesForgeries(t *testing.T) {
	w := newStripeWorld(t)
	user := w.node.SignUp(t, "stripey", "Tollgate-pay-77")
	start := tpBalance(t, user)
	r := user.Do("POST", "/api/user/topup", map[string]any{"provider": "stripe", "amount": "10.00"})
	wantStatus(t, r, 201)
	o := r.M(t)
	no := o["order_no"].(string)
	if o["quota"].(float64) != 10_000_000 || o["currency"] != "USD" || o["status"] != "pending" {
		t.Fatalf("order = %v", o)
	}
	sess, ok := w.api.SessionFor(no)
	if !ok || o["pay_url"] != sess.URL || sess.ClientReferenceID != no || sess.AmountTotal != 1000 || sess.Currency != "usd" ||
		sess.SuccessURL != w.node.URL+"/wallet/return?order="+url.QueryEscape(no) || sess.CancelURL != sess.SuccessURL || sess.ExpiresAt == 0 {
		t.Fatalf("session = %+v (order %v)", sess, o)
	}
	send := func(name string, e stripetest.Event, want int) {
		t.Helper()
		status, body, err := e.Deliver(w.hook())
		if err != nil || status != want {
			t.Fatalf("%s: %d %s (%v), want %d", name, status, body, err, want)
		}
	}
	paid := w.api.Object(sess, "complete", "paid", nil)
	// Forgeries first: nothing moves.
	send("wrong secret", stripetest.NewEvent("evt_1", "checkout.session.completed", "2025-03-31.basil", paid, "whsec_wrong", time.Time{}), 400)
	send("10 minutes old", stripetest.NewEvent("evt_1", "checkout.session.completed", "2025-03-31.basil", paid, stripeWebhook, time.Now().Add(-10*time.Minute)), 400)
	tampered := stripetest.NewEvent("evt_1", "checkout.session.completed", "2025-03-31.basil", paid, stripeWebhook, time.Time{})
	tampered.Body = []byte(strings.Replace(string(tampered.Body), `"amount_total":1000`, `"amount_total":100000`, 1))
	send("body changed after signing", tampered, 400)
	send("amount_total mismatch", stripetest.NewEvent("evt_2", "checkout.session.completed", "2025-03-31.basil",
		w.api.Object(sess, "complete", "paid", func(m map[string]any) { m["amount_total"] = 100 }), stripeWebhook, time.Time{}), 400)
	send("currency mismatch", stripetest.NewEvent("evt_3", "checkout.session.completed", "2025-03-31.basil",
		w.api.Object(sess, "complete", "paid", func(m map[string]any) { m["currency"] = "eur" }), stripeWebhook, time.Time{}), 400)
	send("unknown order", stripetest.NewEvent("evt_4", "checkout.session.completed", "2025-03-31.basil",
		w.api.Object(sess, "complete", "paid", func(m map[string]any) {
			m["metadata"] = map[string]string{"order_no": "T20260101000000nosuchorder"}
			m["client_reference_id"] = "T20260101000000nosuchorder"
		}), stripeWebhook, time.Time{}), 400)
	send("unpaid completion (delayed method)", stripetest.NewEvent("evt_5", "checkout.session.completed", "2025-03-31.basil",
		w.api.Object(sess, "complete", "unpaid", nil), stripeWebhook, time.Time{}), 200)
	send("an event type we do not handle", stripetest.NewEvent("evt_6", "payment_intent.created", "2020-08-27",
		map[string]any{"id": "pi_1", "object": "payment_intent"}, stripeWebhook, time.Time{}), 200)
	if got := tpBalance(t, user); got != start {
		t.Fatalf("forgeries moved the balance: %d", got-start)
	}
	if s := tpOrder(t, user, no); s["status"] != "pending" {
		t.Fatalf("order after forgeries: %v", s)
	}

	// The real event (an API version other than the library's) delivered three times at once, then twice more.
	real := stripetest.NewEvent("evt_paid", "checkout.session.completed", "2024-06-20", paid, stripeWebhook, time.Time{})
	var wg sync.WaitGroup
	errs := make(chan string, 3)
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if status, body, err := real.Deliver(w.hook()); status != 200 || err != nil {
				errs <- fmt.Sprintf("%d %s %v", status, body, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatalf("concurrent delivery: %s", e)
	}
	send("redelivery", real, 200)
	send("async_payment_succeeded for the same order", stripetest.NewEvent("evt_async", "checkout.session.async_payment_succeeded",
		"2025-03-31.basil", paid, stripeWebhook, time.Time{}), 200)
	if got := tpBalance(t, user) - start; got != 10_000_000 {
		t.Fatalf("credited %d, want exactly 10000000", got)
	}
	s := tpOrder(t, user, no)
	if s["status"] != "paid" || s["trade_no"] != "pi_test_000001" {
		t.Fatalf("order = %v", s)
	}
	send("a failure after payment changes nothing", stripetest.NewEvent("evt_late_fail", "checkout.session.async_payment_failed",
		"2025-03-31.basil", paid, stripeWebhook, time.Time{}), 200)
	if s := tpOrder(t, user, no); s["status"] != "paid" {
		t.Fatalf("a paid order turned %v", s["status"])
	}
	if n := tpAuditCount(t, w.node, "topup.paid", no); n != 1 {
		t.Fatalf("topup.paid rows = %d", n)
	}
	tpBooks(t, w.node, user)

	// A delayed payment that fails: the order fails, and a later "paid" for it is refused.
	r = user.Do("POST", "/api/user/topup", map[string]any{"provider": "stripe", "amount": "25"})
	wantStatus(t, r, 201)
	no2 := r.M(t)["order_no"].(string)
	sess2, _ := w.api.SessionFor(no2)
	send("async_payment_failed", stripetest.NewEvent("evt_fail2", "checkout.session.async_payment_failed", "2025-03-31.basil",
		w.api.Object(sess2, "complete", "unpaid", nil), stripeWebhook, time.Time{}), 200)
	if s := tpOrder(t, user, no2); s["status"] != "failed" {
		t.Fatalf("order after async_payment_failed = %v", s)
	}
	send("a failed order notified as paid", stripetest.NewEvent("evt_paid2", "checkout.session.async_payment_succeeded", "2025-03-31.basil",
		w.api.Object(sess2, "complete", "paid", nil), stripeWebhook, time.Time{}), 400)
	// An expired checkout expires its order.
	r = user.Do("POST", "/api/user/topup", map[string]any{"provider": "stripe", "amount": "3"})
	wantStatus(t, r, 201)
	no3 := r.M(t)["order_no"].(string)
	sess3, _ := w.api.SessionFor(no3)
	send("expired", stripetest.NewEvent("evt_exp3", "checkout.session.expired", "2025-03-31.basil",
		w.api.Object(sess3, "expired", "unpaid", nil), stripeWebhook, time.Time{}), 200)
	if s := tpOrder(t, user, no3); s["status"] != "expired" {
		t.Fatalf("order after checkout.session.expired = %v", s)
	}
	if got := tpBalance(t, user) - start; got != 10_000_000 {
		t.Fatalf("credited %d after failures, want 10000000", got)
	}
	if tpAuditCount(t, w.node, "topup.failed", no2) != 1 || tpAuditCount(t, w.node, "topup.expired", no3) != 1 {
		t.Fatal("failed/expired orders are not audited")
	}
	tpBooks(t, w.node, user)

	// Admin views: filter by provider and status, one order's detail.
	r = w.root.Do("GET", "/api/admin/topups?provider=stripe&status=paid&user_id="+fmt.Sprint(tpUserID(t, user)), nil)
	wantStatus(t, r, 200)
	if m := r.M(t); m["total"].(float64) != 1 {
		t.Fatalf("admin filter: %s", r.Body)
	}
	wantStatus(t, w.root.Do("GET", "/api/admin/topups/"+no2, nil), 200)
}

func TestStripe_GatewayDownFailsTheOrderWith502(t *testing.T) {
	w := newStripeWorld(t)
	user := w.node.SignUp(t, "stripey", "Tollgate-pay-77")
	w.api.Server.Close()
	r := user.Do("POST", "/api/user/topup", map[string]any{"provider": "stripe", "amount": "10.00"})
	wantError(t, r, 502, "payment_gateway_error")
	r = user.Do("GET", "/api/user/topups", nil)
	wantStatus(t, r, 200)
	var page struct {
		Items []struct {
			Status string `json:"status"`
		} `json:"items"`
	}
	r.JSON(t, &page)
	if len(page.Items) != 1 || page.Items[0].Status != "failed" {
		t.Fatalf("orders = %s", r.Body)
	}
}

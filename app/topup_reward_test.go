package app_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sync"
	"testing"

	"tollgate/service/payment"
	"tollgate/service/payment/epay"
)

// recordingRewarder stands in for the invite service: it records calls and can fail.
type recordingRewarder struct {
	mu    sync.Mutex
	calls [][3]any
	err   error
}

func (r *recordingRewarder) RewardFirstTopup(_ context.Context, inviteeID, paidUnits int64, orderNo string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, [3]any{inviteeID, paidUnits, orderNo})
	return r.err
}

func TestTopup_RewarderToldOncePerCreditedOrderAndItsErrorNeverFailsTheNotify(t *testing.T) {
	w := newTopupWorld(t)
	wantStatus(t, w.root.Do("PUT", "/api/admin/settings", map[string]any{"payment": map[string]any{
		"bonus": []map[string]string{{"min_amount": "10", "percent": "10"}}}}), 200)
	user := w.node.SignUp(t, "invitee", "Tollgate-pay-77")
	rec := &recordingRewarder{err: errors.New("invite store down")}
	a := w.node.App
	svc := payment.New(a.Store, a.Accounts, a.Settings, a.Audit, payment.Options{Rewarder: rec}, epay.New())
	o := w.order(user, "epay", "alipay", "10.00")
	no := o["order_no"].(string)
	p := w.gw.PaidParams(no, "10.00", "alipay")
	body := url.Values{}
	for k, v := range p {
		body.Set(k, v)
	}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ack, err := svc.Notify(context.Background(), "epay", payment.Inbound{Header: http.Header{}, Body: []byte(body.Encode())}, "203.0.113.9")
			if err != nil || string(ack.Body) != "success" {
				t.Errorf("notify: %q %v", ack.Body, err)
			}
		}()
	}
	wg.Wait()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	base := int64(1369863) // the paid units: the 10 % bonus is not part of what the invitee paid for
	if len(rec.calls) != 1 || rec.calls[0] != [3]any{tpUserID(t, user), base, no} {
		t.Fatalf("rewarder calls = %v", rec.calls)
	}
	if got := tpBalance(t, user); got != base+136986 {
		t.Fatalf("balance %d, want %d", got, base+136986)
	}
	tpBooks(t, w.node, user)
}

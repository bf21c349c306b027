package app_test

import (
	"sync"
	"testing"

	"tollgate/service/payment"
)

// TestAttack_PendingOrderCapUnderConcurrency: a user may hold MaxPendingOrders unpaid orders; 40 concurrent
// creations must not open more.
func TestAttack_PendingOrderCapUnderConcurrency(t *testing.T) {
	w := newTopupWorld(t)
	user := w.node.SignUp(t, "spammer", "Tollgate-pay-77")
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := user.Do("POST", "/api/user/topup", map[string]any{"provider": "epay", "method": "alipay", "amount": "10.00"})
			mu.Lock()
			codes[r.Status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	r := user.Do("GET", "/api/user/topups?status=pending", nil)
	wantStatus(t, r, 200)
	total := int(r.M(t)["total"].(float64))
	if codes[201] > payment.MaxPendingOrders || total > payment.MaxPendingOrders {
		t.Fatalf("%d orders created (%v), %d pending, cap %d", codes[201], codes, total, payment.MaxPendingOrders)
	}
}

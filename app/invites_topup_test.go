package app_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"tollgate/service/payment/epay/epaytest"
)

// The inviter's share of the invitee's first top-up, end to end: paid through the fake Epay gateway, two
// orders notified at once and each again and again, one reward of 5 % of the paid units (not of the bonus).
func TestInvites_FirstTopupThroughEpayPaysTheInviterOnce(t *testing.T) {
	t.Parallel()
	w := newTopupWorld(t)
	setSettings(t, w.root, map[string]any{
		"invite":  map[string]any{"inviter_reward": 0, "invitee_reward": 0, "first_topup_percent": "5"},
		"payment": map[string]any{"bonus": []map[string]string{{"min_amount": "10", "percent": "10"}}}})
	alice, r := register(t, w.node, "alice", "")
	wantStatus(t, r, http.StatusCreated)
	bob, r := register(t, w.node, "bob", *alice.AffCode)
	wantStatus(t, r, http.StatusCreated)
	bc := w.node.Login(t, "bob", "correct-horse-1")

	orders := []string{w.order(bc, "epay", "alipay", "10.00")["order_no"].(string), w.order(bc, "epay", "wxpay", "10.00")["order_no"].(string)}
	var wg sync.WaitGroup
	answers := make(chan string, 6)
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			method := map[int]string{0: "alipay", 1: "wxpay"}[i%2]
			status, body, err := epaytest.Post(w.notifyURL(), w.gw.PaidParams(orders[i%2], "10.00", method))
			answers <- fmt.Sprintf("%d %s %v", status, body, err)
		}()
	}
	wg.Wait()
	close(answers)
	for a := range answers {
		if a != "200 success <nil>" {
			t.Fatalf("notify answered %q", a)
		}
	}
	const paid, bonus, share = 1_369_863, 136_986, 68_493 // 5 % of 1,369,863 = 68,493.15
	wantBooks(t, w.node, bob.ID, 2*(paid+bonus))
	wantBooks(t, w.node, alice.ID, share)
	// A third top-up is not the first.
	third := w.order(bc, "epay", "alipay", "10.00")["order_no"].(string)
	if status, body, _ := epaytest.Post(w.notifyURL(), w.gw.PaidParams(third, "10.00", "alipay")); status != 200 || body != "success" {
		t.Fatalf("third notify: %d %s", status, body)
	}
	wantBooks(t, w.node, alice.ID, share)
	if k, sum := inviteCredits(t, w.node, alice.ID); k != 1 || sum != share {
		t.Fatalf("alice has %d invite credits of %d, want 1 of %d", k, sum, share)
	}
	if v := myInvites(t, w.node.Login(t, "alice", "correct-horse-1")); v.Invited != 1 || v.RewardedQuota != share {
		t.Fatalf("alice's invites = %+v", v)
	}
}

package app_test

import (
	"fmt"
	"testing"
)

func TestTopup_AdminOrdersNameThePayer(t *testing.T) {
	w := newTopupWorld(t)
	alice := w.node.SignUp(t, "alice_pays", "Tollgate-pay-77")
	bob := w.node.SignUp(t, "Bob_Pays", "Tollgate-pay-77")
	a1 := w.order(alice, "epay", "alipay", "10.00")["order_no"].(string)
	b1 := w.order(bob, "epay", "wxpay", "5.00")["order_no"].(string)
	a2 := w.order(alice, "epay", "alipay", "7.30")["order_no"].(string)
	want := map[string]string{a1: "alice_pays", b1: "Bob_Pays", a2: "alice_pays"}
	uid := map[string]int64{"alice_pays": tpUserID(t, alice), "Bob_Pays": tpUserID(t, bob)}

	r := w.root.Do("GET", "/api/admin/topups?size=50", nil)
	wantStatus(t, r, 200)
	seen := 0
	for _, it := range r.M(t)["items"].([]any) {
		o := it.(map[string]any)
		name, ok := want[o["order_no"].(string)]
		if !ok {
			continue
		}
		seen++
		if o["username"] != name || o["user_id"].(float64) != float64(uid[name]) {
			t.Fatalf("order %v: username %v user_id %v, want %s (%d)", o["order_no"], o["username"], o["user_id"], name, uid[name])
		}
	}
	if seen != 3 {
		t.Fatalf("admin list shows %d of our 3 orders: %s", seen, r.Body)
	}
	r = w.root.Do("GET", fmt.Sprintf("/api/admin/topups?user_id=%d", uid["Bob_Pays"]), nil)
	wantStatus(t, r, 200)
	if items := r.M(t)["items"].([]any); len(items) != 1 || items[0].(map[string]any)["username"] != "Bob_Pays" {
		t.Fatalf("bob's orders = %s", r.Body)
	}
	for no, name := range want {
		r := w.root.Do("GET", "/api/admin/topups/"+no, nil)
		wantStatus(t, r, 200)
		if got := r.M(t)["username"]; got != name {
			t.Fatalf("GET /api/admin/topups/%s username = %v, want %s", no, got, name)
		}
	}
}

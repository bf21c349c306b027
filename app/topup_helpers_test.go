package app_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"tollgate/app/apptest"
	"tollgate/model"
	"tollgate/service/payment/epay/epaytest"
)

// topupWorld is a node with root signed in and a fake Epay gateway configured (CNY at 7.3).
type topupWorld struct {
	t    *testing.T
	node *apptest.Node
	root *apptest.Client
	gw   *epaytest.Gateway
}

const epayKey = "epay-merchant-key-0123456789"

func newTopupWorld(t *testing.T) *topupWorld {
	node := apptest.New(t)
	w := &topupWorld{t: t, node: node, root: node.Root(t), gw: epaytest.New(t, "1001", epayKey)}
	r := w.root.Do("PUT", "/api/admin/settings", map[string]any{"payment": map[string]any{
		"epay": map[string]any{"enabled": true, "gateway_url": w.gw.URL, "pid": "1001", "key": epayKey,
			"methods": []string{"alipay", "wxpay"}, "currency": "CNY", "rate": "7.3", "min_amount": "1", "max_amount": "10000"},
		"order_ttl_minutes": 120}})
	wantStatus(t, r, 200)
	return w
}

// order creates a top-up and returns its answer.
func (w *topupWorld) order(c *apptest.Client, provider, method, amount string) map[string]any {
	w.t.Helper()
	r := c.Do("POST", "/api/user/topup", map[string]any{"provider": provider, "method": method, "amount": amount})
	if r.Status != 201 {
		w.t.Fatalf("topup %s %s: %d %s", provider, amount, r.Status, r.Body)
	}
	return r.M(w.t)
}

func (w *topupWorld) notifyURL() string { return w.node.URL + "/api/payment/epay/notify" }

// balance is the user's quota as the console shows it.
func tpBalance(t testing.TB, c *apptest.Client) int64 {
	t.Helper()
	r := c.Do("GET", "/api/user/self", nil)
	wantStatus(t, r, 200)
	var u struct {
		ID    int64 `json:"id"`
		Quota int64 `json:"quota"`
	}
	r.JSON(t, &u)
	return u.Quota
}

func tpUserID(t testing.TB, c *apptest.Client) int64 {
	t.Helper()
	var u struct {
		ID int64 `json:"id"`
	}
	c.Do("GET", "/api/user/self", nil).JSON(t, &u)
	return u.ID
}

// checkBooks asserts Σ credits − Σ logged cost = balance for the user, in SQL and as the console shows it.
func tpBooks(t testing.TB, n *apptest.Node, c *apptest.Client) {
	t.Helper()
	ctx := context.Background()
	id := tpUserID(t, c)
	credits, err := n.App.Store.SumCredits(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var cost struct{ N int64 }
	if err := n.App.Store.DB.Model(&model.UsageLog{}).Select("COALESCE(SUM(cost),0) AS n").Where("user_id = ?", id).Take(&cost).Error; err != nil {
		t.Fatal(err)
	}
	u, err := n.App.Store.UserByID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if credits-cost.N != u.Quota || tpBalance(t, c) != u.Quota {
		t.Fatalf("books: credits %d − cost %d ≠ balance %d (console %d)", credits, cost.N, u.Quota, tpBalance(t, c))
	}
}

// auditCount counts audit rows of action about target ("" = any target).
func tpAuditCount(t testing.TB, n *apptest.Node, action, target string) int64 {
	t.Helper()
	q := n.App.Store.DB.Model(&model.AuditLog{}).Where("action = ?", action)
	if target != "" {
		q = q.Where("target = ?", target)
	}
	var c int64
	if err := q.Count(&c).Error; err != nil {
		t.Fatal(err)
	}
	return c
}

// payQuery is the query of a pay_url.
func tpPayQuery(t testing.TB, payURL string) (*url.URL, url.Values) {
	t.Helper()
	u, err := url.Parse(payURL)
	if err != nil {
		t.Fatal(err)
	}
	return u, u.Query()
}

func tpOrder(t testing.TB, c *apptest.Client, orderNo string) map[string]any {
	t.Helper()
	r := c.Do("GET", "/api/user/topups/"+url.PathEscape(orderNo), nil)
	wantStatus(t, r, 200)
	return r.M(t)
}

func tpHasAny(body []byte, needles ...string) string {
	for _, n := range needles {
		if n != "" && strings.Contains(string(body), n) {
			return n
		}
	}
	return ""
}

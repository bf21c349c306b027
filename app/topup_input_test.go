package app_test

import (
	"strings"
	"testing"

	"tollgate/app/apptest"
	"tollgate/service/payment/epay/epaytest"
)

func TestTopup_BadAmountsProvidersAndMethodsAreRefusedWithClearCodes(t *testing.T) {
	w := newTopupWorld(t)
	user := w.node.SignUp(t, "buyer", "Tollgate-pay-77")
	cases := []struct {
		body   map[string]any
		status int
		code   string
	}{
		{map[string]any{"provider": "epay", "method": "alipay", "amount": "-5"}, 400, "amount_out_of_range"},
		{map[string]any{"provider": "epay", "method": "alipay", "amount": "0"}, 400, "amount_out_of_range"},
		{map[string]any{"provider": "epay", "method": "alipay", "amount": "0.99"}, 400, "amount_out_of_range"},
		{map[string]any{"provider": "epay", "method": "alipay", "amount": "10000.01"}, 400, "amount_out_of_range"},
		{map[string]any{"provider": "epay", "method": "alipay", "amount": "99999999999999999999"}, 400, "amount_out_of_range"},
		{map[string]any{"provider": "epay", "method": "alipay", "amount": strings.Repeat("9", 60)}, 400, "amount_out_of_range"},
		{map[string]any{"provider": "epay", "method": "alipay", "amount": "10.001"}, 400, "amount_too_precise"},
		{map[string]any{"provider": "epay", "method": "alipay", "amount": "abc"}, 400, "amount_invalid"},
		{map[string]any{"provider": "epay", "method": "alipay", "amount": "1e3"}, 400, "amount_invalid"},
		{map[string]any{"provider": "epay", "method": "alipay", "amount": "10,00"}, 400, "amount_invalid"},
		{map[string]any{"provider": "epay", "method": "alipay", "amount": ""}, 400, "amount_invalid"},
		{map[string]any{"provider": "epay", "method": "alipay", "amount": "NaN"}, 400, "amount_invalid"},
		{map[string]any{"provider": "epay", "method": "bitcoin", "amount": "10"}, 400, "method_not_supported"},
		{map[string]any{"provider": "stripe", "amount": "10"}, 403, "provider_disabled"},
	}
	for _, c := range cases {
		wantError(t, user.Do("POST", "/api/user/topup", c.body), c.status, c.code)
	}
	wantField(t, user.Do("POST", "/api/user/topup", map[string]any{"provider": "paypal", "amount": "10"}), "provider")
	wantField(t, user.Do("POST", "/api/user/topup", map[string]any{"provider": "epay", "amount": 10}), "amount")
	if r := user.Do("GET", "/api/user/topups", nil); !strings.Contains(string(r.Body), `"total":0`) {
		t.Fatalf("refused orders were stored: %s", r.Body)
	}

	// No method: the first one offered. Someone else's order is 404 to a user, visible to an admin.
	mine := w.order(user, "epay", "", "12.34")
	if _, q := tpPayQuery(t, mine["pay_url"].(string)); q.Get("type") != "alipay" {
		t.Fatalf("default method: %v", q)
	}
	other := w.node.SignUp(t, "snoop", "Tollgate-pay-77")
	wantError(t, other.Do("GET", "/api/user/topups/"+mine["order_no"].(string), nil), 404, "order_not_found")
	wantError(t, other.Do("GET", "/api/user/topups/T20260101000000nosuchorder", nil), 404, "order_not_found")
	if r := other.Do("GET", "/api/user/topups", nil); !strings.Contains(string(r.Body), `"total":0`) {
		t.Fatalf("another user's orders leak: %s", r.Body)
	}
	wantStatus(t, w.root.Do("GET", "/api/admin/topups/"+mine["order_no"].(string), nil), 200)
	wantError(t, other.Do("GET", "/api/admin/topups", nil), 403, "forbidden")

	// At most 10 unpaid orders at once.
	for i := 1; i < 10; i++ {
		w.order(user, "epay", "wxpay", "1")
	}
	wantError(t, user.Do("POST", "/api/user/topup", map[string]any{"provider": "epay", "amount": "1"}), 429, "too_many_pending_orders")
}

func TestTopup_BonusTiersAndOptions(t *testing.T) {
	w := newTopupWorld(t)
	r := w.root.Do("PUT", "/api/admin/settings", map[string]any{"payment": map[string]any{
		"presets": []string{"10", "50", "100"}, "bonus": []map[string]string{{"min_amount": "50", "percent": "5"}, {"min_amount": "100", "percent": "10"}}}})
	wantStatus(t, r, 200)
	user := w.node.SignUp(t, "bonus", "Tollgate-pay-77")
	r = user.Do("GET", "/api/user/topup/options", nil)
	wantStatus(t, r, 200)
	var opts struct {
		Providers []struct {
			Name, Currency, Rate string
			Methods              []string
			Min                  string `json:"min_amount"`
			Max                  string `json:"max_amount"`
		} `json:"providers"`
		Presets []string `json:"presets"`
		Bonus   []struct {
			MinAmount string `json:"min_amount"`
			Percent   string `json:"percent"`
		} `json:"bonus"`
		TTL int `json:"order_ttl_minutes"`
	}
	r.JSON(t, &opts)
	if len(opts.Providers) != 1 || opts.Providers[0].Name != "epay" || opts.Providers[0].Currency != "CNY" ||
		opts.Providers[0].Rate != "7.3" || len(opts.Providers[0].Methods) != 2 || opts.Providers[0].Min != "1" ||
		len(opts.Presets) != 3 || len(opts.Bonus) != 2 || opts.TTL != 120 {
		t.Fatalf("options = %s", r.Body)
	}
	if leak := tpHasAny(r.Body, epayKey, "gateway_url", w.gw.URL); leak != "" {
		t.Fatalf("options show %q: %s", leak, r.Body)
	}
	o := w.order(user, "epay", "alipay", "100.00")
	if o["quota"].(float64) != 15068493 || o["bonus"].(float64) != 1369863 {
		t.Fatalf("100 CNY with a 10 %% tier = %v", o)
	}
	if status, body, _ := epaytest.Post(w.notifyURL(), w.gw.PaidParams(o["order_no"].(string), "100.00", "alipay")); status != 200 || body != "success" {
		t.Fatalf("notify: %d %s", status, body)
	}
	if got := tpBalance(t, user); got != 15068493 {
		t.Fatalf("balance %d, want 15068493", got)
	}
	tpBooks(t, w.node, user)
}

func TestPaymentSettings_ValidatedMaskedAndSealedAtRest(t *testing.T) {
	env := apptest.NewEnv(t)
	node := env.Start(t)
	root := node.Root(t)
	gw := epaytest.New(t, "1001", epayKey)
	valid := func() map[string]any {
		return map[string]any{
			"epay": map[string]any{"enabled": true, "gateway_url": gw.URL, "pid": "1001", "key": epayKey,
				"methods": []string{"alipay"}, "currency": "CNY", "rate": "7.3", "min_amount": "1", "max_amount": "10000"},
			"stripe": map[string]any{"enabled": true, "secret_key": stripeKey, "webhook_secret": stripeWebhook,
				"currency": "USD", "rate": "1", "min_amount": "1", "max_amount": "500"},
			"presets": []string{"10", "50"}, "bonus": []map[string]string{{"min_amount": "50", "percent": "5"}},
			"order_ttl_minutes": 120}
	}
	bad := []struct {
		field  string
		change func(p map[string]any)
	}{
		{"payment.epay.rate", func(p map[string]any) { p["epay"].(map[string]any)["rate"] = "0" }},
		{"payment.stripe.rate", func(p map[string]any) { p["stripe"].(map[string]any)["rate"] = "-1" }},
		{"payment.epay.rate", func(p map[string]any) { p["epay"].(map[string]any)["rate"] = "seven" }},
		{"payment.epay.min_amount", func(p map[string]any) { p["epay"].(map[string]any)["min_amount"] = "20000" }},
		{"payment.epay.min_amount", func(p map[string]any) { p["epay"].(map[string]any)["min_amount"] = "1.001" }},
		{"payment.stripe.currency", func(p map[string]any) { p["stripe"].(map[string]any)["currency"] = "usd" }},
		{"payment.stripe.currency", func(p map[string]any) { p["stripe"].(map[string]any)["currency"] = "KWD" }},
		{"payment.presets", func(p map[string]any) { p["presets"] = []string{"600"} }},
		{"payment.presets", func(p map[string]any) { p["presets"] = []string{"1.005"} }},
		{"payment.bonus.percent", func(p map[string]any) { p["bonus"] = []map[string]string{{"min_amount": "50", "percent": "101"}} }},
		{"payment.bonus.min_amount", func(p map[string]any) { p["bonus"] = []map[string]string{{"min_amount": "-5", "percent": "1"}} }},
		{"payment.order_ttl_minutes", func(p map[string]any) { p["order_ttl_minutes"] = 0 }},
		{"payment.order_ttl_minutes", func(p map[string]any) { p["order_ttl_minutes"] = 10081 }},
		{"payment.epay.key", func(p map[string]any) { p["epay"].(map[string]any)["key"] = "" }},
		{"payment.epay.gateway_url", func(p map[string]any) { p["epay"].(map[string]any)["gateway_url"] = "ftp://x" }},
		{"payment.epay.methods", func(p map[string]any) { p["epay"].(map[string]any)["methods"] = []string{"Ali Pay"} }},
		{"payment.stripe.webhook_secret", func(p map[string]any) { p["stripe"].(map[string]any)["webhook_secret"] = "" }},
	}
	for _, b := range bad {
		p := valid()
		b.change(p)
		wantField(t, root.Do("PUT", "/api/admin/settings", map[string]any{"payment": p}), b.field)
	}
	r := root.Do("PUT", "/api/admin/settings", map[string]any{"payment": valid()})
	wantStatus(t, r, 200)
	if leak := tpHasAny(r.Body, epayKey, stripeKey, stripeWebhook); leak != "" {
		t.Fatalf("PUT answer shows %q", leak)
	}

	// GET masks; sending the masked view back keeps the stored secrets (a notify signed with the key works).
	r = root.Do("GET", "/api/admin/settings", nil)
	wantStatus(t, r, 200)
	if leak := tpHasAny(r.Body, epayKey, stripeKey, stripeWebhook); leak != "" {
		t.Fatalf("GET settings shows %q", leak)
	}
	var got struct {
		Payment map[string]any `json:"payment"`
	}
	r.JSON(t, &got)
	if k := got.Payment["epay"].(map[string]any)["key"].(string); !strings.Contains(k, "****") {
		t.Fatalf("epay key shown as %q", k)
	}
	wantStatus(t, root.Do("PUT", "/api/admin/settings", map[string]any{"payment": got.Payment}), 200)
	if s := node.App.Settings.Get().Payment; s.Epay.Key != epayKey || s.Stripe.SecretKey != stripeKey || s.Stripe.WebhookSecret != stripeWebhook {
		t.Fatalf("masked round trip changed the secrets: %+v", s)
	}
	forged := got.Payment
	forged["epay"].(map[string]any)["key"] = "abcd****wxyz"
	wantField(t, root.Do("PUT", "/api/admin/settings", map[string]any{"payment": forged}), "payment.epay.key")

	user := node.SignUp(t, "masked", "Tollgate-pay-77")
	o := user.Do("POST", "/api/user/topup", map[string]any{"provider": "epay", "amount": "7.30"})
	wantStatus(t, o, 201)
	no := o.M(t)["order_no"].(string)
	if status, body, _ := epaytest.Post(node.URL+"/api/payment/epay/notify", gw.PaidParams(no, "7.30", "alipay")); status != 200 || body != "success" {
		t.Fatalf("notify after the masked round trip: %d %s", status, body)
	}
	if r := user.Do("GET", "/api/user/topup/options", nil); tpHasAny(r.Body, epayKey, stripeKey, stripeWebhook) != "" {
		t.Fatalf("options leak a secret: %s", r.Body)
	}
	// A second node (another process on the same store) opens the sealed secrets.
	if s := env.Start(t).App.Settings.Get().Payment; s.Epay.Key != epayKey || s.Stripe.WebhookSecret != stripeWebhook {
		t.Fatalf("a fresh node reads the secrets as %+v", s)
	}
	if place, needle := env.StoreHolds(t, node, epayKey, stripeKey, stripeWebhook); place != "" {
		t.Fatalf("the store holds %q in clear in %s", needle, place)
	}
}

func TestTopup_PublicURLBuildsTheNotifyAndReturnURLs(t *testing.T) {
	env := apptest.NewEnv(t)
	env.Cfg.PublicURL = "https://gw.example.com"
	node := env.Start(t)
	gw := epaytest.New(t, "1001", epayKey)
	wantStatus(t, node.Root(t).Do("PUT", "/api/admin/settings", map[string]any{"payment": map[string]any{
		"epay": map[string]any{"enabled": true, "gateway_url": gw.URL + "/", "pid": "1001", "key": epayKey, "methods": []string{"alipay"}}}}), 200)
	user := node.SignUp(t, "public", "Tollgate-pay-77")
	r := user.Do("POST", "/api/user/topup", map[string]any{"provider": "epay", "amount": "1"})
	wantStatus(t, r, 201)
	m := r.M(t)
	u, q := tpPayQuery(t, m["pay_url"].(string))
	if u.Path != "/submit.php" || q.Get("notify_url") != "https://gw.example.com/api/payment/epay/notify" ||
		q.Get("return_url") != "https://gw.example.com/wallet/return?order="+m["order_no"].(string) || gw.CheckSubmit(q) != "" {
		t.Fatalf("pay_url = %s", m["pay_url"])
	}
}

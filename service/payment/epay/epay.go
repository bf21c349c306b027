// Package epay is the Epay (易支付) provider: a signed redirect to the gateway's submit.php and a signed
// asynchronous notify. The sign is the lowercase hex MD5 of the parameters other than sign, sign_type and
// empty values, sorted by name and joined as k=v&k=v, followed directly by the merchant key.
package epay

import (
	"context"
	"crypto/md5"
	"crypto/subtle"
	"encoding/hex"
	"net/url"
	"sort"
	"strings"

	"tollgate/model"
	"tollgate/service/payment"
	"tollgate/service/setting"
)

// Provider implements payment.Provider for Epay.
type Provider struct{}

// New returns the Epay provider.
func New() Provider { return Provider{} }

// Name implements payment.Provider.
func (Provider) Name() string { return "epay" }

// Terms implements payment.Provider.
func (Provider) Terms(p *setting.Payment) payment.Terms {
	e := p.Epay
	return payment.Terms{Enabled: e.Enabled && e.GatewayURL != "" && e.PID != "" && e.Key != "", Methods: e.Methods,
		Currency: e.Currency, Rate: e.Rate, MinAmount: e.MinAmount, MaxAmount: e.MaxAmount}
}

// Sign is the Epay signature of params under key.
func Sign(params url.Values, key string) string {
	names := make([]string, 0, len(params))
	for k := range params {
		if k == "sign" || k == "sign_type" || params.Get(k) == "" {
			continue
		}
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	for i, k := range names {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(params.Get(k))
	}
	b.WriteString(key)
	sum := md5.Sum([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// submitURL is gateway_url/submit.php (a gateway_url that already names a .php page is used as is).
func submitURL(gateway string) string {
	g := strings.TrimRight(gateway, "/")
	if strings.HasSuffix(g, ".php") {
		return g
	}
	return g + "/submit.php"
}

// Checkout implements payment.Provider: the signed submit.php URL (no call to the gateway).
func (Provider) Checkout(_ context.Context, p *setting.Payment, o *model.TopupOrder, u payment.URLs) (string, error) {
	e := p.Epay
	v := url.Values{"pid": {e.PID}, "type": {o.Method}, "out_trade_no": {o.OrderNo}, "notify_url": {u.Notify},
		"return_url": {u.Return}, "name": {"Top-up " + o.OrderNo}, "money": {o.Amount}}
	v.Set("sign", Sign(v, e.Key))
	v.Set("sign_type", "MD5")
	return submitURL(e.GatewayURL) + "?" + v.Encode(), nil
}

// Verify implements payment.Provider: the notify's parameters come in the query (GET) or a form body (POST).
// Only TRADE_SUCCESS with a valid sign and our pid is a payment; anything else is refused.
func (Provider) Verify(_ context.Context, p *setting.Payment, in payment.Inbound) (payment.Notice, error) {
	e := p.Epay
	if e.Key == "" || e.PID == "" {
		return payment.Notice{}, payment.Refusal(payment.CodeNotConfigured)
	}
	params := url.Values{}
	for k, vs := range in.Query {
		params[k] = vs
	}
	if len(in.Body) > 0 {
		form, err := url.ParseQuery(string(in.Body))
		if err != nil {
			return payment.Notice{}, payment.Refusal(payment.CodeMalformed)
		}
		for k, vs := range form {
			params[k] = vs
		}
	}
	for _, vs := range params {
		if len(vs) != 1 { // a repeated name is ambiguous: which one did the gateway sign?
			return payment.Notice{}, payment.Refusal(payment.CodeMalformed)
		}
	}
	got := strings.ToLower(params.Get("sign"))
	if st := params.Get("sign_type"); st != "" && !strings.EqualFold(st, "MD5") {
		return payment.Notice{}, payment.Refusal(payment.CodeBadSignature)
	}
	want := Sign(params, e.Key)
	if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return payment.Notice{}, payment.Refusal(payment.CodeBadSignature)
	}
	if subtle.ConstantTimeCompare([]byte(params.Get("pid")), []byte(e.PID)) != 1 {
		return payment.Notice{}, payment.Refusal(payment.CodeWrongMerchant)
	}
	if params.Get("trade_status") != "TRADE_SUCCESS" {
		return payment.Notice{}, payment.Refusal(payment.CodeNotPaid)
	}
	money, ok := setting.ParseDecimal(params.Get("money"))
	if !ok || params.Get("out_trade_no") == "" {
		return payment.Notice{}, payment.Refusal(payment.CodeMalformed)
	}
	return payment.Notice{Kind: payment.NoticePaid, OrderNo: params.Get("out_trade_no"), TradeNo: params.Get("trade_no"),
		Amount: money, Type: "TRADE_SUCCESS"}, nil
}

// Ack implements payment.Provider: Epay stops retrying on the plain text "success".
func (Provider) Ack() payment.Ack {
	return payment.Ack{ContentType: "text/plain; charset=utf-8", Body: []byte("success")}
}

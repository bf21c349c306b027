// Package stripe is the Stripe provider: a Checkout Session created with the official library (its own
// client and backend, never the library's package-level globals) and a webhook verified with the library's
// signature check. The handler reads only the few fields it needs, so events of any API version work.
package stripe

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	sg "github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/webhook"
	"github.com/tidwall/gjson"

	"tollgate/model"
	"tollgate/service/payment"
	"tollgate/service/setting"
)

// Tolerance is how old a webhook's signed timestamp may be.
const Tolerance = 5 * time.Minute

// Provider implements payment.Provider for Stripe Checkout.
type Provider struct {
	backends *sg.Backends
	now      func() time.Time
}

// New returns the provider talking to apiBase ("" = https://api.stripe.com), e.g. a proxy or a test fake.
func New(apiBase string) *Provider {
	cfg := &sg.BackendConfig{
		HTTPClient:        &http.Client{Timeout: 30 * time.Second},
		MaxNetworkRetries: sg.Int64(1), // retried with the same idempotency key: one session per order
		LeveledLogger:     slogger{},
	}
	if apiBase != "" {
		cfg.URL = sg.String(strings.TrimRight(apiBase, "/"))
	}
	return &Provider{backends: sg.NewBackendsWithConfig(cfg), now: time.Now}
}

// slogger sends the library's log lines to slog (warnings and errors only: its debug lines name every call).
type slogger struct{}

func (slogger) Debugf(string, ...any)     {}
func (slogger) Infof(string, ...any)      {}
func (slogger) Warnf(f string, v ...any)  { slog.Warn("stripe: " + fmt.Sprintf(f, v...)) }
func (slogger) Errorf(f string, v ...any) { slog.Error("stripe: " + fmt.Sprintf(f, v...)) }

// Name implements payment.Provider.
func (*Provider) Name() string { return "stripe" }

// Terms implements payment.Provider.
func (*Provider) Terms(p *setting.Payment) payment.Terms {
	s := p.Stripe
	return payment.Terms{Enabled: s.Enabled && s.SecretKey != "" && s.WebhookSecret != "", Currency: s.Currency,
		Rate: s.Rate, MinAmount: s.MinAmount, MaxAmount: s.MaxAmount}
}

// minor is amount in the currency's smallest unit (10.00 USD → 1000, 1000 JPY → 1000).
func minor(amount decimal.Decimal, currency string) int64 {
	places, _ := setting.CurrencyDecimals(currency)
	return amount.Shift(int32(places)).IntPart()
}

// Checkout implements payment.Provider: one Checkout Session per order (the order number is its idempotency
// key, client_reference_id and metadata.order_no); the console's return page is both success and cancel URL.
func (p *Provider) Checkout(ctx context.Context, ps *setting.Payment, o *model.TopupOrder, u payment.URLs) (string, error) {
	amount, err := decimal.NewFromString(o.Amount)
	if err != nil {
		return "", fmt.Errorf("order amount %q: %w", o.Amount, err)
	}
	params := &sg.CheckoutSessionCreateParams{
		Mode:              sg.String(string(sg.CheckoutSessionModePayment)),
		ClientReferenceID: sg.String(o.OrderNo),
		SuccessURL:        sg.String(u.Return),
		CancelURL:         sg.String(u.Return),
		LineItems: []*sg.CheckoutSessionCreateLineItemParams{{
			Quantity: sg.Int64(1),
			PriceData: &sg.CheckoutSessionCreateLineItemPriceDataParams{
				Currency:    sg.String(strings.ToLower(o.Currency)),
				UnitAmount:  sg.Int64(minor(amount, o.Currency)),
				ProductData: &sg.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: sg.String("Top-up " + o.OrderNo)},
			},
		}},
	}
	params.AddMetadata("order_no", o.OrderNo)
	// Stripe accepts a session expiry 30 minutes to 24 hours ahead; inside that window the session ends with
	// the order, outside it Stripe's default (24 h) applies and a late payment is still credited.
	if ttl := o.ExpiresAt.Sub(p.now()); ttl >= 31*time.Minute && ttl <= 24*time.Hour {
		params.ExpiresAt = sg.Int64(o.ExpiresAt.Unix())
	}
	params.SetIdempotencyKey("tollgate-checkout-" + o.OrderNo)
	params.Context = ctx
	client := sg.NewClient(ps.Stripe.SecretKey, sg.WithBackends(p.backends))
	sess, err := client.V1CheckoutSessions.Create(ctx, params)
	if err != nil {
		return "", fmt.Errorf("stripe checkout session: %w", err)
	}
	if sess.URL == "" {
		return "", fmt.Errorf("stripe checkout session %s has no url", sess.ID)
	}
	return sess.URL, nil
}

// Verify implements payment.Provider: the library checks Stripe-Signature (HMAC-SHA256 of "t.body" with the
// webhook secret, 5-minute tolerance; any API version). checkout.session.completed pays only when its
// payment_status is paid (a delayed method pays later with async_payment_succeeded); async_payment_failed
// fails the order and expired expires it; every other event is acknowledged and ignored.
func (p *Provider) Verify(_ context.Context, ps *setting.Payment, in payment.Inbound) (payment.Notice, error) {
	secret := ps.Stripe.WebhookSecret
	if secret == "" {
		return payment.Notice{}, payment.Refusal(payment.CodeNotConfigured)
	}
	ev, err := webhook.ConstructEventWithOptions(in.Body, in.Header.Get("Stripe-Signature"), secret,
		webhook.ConstructEventOptions{Tolerance: Tolerance, IgnoreAPIVersionMismatch: true})
	if err != nil {
		return payment.Notice{}, payment.Refusal(payment.CodeBadSignature)
	}
	if ev.Data == nil {
		return payment.Notice{}, payment.Refusal(payment.CodeMalformed)
	}
	kind := ""
	obj := ev.Data.Raw
	switch string(ev.Type) {
	case "checkout.session.completed":
		kind = payment.NoticeIgnore
		if gjson.GetBytes(obj, "payment_status").String() == "paid" {
			kind = payment.NoticePaid
		}
	case "checkout.session.async_payment_succeeded":
		kind = payment.NoticePaid
	case "checkout.session.async_payment_failed":
		kind = payment.NoticeFailed
	case "checkout.session.expired":
		kind = payment.NoticeExpired
	default:
		return payment.Notice{Kind: payment.NoticeIgnore, EventID: ev.ID, Type: string(ev.Type)}, nil
	}
	if kind == payment.NoticeIgnore {
		return payment.Notice{Kind: kind, EventID: ev.ID, Type: string(ev.Type)}, nil
	}
	orderNo := gjson.GetBytes(obj, "metadata.order_no").String()
	ref := gjson.GetBytes(obj, "client_reference_id").String()
	if orderNo == "" {
		orderNo = ref
	}
	if orderNo == "" || (ref != "" && ref != orderNo) {
		return payment.Notice{}, payment.Refusal(payment.CodeMalformed)
	}
	currency := strings.ToUpper(gjson.GetBytes(obj, "currency").String())
	total := gjson.GetBytes(obj, "amount_total")
	places, ok := setting.CurrencyDecimals(currency)
	if kind == payment.NoticePaid && (!ok || total.Type != gjson.Number) {
		return payment.Notice{}, payment.Refusal(payment.CodeMalformed)
	}
	trade := gjson.GetBytes(obj, "payment_intent")
	tradeNo := trade.String()
	if trade.IsObject() {
		tradeNo = trade.Get("id").String()
	}
	if tradeNo == "" {
		tradeNo = gjson.GetBytes(obj, "id").String()
	}
	return payment.Notice{Kind: kind, OrderNo: orderNo, TradeNo: tradeNo, EventID: ev.ID, Type: string(ev.Type),
		Amount: decimal.New(total.Int(), -int32(places)), Currency: currency}, nil
}

// Ack implements payment.Provider.
func (*Provider) Ack() payment.Ack {
	return payment.Ack{ContentType: "application/json; charset=utf-8", Body: []byte(`{"received":true}`)}
}

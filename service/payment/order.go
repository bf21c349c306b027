package payment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/pricing"
	"tollgate/service/secret"
	"tollgate/service/setting"
)

// MaxPendingOrders is how many unpaid, unexpired orders a user may hold at once.
const MaxPendingOrders = 10

// ProviderOption is one enabled provider as the wallet page sees it (never a secret).
type ProviderOption struct {
	Name      string   `json:"name"`
	Methods   []string `json:"methods"`
	Currency  string   `json:"currency"`
	Rate      string   `json:"rate"`
	MinAmount string   `json:"min_amount"`
	MaxAmount string   `json:"max_amount"`
}

// TopupOptions is GET /api/user/topup/options.
type TopupOptions struct {
	Providers       []ProviderOption    `json:"providers"`
	Presets         []string            `json:"presets"`
	Bonus           []setting.BonusTier `json:"bonus"`
	OrderTTLMinutes int                 `json:"order_ttl_minutes"`
}

// Options lists the enabled providers and the order rules.
func (s *Service) Options() TopupOptions {
	p := &s.settings.Get().Payment
	out := TopupOptions{Providers: []ProviderOption{}, Presets: append([]string{}, p.Presets...),
		Bonus: append([]setting.BonusTier{}, p.Bonus...), OrderTTLMinutes: p.OrderTTLMinutes}
	for _, name := range s.names {
		t := s.providers[name].Terms(p)
		if !t.Enabled {
			continue
		}
		out.Providers = append(out.Providers, ProviderOption{Name: name, Methods: append([]string{}, t.Methods...),
			Currency: t.Currency, Rate: t.Rate, MinAmount: t.MinAmount, MaxAmount: t.MaxAmount})
	}
	return out
}

// CreateInput is POST /api/user/topup.
type CreateInput struct {
	Provider string `json:"provider"`
	Method   string `json:"method"`
	Amount   string `json:"amount"`
}

// Created is the answer to POST /api/user/topup.
type Created struct {
	OrderNo   string    `json:"order_no"`
	PayURL    string    `json:"pay_url"`
	Amount    string    `json:"amount"`
	Currency  string    `json:"currency"`
	Quota     int64     `json:"quota"`
	Bonus     int64     `json:"bonus"`
	Status    string    `json:"status"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Quote is what an amount buys: base units at the rate plus the bonus of the highest tier it reaches, each
// rounded once, half away from zero (pricing.UnitsFor).
func Quote(amount, rate decimal.Decimal, tiers []setting.BonusTier) (quota, bonus int64, ok bool) {
	base, ok := pricing.UnitsFor(amount, rate)
	if !ok {
		return 0, 0, false
	}
	var best, bestMin decimal.Decimal
	found := false
	for _, t := range tiers {
		lo, ok1 := setting.ParseDecimal(t.MinAmount)
		pct, ok2 := setting.ParseDecimal(t.Percent)
		if !ok1 || !ok2 || amount.LessThan(lo) {
			continue
		}
		if !found || lo.GreaterThan(bestMin) {
			best, bestMin, found = pct, lo, true
		}
	}
	if found && best.Sign() > 0 {
		if bonus, ok = pricing.UnitsFor(amount.Mul(best).Div(decimal.NewFromInt(100)), rate); !ok {
			return 0, 0, false
		}
	}
	if base+bonus > pricing.MaxCost {
		return 0, 0, false
	}
	return base + bonus, bonus, true
}

// numberRe is any plain decimal number, sign allowed (so "-5" is out of range rather than not a number).
var numberRe = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

// parseAmount checks an amount against a provider's terms: a plain decimal, at most the currency's minor
// digits, within [min, max].
func parseAmount(raw string, t Terms) (decimal.Decimal, error) {
	raw = strings.TrimSpace(raw)
	outOfRange := apperr.New(http.StatusBadRequest, "amount_out_of_range", t.MinAmount, t.MaxAmount, t.Currency)
	if !numberRe.MatchString(raw) {
		return decimal.Decimal{}, apperr.New(http.StatusBadRequest, "amount_invalid")
	}
	if len(raw) > 40 {
		return decimal.Decimal{}, outOfRange
	}
	d, err := decimal.NewFromString(raw)
	if err != nil {
		return d, apperr.New(http.StatusBadRequest, "amount_invalid")
	}
	places, _ := setting.CurrencyDecimals(t.Currency)
	if setting.Places(d) > places {
		return d, apperr.New(http.StatusBadRequest, "amount_too_precise", places, t.Currency)
	}
	lo, _ := setting.ParseDecimal(t.MinAmount)
	hi, _ := setting.ParseDecimal(t.MaxAmount)
	if d.Sign() <= 0 || d.LessThan(lo) || d.GreaterThan(hi) {
		return d, outOfRange
	}
	return d, nil
}

// newOrderNo is time-ordered (sortable, readable) and unguessable: UTC seconds then 12 random base62 chars.
func newOrderNo(now time.Time) (string, error) {
	r, err := secret.RandomBase62(12)
	if err != nil {
		return "", err
	}
	return "T" + now.UTC().Format("20060102150405") + r, nil
}

// Create opens an order for userID and asks the provider where to pay. base is the site's public URL (the
// notify and return URLs are built on it).
func (s *Service) Create(ctx context.Context, userID int64, in CreateInput, base string) (*Created, error) {
	st := s.settings.Get()
	prov, ok := s.providers[in.Provider]
	if !ok {
		return nil, apperr.Field("provider", "must be one of "+s.providerList())
	}
	t := prov.Terms(&st.Payment)
	if !t.Enabled {
		return nil, apperr.New(http.StatusForbidden, "provider_disabled", in.Provider)
	}
	if len(t.Methods) > 0 {
		if in.Method == "" {
			in.Method = t.Methods[0]
		}
		if !contains(t.Methods, in.Method) {
			return nil, apperr.New(http.StatusBadRequest, "method_not_supported", in.Method, in.Provider)
		}
	} else if in.Method != "" {
		return nil, apperr.New(http.StatusBadRequest, "method_not_supported", in.Method, in.Provider)
	}
	amount, err := parseAmount(in.Amount, t)
	if err != nil {
		return nil, err
	}
	rate, _ := setting.ParseDecimal(t.Rate)
	quota, bonus, ok := Quote(amount, rate, st.Payment.Bonus)
	if !ok || quota <= 0 {
		return nil, apperr.New(http.StatusBadRequest, "amount_out_of_range", t.MinAmount, t.MaxAmount, t.Currency)
	}
	now := s.opt.Now()
	no, err := newOrderNo(now)
	if err != nil {
		return nil, err
	}
	places, _ := setting.CurrencyDecimals(t.Currency)
	o := &model.TopupOrder{OrderNo: no, UserID: userID, Provider: in.Provider, Method: in.Method,
		Amount: amount.StringFixed(int32(places)), Currency: t.Currency, Quota: quota, Bonus: bonus,
		Status: model.TopupPending, CreatedAt: now, UpdatedAt: now,
		ExpiresAt: now.Add(time.Duration(st.Payment.OrderTTLMinutes) * time.Minute)}
	if created, err := s.store.CreateTopupCapped(ctx, o, MaxPendingOrders, now); err != nil {
		return nil, fmt.Errorf("create order: %w", err)
	} else if !created { // counted with the insert, under a lock of the user: concurrency cannot pass the cap
		return nil, apperr.New(http.StatusTooManyRequests, "too_many_pending_orders", MaxPendingOrders)
	}
	base = strings.TrimRight(base, "/")
	urls := URLs{Notify: base + "/api/payment/" + in.Provider + "/notify",
		Return: base + "/wallet/return?order=" + url.QueryEscape(no)}
	payURL, err := prov.Checkout(ctx, &st.Payment, o, urls)
	if err != nil {
		slog.Error("checkout failed", "provider", in.Provider, "order", no, "err", err)
		if _, ferr := s.store.SettleTopup(context.WithoutCancel(ctx), no, in.Provider, []string{model.TopupPending},
			model.TopupFailed, "", s.opt.Now()); ferr != nil {
			slog.Error("mark order failed", "order", no, "err", ferr)
		}
		var ae *apperr.Error
		if errors.As(err, &ae) {
			return nil, ae
		}
		return nil, apperr.New(http.StatusBadGateway, "payment_gateway_error", in.Provider)
	}
	return &Created{OrderNo: no, PayURL: payURL, Amount: o.Amount, Currency: o.Currency, Quota: quota, Bonus: bonus,
		Status: o.Status, ExpiresAt: o.ExpiresAt}, nil
}

// providerList names the providers for a validation message ("epay", "stripe").
func (s *Service) providerList() string { return `"` + strings.Join(s.names, `", "`) + `"` }

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// List pages through orders (f.UserID 0: everyone's), expiring overdue ones first. A status or provider that
// no order can have is 400 naming the field (a typo must not read as "no orders").
func (s *Service) List(ctx context.Context, f model.TopupFilter, p model.Page) ([]model.TopupOrder, int64, error) {
	switch f.Status {
	case "", model.TopupPending, model.TopupPaid, model.TopupFailed, model.TopupExpired:
	default:
		return nil, 0, apperr.Field("status", `must be "pending", "paid", "failed" or "expired"`)
	}
	if _, ok := s.providers[f.Provider]; f.Provider != "" && !ok {
		return nil, 0, apperr.Field("provider", "must be one of "+s.providerList())
	}
	if _, err := s.store.ExpireTopups(ctx, f.UserID, s.opt.Now()); err != nil {
		return nil, 0, fmt.Errorf("expire overdue orders: %w", err)
	}
	items, total, err := s.store.ListTopups(ctx, f, p)
	if err != nil {
		return nil, 0, fmt.Errorf("list orders: %w", err)
	}
	if items == nil {
		items = []model.TopupOrder{}
	}
	return items, total, nil
}

// Get returns one order; with userID ≠ 0 only that user's (another user's order is 404, as if missing).
func (s *Service) Get(ctx context.Context, userID int64, orderNo string) (*model.TopupOrder, error) {
	o, err := s.store.GetTopup(ctx, orderNo)
	if errors.Is(err, model.ErrNotFound) || (err == nil && userID != 0 && o.UserID != userID) {
		return nil, apperr.New(http.StatusNotFound, "order_not_found")
	}
	if err != nil {
		return nil, fmt.Errorf("load order %s: %w", orderNo, err)
	}
	if now := s.opt.Now(); o.Status == model.TopupPending && !o.ExpiresAt.After(now) {
		if _, err := s.store.SettleTopup(ctx, o.OrderNo, o.Provider, []string{model.TopupPending}, model.TopupExpired, "", now); err != nil {
			return nil, fmt.Errorf("expire order %s: %w", orderNo, err)
		}
		return s.store.GetTopup(ctx, orderNo)
	}
	return o, nil
}

// AdminList is List with each order's payer name (one lookup for the page).
func (s *Service) AdminList(ctx context.Context, f model.TopupFilter, p model.Page) ([]model.TopupOrder, int64, error) {
	items, total, err := s.List(ctx, f, p)
	if err != nil {
		return nil, 0, err
	}
	if err := s.store.FillTopupUsernames(ctx, items); err != nil {
		return nil, 0, fmt.Errorf("order usernames: %w", err)
	}
	return items, total, nil
}

// AdminGet is Get of any user's order, with its payer's name.
func (s *Service) AdminGet(ctx context.Context, orderNo string) (*model.TopupOrder, error) {
	o, err := s.Get(ctx, 0, orderNo)
	if err != nil {
		return nil, err
	}
	one := []model.TopupOrder{*o}
	if err := s.store.FillTopupUsernames(ctx, one); err != nil {
		return nil, fmt.Errorf("order username: %w", err)
	}
	return &one[0], nil
}

// parseStored reads an amount as stored on an order.
func parseStored(s string) (decimal.Decimal, error) { return decimal.NewFromString(s) }

package payment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"

	"tollgate/model"
	"tollgate/service/account"
	"tollgate/service/apperr"
	"tollgate/service/audit"
)

// Notify handles a provider's notification: verify it, then settle the order it names. A paid order is
// credited through account.Credit whose claim is one conditional UPDATE (pending|expired → paid) and whose
// IdemKey is topup:<order_no>, so any number of deliveries, concurrent or not, credit once; a repeat of a
// settled order is acknowledged and moves nothing. Every refusal is a 400 with a code and (capped) an
// audit row topup.notify_rejected.
func (s *Service) Notify(ctx context.Context, provider string, in Inbound, ip string) (Ack, error) {
	prov, ok := s.providers[provider]
	if !ok {
		return Ack{}, apperr.New(http.StatusNotFound, "route_not_found")
	}
	st := s.settings.Get()
	n, err := prov.Verify(ctx, &st.Payment, in)
	if err != nil {
		return Ack{}, s.reject(ctx, provider, "", ip, err)
	}
	if n.Kind == NoticeIgnore {
		return prov.Ack(), nil
	}
	o, err := s.store.GetTopup(ctx, n.OrderNo)
	if errors.Is(err, model.ErrNotFound) || (err == nil && o.Provider != provider) {
		return Ack{}, s.reject(ctx, provider, n.OrderNo, ip, Refusal("notify_unknown_order"))
	}
	if err != nil {
		return Ack{}, fmt.Errorf("%s notify: load order %s: %w", provider, n.OrderNo, err)
	}
	if n.EventID != "" && o.EventID == n.EventID {
		return prov.Ack(), nil // this very event settled the order before: a redelivery
	}
	switch n.Kind {
	case NoticePaid:
		err = s.paid(ctx, prov, o, n, ip)
	case NoticeFailed, NoticeExpired:
		err = s.unpaid(ctx, o, n, ip)
	}
	if err != nil {
		return Ack{}, err
	}
	return prov.Ack(), nil
}

// paid credits the order once.
func (s *Service) paid(ctx context.Context, prov Provider, o *model.TopupOrder, n Notice, ip string) error {
	amount, _ := parseStored(o.Amount)
	if !n.Amount.Equal(amount) || (n.Currency != "" && !strings.EqualFold(n.Currency, o.Currency)) {
		return s.reject(ctx, o.Provider, o.OrderNo, ip, Refusal("notify_amount_mismatch"),
			"paid", n.Amount.String()+" "+n.Currency, "order", o.Amount+" "+o.Currency)
	}
	switch o.Status {
	case model.TopupPaid:
		s.paidAgain(ctx, o, n, ip) // settled before (another delivery or event): acknowledged, nothing moves
		return nil
	case model.TopupFailed:
		return s.reject(ctx, o.Provider, o.OrderNo, ip, Refusal("notify_order_not_payable"), "status", o.Status)
	}
	now := s.opt.Now()
	late := o.Status == model.TopupExpired || !o.ExpiresAt.After(now)
	err := s.accounts.Credit(ctx, o.UserID, o.Quota, account.CreditSource{
		Kind: model.CreditTopup, Ref: o.OrderNo, Actor: audit.Actor{Name: o.Provider, IP: ip},
		Action: "topup.paid", Target: o.OrderNo, Note: "top-up " + o.OrderNo,
		Detail: map[string]any{"user_id": o.UserID, "provider": o.Provider, "amount": o.Amount, "currency": o.Currency,
			"bonus": o.Bonus, "trade_no": n.TradeNo, "event_id": n.EventID, "late": late},
		Claim: func(tx *gorm.DB) error {
			ok, err := s.store.ClaimTopup(ctx, tx, o.OrderNo, o.Provider, n.TradeNo, n.EventID, now)
			if err == nil && !ok {
				return errNotClaimed
			}
			return err
		},
	})
	if errors.Is(err, errNotClaimed) || errors.Is(err, account.ErrAlreadyCredited) {
		// Another delivery won the race (or the order failed meanwhile): look again to answer truthfully.
		cur, gerr := s.store.GetTopup(ctx, o.OrderNo)
		if gerr == nil && cur.Status == model.TopupPaid {
			s.paidAgain(ctx, cur, n, ip)
			return nil
		}
		return s.reject(ctx, o.Provider, o.OrderNo, ip, Refusal("notify_order_not_payable"))
	}
	if err != nil {
		return fmt.Errorf("credit order %s: %w", o.OrderNo, err)
	}
	if s.opt.Rewarder != nil {
		if rerr := s.opt.Rewarder.RewardFirstTopup(context.WithoutCancel(ctx), o.UserID, o.Quota-o.Bonus, o.OrderNo); rerr != nil {
			slog.Error("first top-up reward", "order", o.OrderNo, "user", o.UserID, "err", rerr)
		}
	}
	return nil
}

// paidAgain audits a paid notice for an order that is already paid by another provider payment (a
// different trade id): the customer paid twice. Nothing is credited; the row topup.duplicate_payment lets an
// operator refund the second payment. The same trade id again is a plain redelivery and writes nothing.
func (s *Service) paidAgain(ctx context.Context, o *model.TopupOrder, n Notice, ip string) {
	if n.TradeNo == "" || o.TradeNo == "" || n.TradeNo == o.TradeNo {
		return
	}
	s.audit.Record(ctx, audit.Actor{Name: o.Provider, IP: ip}, "topup.duplicate_payment", o.OrderNo,
		map[string]any{"user_id": o.UserID, "provider": o.Provider, "order_no": o.OrderNo, "trade_no": o.TradeNo,
			"duplicate_trade_no": n.TradeNo, "event_id": n.EventID, "amount": o.Amount, "currency": o.Currency})
}

// unpaid records a failed or expired checkout; a paid order stays paid (a late failure event changes nothing).
func (s *Service) unpaid(ctx context.Context, o *model.TopupOrder, n Notice, ip string) error {
	from := []string{model.TopupPending}
	if n.Kind == NoticeFailed {
		from = append(from, model.TopupExpired)
	}
	ok, err := s.store.SettleTopup(ctx, o.OrderNo, o.Provider, from, n.Kind, n.EventID, s.opt.Now())
	if err != nil {
		return fmt.Errorf("mark order %s %s: %w", o.OrderNo, n.Kind, err)
	}
	if ok {
		s.audit.Record(ctx, audit.Actor{Name: o.Provider, IP: ip}, "topup."+n.Kind, o.OrderNo,
			map[string]any{"provider": o.Provider, "event_id": n.EventID, "type": n.Type, "user_id": o.UserID})
	}
	return nil
}

// reject audits a refused notification (capped per node) and returns the refusal as the error to render.
func (s *Service) reject(ctx context.Context, provider, orderNo, ip string, err error, kv ...string) error {
	ae, ok := apperr.As(err)
	if !ok {
		slog.Error("payment notify", "provider", provider, "err", err)
		ae = Refusal(CodeMalformed)
	}
	detail := map[string]any{"provider": provider, "reason": ae.Code}
	for i := 0; i+1 < len(kv); i += 2 {
		detail[kv[i]] = kv[i+1]
	}
	if allowed, dropped := s.rejects.take(s.opt.Now()); allowed {
		if dropped > 0 {
			detail["suppressed_before"] = dropped
		}
		s.audit.Record(ctx, audit.Actor{Name: provider, IP: ip}, "topup.notify_rejected", orderNo, detail)
	} else {
		slog.Warn("payment notify rejected (audit capped)", "provider", provider, "order", orderNo, "reason", ae.Code, "ip", ip)
	}
	return ae
}

// capper allows n events per window and counts the ones it drops, so the next allowed row can say so.
type capper struct {
	mu      sync.Mutex
	n       int
	window  time.Duration
	start   time.Time
	used    int
	dropped int
}

func newCapper(n int, window time.Duration) *capper { return &capper{n: n, window: window} }

func (c *capper) take(now time.Time) (bool, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now.Sub(c.start) >= c.window {
		c.start, c.used = now, 0
	}
	if c.used >= c.n {
		c.dropped++
		return false, 0
	}
	c.used++
	d := c.dropped
	c.dropped = 0
	return true, d
}

// Package payment sells quota: top-up orders, the providers that take the money (one small package each
// behind Provider) and the notifications that credit a paid order exactly once through account.Credit.
package payment

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/shopspring/decimal"

	"tollgate/model"
	"tollgate/service/account"
	"tollgate/service/apperr"
	"tollgate/service/audit"
	"tollgate/service/setting"
)

// Terms are what a provider offers under the current settings.
type Terms struct {
	Enabled   bool
	Methods   []string // empty: the provider picks (Stripe Checkout)
	Currency  string
	Rate      string // provider currency per 1 USD of quota
	MinAmount string
	MaxAmount string
}

// URLs are where a provider sends the customer and its notifications.
type URLs struct {
	Notify string // server-to-server notification
	Return string // the console's return page after paying (or cancelling)
}

// Inbound is a notification as received: what a provider needs to verify and read it.
type Inbound struct {
	Header http.Header
	Query  url.Values
	Body   []byte
}

// Notice kinds.
const (
	NoticePaid    = "paid"    // the money arrived: credit the order
	NoticeFailed  = "failed"  // the payment failed for good
	NoticeExpired = "expired" // the provider's checkout expired unpaid
	NoticeIgnore  = "ignore"  // a verified notification that changes nothing (another event type)
)

// Notice is a verified notification, read.
type Notice struct {
	Kind     string
	OrderNo  string
	TradeNo  string          // the provider's payment id
	EventID  string          // the provider's notification id ("" when it has none)
	Amount   decimal.Decimal // what was paid, in major units of Currency (checked against the order)
	Currency string          // "" when the provider does not say (Epay: the merchant's one currency)
	Type     string          // the provider's event type or status, for the audit log
}

// Ack is the answer a provider expects to an accepted notification.
type Ack struct {
	ContentType string
	Body        []byte
}

// Provider is one way to pay. Implementations are small and stateless beyond their construction: the
// settings are passed in on every call, so a change applies at once on every node.
type Provider interface {
	Name() string
	Terms(p *setting.Payment) Terms
	// Checkout prepares the payment of a new order and returns the URL the customer pays at.
	Checkout(ctx context.Context, p *setting.Payment, o *model.TopupOrder, u URLs) (string, error)
	// Verify authenticates a notification (signature, merchant) and reads it. An error is a refusal; it should
	// be an *apperr.Error with a stable code (see Refusal).
	Verify(ctx context.Context, p *setting.Payment, in Inbound) (Notice, error)
	// Ack is the body that tells the provider a notification was taken.
	Ack() Ack
}

// Rewarder is told about every credited top-up (the invite service pays the inviter a share of the first
// one). It must be idempotent by orderNo; its error is logged and never fails the notification.
type Rewarder interface {
	RewardFirstTopup(ctx context.Context, inviteeID, paidUnits int64, orderNo string) error
}

// Refusal is a rejected notification: 400 with code, and the reason for the audit log.
func Refusal(code string) *apperr.Error { return apperr.New(http.StatusBadRequest, code) }

// Refusal codes shared by providers.
const (
	CodeBadSignature  = "notify_bad_signature"
	CodeWrongMerchant = "notify_wrong_merchant"
	CodeNotPaid       = "notify_not_paid"
	CodeMalformed     = "notify_malformed"
	CodeNotConfigured = "notify_not_configured"
)

// Options are the optional parts of a Service.
type Options struct {
	Rewarder Rewarder         // nil: no invite reward
	Now      func() time.Time // nil: time.Now
	// RejectAuditPerMinute caps the audit rows written for refused notifications per node (0: 60); beyond it
	// refusals are only logged, so a flood of forgeries cannot fill the audit table.
	RejectAuditPerMinute int
}

// Service creates orders and settles them.
type Service struct {
	store     *model.Store
	accounts  *account.Service
	settings  *setting.Service
	audit     *audit.Log
	providers map[string]Provider
	opt       Options
	rejects   *capper
}

// New builds the service over the given providers.
func New(store *model.Store, accounts *account.Service, settings *setting.Service, log *audit.Log, opt Options, providers ...Provider) *Service {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.RejectAuditPerMinute <= 0 {
		opt.RejectAuditPerMinute = 60
	}
	s := &Service{store: store, accounts: accounts, settings: settings, audit: log, providers: map[string]Provider{},
		opt: opt, rejects: newCapper(opt.RejectAuditPerMinute, time.Minute)}
	for _, p := range providers {
		s.providers[p.Name()] = p
	}
	return s
}

// errNotClaimed aborts a credit whose order another notification settled first.
var errNotClaimed = errors.New("order already settled")

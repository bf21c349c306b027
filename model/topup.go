package model

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Top-up order states. pending → paid | failed | expired; a payment that arrives after expiry still turns an
// expired order paid (the customer paid), so expired → paid is the one move out of a non-pending state.
const (
	TopupPending = "pending"
	TopupPaid    = "paid"
	TopupFailed  = "failed"
	TopupExpired = "expired"
)

// TopupOrder is one attempt to buy quota through a payment provider. Amount is a decimal string in the
// provider's currency, exactly as the customer pays it (canonical: the currency's minor digits, "10.00");
// Quota is what the order credits in units, Bonus included.
type TopupOrder struct {
	ID        int64      `gorm:"primaryKey" json:"-"`
	OrderNo   string     `gorm:"type:varchar(40);not null;uniqueIndex" json:"order_no"`
	UserID    int64      `gorm:"not null;index:idx_topup_user,priority:1" json:"user_id"`
	Provider  string     `gorm:"type:varchar(16);not null;index" json:"provider"`
	Method    string     `gorm:"type:varchar(32);not null;default:''" json:"method"`
	Amount    string     `gorm:"type:varchar(32);not null" json:"amount"`
	Currency  string     `gorm:"type:varchar(8);not null" json:"currency"`
	Quota     int64      `gorm:"not null" json:"quota"`
	Bonus     int64      `gorm:"not null;default:0" json:"bonus"`
	Status    string     `gorm:"type:varchar(16);not null;index:idx_topup_status,priority:1" json:"status"`
	TradeNo   string     `gorm:"type:varchar(128);not null;default:''" json:"trade_no"`           // the provider's id of the payment
	EventID   string     `gorm:"type:varchar(128);not null;default:''" json:"event_id,omitempty"` // the notification that settled it
	CreatedAt time.Time  `gorm:"index:idx_topup_user,priority:2" json:"created_at"`
	PaidAt    *time.Time `json:"paid_at"`
	ExpiresAt time.Time  `gorm:"not null;index:idx_topup_status,priority:2" json:"expires_at"`
	UpdatedAt time.Time  `json:"updated_at"`
	// Username is the payer's name, filled on the admin views only (FillTopupUsernames), not a column.
	Username string `gorm:"-" json:"username,omitempty"`
}

// TopupFilter narrows ListTopups (zero values: no filter).
type TopupFilter struct {
	UserID   int64
	Status   string
	Provider string
}

// CreateTopup inserts a new order.
func (s *Store) CreateTopup(ctx context.Context, o *TopupOrder) error {
	return translate(s.DB.WithContext(ctx).Create(o).Error)
}

// CreateTopupCapped inserts o unless its user already holds max pending, unexpired orders at now (false, nil).
// The count and the insert run in one transaction under a lock of the user's row, so concurrent creations
// by one user are counted one after another and never open more than max.
func (s *Store) CreateTopupCapped(ctx context.Context, o *TopupOrder, max int64, now time.Time) (bool, error) {
	created := false
	err := s.Transact(ctx, func(tx *gorm.DB) error {
		created = false
		var u struct{ ID int64 }
		if err := tx.Model(&User{}).Select("id").Where("id = ?", o.UserID).
			Clauses(clause.Locking{Strength: "UPDATE"}).Take(&u).Error; err != nil {
			return err
		}
		var n int64
		if err := tx.Model(&TopupOrder{}).
			Where("user_id = ? AND status = ? AND expires_at > ?", o.UserID, TopupPending, now).Count(&n).Error; err != nil {
			return err
		}
		if n >= max {
			return nil
		}
		if err := tx.Create(o).Error; err != nil {
			return err
		}
		created = true
		return nil
	})
	return created, translate(err)
}

// GetTopup loads an order by its number (ErrNotFound).
func (s *Store) GetTopup(ctx context.Context, orderNo string) (*TopupOrder, error) {
	var o TopupOrder
	if err := s.DB.WithContext(ctx).Where("order_no = ?", orderNo).Take(&o).Error; err != nil {
		return nil, translate(err)
	}
	return &o, nil
}

// ListTopups pages through orders, newest first.
func (s *Store) ListTopups(ctx context.Context, f TopupFilter, p Page) ([]TopupOrder, int64, error) {
	q := s.DB.WithContext(ctx).Model(&TopupOrder{})
	if f.UserID != 0 {
		q = q.Where("user_id = ?", f.UserID)
	}
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if f.Provider != "" {
		q = q.Where("provider = ?", f.Provider)
	}
	return newestPage[TopupOrder](q, p)
}

// FillTopupUsernames sets each order's Username with one query for all of them (a deleted user stays "").
func (s *Store) FillTopupUsernames(ctx context.Context, orders []TopupOrder) error {
	if len(orders) == 0 {
		return nil
	}
	ids := make([]int64, 0, len(orders))
	for _, o := range orders {
		ids = append(ids, o.UserID)
	}
	var rows []struct {
		ID       int64
		Username string
	}
	if err := s.DB.WithContext(ctx).Model(&User{}).Select("id, username").Where("id IN ?", ids).Find(&rows).Error; err != nil {
		return translate(err)
	}
	names := make(map[int64]string, len(rows))
	for _, r := range rows {
		names[r.ID] = r.Username
	}
	for i := range orders {
		orders[i].Username = names[orders[i].UserID]
	}
	return nil
}

// ClaimTopup, inside tx, marks a pending or expired order of provider paid: one conditional UPDATE, so of
// any number of concurrent notifications exactly one sees true.
func (s *Store) ClaimTopup(ctx context.Context, tx *gorm.DB, orderNo, provider, tradeNo, eventID string, now time.Time) (bool, error) {
	r := tx.WithContext(ctx).Model(&TopupOrder{}).
		Where("order_no = ? AND provider = ? AND status IN ?", orderNo, provider, []string{TopupPending, TopupExpired}).
		Updates(map[string]any{"status": TopupPaid, "trade_no": tradeNo, "event_id": eventID, "paid_at": now, "updated_at": now})
	return r.RowsAffected == 1, r.Error
}

// SettleTopup moves an order of provider from one of the states from to state to (failed or expired), in one
// conditional UPDATE; false when the order was not in such a state.
func (s *Store) SettleTopup(ctx context.Context, orderNo, provider string, from []string, to, eventID string, now time.Time) (bool, error) {
	r := s.DB.WithContext(ctx).Model(&TopupOrder{}).
		Where("order_no = ? AND provider = ? AND status IN ?", orderNo, provider, from).
		Updates(map[string]any{"status": to, "event_id": eventID, "updated_at": now})
	return r.RowsAffected == 1, r.Error
}

// ExpireTopups marks pending orders whose time is up as expired (of one user, or everyone's when userID is 0)
// and returns how many it marked. Reads call it first, so no timer per order is needed.
func (s *Store) ExpireTopups(ctx context.Context, userID int64, now time.Time) (int64, error) {
	q := s.DB.WithContext(ctx).Model(&TopupOrder{}).Where("status = ? AND expires_at <= ?", TopupPending, now)
	if userID != 0 {
		q = q.Where("user_id = ?", userID)
	}
	r := q.Updates(map[string]any{"status": TopupExpired, "updated_at": now})
	return r.RowsAffected, r.Error
}

package model

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
)

// Credit sources: every way a balance grows (or an admin takes it back).
const (
	CreditAdmin  = "admin"  // an admin's adjustment (negative deducts)
	CreditSignup = "signup" // the new-user gift
	CreditTopup  = "topup"  // a paid top-up order
	CreditRedeem = "redeem" // a redemption code
	CreditInvite = "invite" // an invite reward (inviter or invitee)
	// CreditOpening is the one credit each user of a database older than the credits table got at the upgrade:
	// the balance (quota + used_quota) granted before credits were recorded.
	CreditOpening = "opening"
)

// Credit is one movement of a user's balance that is not spending: the durable record that makes the books
// add up (Σ credits − Σ logged cost = balance). IdemKey is unique, so the same top-up order, code or invite
// reward can be credited at most once whatever the concurrency or the number of notifications.
type Credit struct {
	ID        int64     `gorm:"primaryKey" json:"id"`
	UserID    int64     `gorm:"not null;index:idx_credits_user,priority:1" json:"user_id"`
	Units     int64     `gorm:"not null" json:"units"`
	Source    string    `gorm:"type:varchar(16);not null;index" json:"source"`
	Ref       string    `gorm:"type:varchar(128);not null;default:''" json:"ref"` // order_no, code id, invitee id …
	IdemKey   string    `gorm:"type:varchar(160);not null;uniqueIndex" json:"-"`
	ActorID   int64     `gorm:"not null;default:0" json:"actor_id"`
	Note      string    `gorm:"type:varchar(255);not null;default:''" json:"note"`
	CreatedAt time.Time `gorm:"index:idx_credits_user,priority:2" json:"created_at"`
}

// ErrAlreadyCredited is returned by CreditUser when the credit's IdemKey was credited before.
var ErrAlreadyCredited = errors.New("already credited")

// CreditUser, inside tx, records c and moves the user's quota by c.Units, never below zero when
// c.Units is negative (ErrNotFound if the user is missing or the deduction would underflow).
// ErrAlreadyCredited when c.IdemKey exists: nothing moved.
func (s *Store) CreditUser(ctx context.Context, tx *gorm.DB, c *Credit) error {
	if err := tx.WithContext(ctx).Create(c).Error; err != nil {
		if errors.Is(translate(err), ErrDuplicate) {
			return ErrAlreadyCredited
		}
		return err
	}
	ok, err := s.AddUserQuota(ctx, tx, c.UserID, c.Units, true)
	if err != nil {
		return err
	}
	if !ok {
		return ErrNotFound
	}
	return nil
}

// SumCredits is Σ units credited to a user (the left side of the books); with sources, only from those
// (e.g. CreditInvite).
func (s *Store) SumCredits(ctx context.Context, userID int64, sources ...string) (int64, error) {
	var n struct{ N int64 }
	q := s.DB.WithContext(ctx).Model(&Credit{}).Select("COALESCE(SUM(units),0) AS n").Where("user_id = ?", userID)
	if len(sources) > 0 {
		q = q.Where("source IN ?", sources)
	}
	err := q.Take(&n).Error
	return n.N, err
}

// FirstCredit returns a user's earliest credit from source (ErrNotFound when there is none).
func (s *Store) FirstCredit(ctx context.Context, userID int64, source string) (*Credit, error) {
	var c Credit
	err := s.DB.WithContext(ctx).Where("user_id = ? AND source = ?", userID, source).Order("id").Take(&c).Error
	if err != nil {
		return nil, translate(err)
	}
	return &c, nil
}

// ListCredits pages through a user's credits (0 = everyone), newest first.
func (s *Store) ListCredits(ctx context.Context, userID int64, p Page) ([]Credit, int64, error) {
	q := s.DB.WithContext(ctx).Model(&Credit{})
	if userID != 0 {
		q = q.Where("user_id = ?", userID)
	}
	return newestPage[Credit](q, p)
}

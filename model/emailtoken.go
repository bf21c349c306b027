package model

import (
	"context"
	"time"
)

// E-mail token purposes.
const (
	EmailVerify = "verify" // a sign-up's address: a 6-digit code
	EmailReset  = "reset"  // a password reset: a long random token in a link
	EmailChange = "change" // a new address on the profile: a 6-digit code
)

// StatusUnverified is a user who signed up while e-mail verification was on and has not entered the code yet:
// no sign-in, no gift, no keys until then.
const StatusUnverified = "unverified"

// EmailToken is a code or link sent by e-mail. Only a SHA-256 of it is kept (with the purpose and address
// mixed in for codes, so equal codes for two addresses are two rows); it works once, until ExpiresAt.
type EmailToken struct {
	ID        int64      `gorm:"primaryKey"`
	Hash      string     `gorm:"type:varchar(64);not null;uniqueIndex"`
	Purpose   string     `gorm:"type:varchar(8);not null;index:idx_email_tokens_lookup,priority:2"`
	UserID    int64      `gorm:"not null;index"`
	Email     string     `gorm:"type:varchar(191);not null;index:idx_email_tokens_lookup,priority:1"`
	ExpiresAt time.Time  `gorm:"not null"`
	UsedAt    *time.Time ``
	CreatedAt time.Time  ``
}

// CreateEmailToken inserts t; ErrDuplicate when its hash exists (a code drawn twice: draw again).
func (s *Store) CreateEmailToken(ctx context.Context, t *EmailToken) error {
	return translate(s.DB.WithContext(ctx).Create(t).Error)
}

// LiveEmailToken finds an unused, unexpired token by hash and purpose.
func (s *Store) LiveEmailToken(ctx context.Context, hash, purpose string, now time.Time) (*EmailToken, error) {
	var t EmailToken
	err := s.DB.WithContext(ctx).Where("hash = ? AND purpose = ? AND used_at IS NULL AND expires_at > ?", hash, purpose, now).
		Take(&t).Error
	if err != nil {
		return nil, translate(err)
	}
	return &t, nil
}

// UseEmailToken marks a live token used, atomically: of two concurrent uses exactly one gets nil, the other
// ErrNotFound (as does an expired or unknown token).
func (s *Store) UseEmailToken(ctx context.Context, id int64, now time.Time) error {
	res := s.DB.WithContext(ctx).Model(&EmailToken{}).Where("id = ? AND used_at IS NULL AND expires_at > ?", id, now).
		Update("used_at", now)
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// RetireEmailTokens deletes a user's tokens of one purpose, used or not: a new code or link replaces them.
func (s *Store) RetireEmailTokens(ctx context.Context, userID int64, purpose string) error {
	return s.DB.WithContext(ctx).Where("user_id = ? AND purpose = ?", userID, purpose).Delete(&EmailToken{}).Error
}

// ActivateUser moves a user from unverified to enabled and reports whether this call did it (exactly one
// caller wins: the new-user gift hangs on it).
func (s *Store) ActivateUser(ctx context.Context, id int64) (bool, error) {
	res := s.DB.WithContext(ctx).Model(&User{}).Where("id = ? AND status = ?", id, StatusUnverified).Update("status", StatusEnabled)
	return res.RowsAffected == 1, translate(res.Error)
}

package model

import (
	"context"
	"time"
)

// Session is a refresh token (stored as its SHA-256) that can mint new short-lived JWTs.
type Session struct {
	ID        int64     `gorm:"primaryKey"`
	UserID    int64     `gorm:"not null;index"`
	Hash      string    `gorm:"type:char(64);not null;uniqueIndex"`
	ExpiresAt time.Time `gorm:"not null"`
	RevokedAt *time.Time
	IP        string `gorm:"column:ip;type:varchar(64);not null;default:''"`
	CreatedAt time.Time

	// Family is shared by every refresh token rotated from one login; a reused token revokes the family, and
	// the family id is the access JWT's "sid" claim so the revocation reaches live JWTs too.
	Family string `gorm:"type:varchar(32);not null;default:'';index"`

	// UserAgent is the browser that signed in or refreshed (cut to 255 bytes), shown in the session list.
	UserAgent string `gorm:"type:varchar(255);not null;default:''"`
}

// CreateSession inserts a refresh session.
func (s *Store) CreateSession(ctx context.Context, sess *Session) error {
	return translate(s.DB.WithContext(ctx).Create(sess).Error)
}

// RevokeSession marks the live session with hash revoked and reports whether one was live.
func (s *Store) RevokeSession(ctx context.Context, hash string, now time.Time) (*Session, error) {
	var sess Session
	if err := s.DB.WithContext(ctx).Where("hash = ? AND revoked_at IS NULL AND expires_at > ?", hash, now).First(&sess).Error; err != nil {
		return nil, translate(err)
	}
	res := s.DB.WithContext(ctx).Model(&Session{}).Where("id = ? AND revoked_at IS NULL", sess.ID).Update("revoked_at", now)
	if res.Error != nil {
		return nil, res.Error
	}
	if res.RowsAffected == 0 { // a concurrent refresh won the race: the token was used twice
		return nil, ErrNotFound
	}
	return &sess, nil
}

// SessionByHash loads a session whatever its state (to tell a reused refresh token from an unknown one).
func (s *Store) SessionByHash(ctx context.Context, hash string) (*Session, error) {
	var sess Session
	if err := s.DB.WithContext(ctx).Where("hash = ?", hash).First(&sess).Error; err != nil {
		return nil, translate(err)
	}
	return &sess, nil
}

// RevokeFamily revokes every live session of one refresh-token family (of one user) and says how many were live.
func (s *Store) RevokeFamily(ctx context.Context, userID int64, family string, now time.Time) (int64, error) {
	res := s.DB.WithContext(ctx).Model(&Session{}).Where("user_id = ? AND family = ? AND revoked_at IS NULL", userID, family).
		Update("revoked_at", now)
	return res.RowsAffected, res.Error
}

// RevokeUserSessions revokes every session of a user (password change, disable).
func (s *Store) RevokeUserSessions(ctx context.Context, userID int64, now time.Time) error {
	return s.DB.WithContext(ctx).Model(&Session{}).Where("user_id = ? AND revoked_at IS NULL", userID).Update("revoked_at", now).Error
}

// FamilyLive reports whether a refresh-token family (of one user) still has a live session: after a rotation it
// does (the successor), after a logout or a revocation it does not.
func (s *Store) FamilyLive(ctx context.Context, userID int64, family string, now time.Time) (bool, error) {
	var n int64
	err := s.DB.WithContext(ctx).Model(&Session{}).
		Where("user_id = ? AND family = ? AND revoked_at IS NULL AND expires_at > ?", userID, family, now).Limit(1).Count(&n).Error
	return n > 0, err
}

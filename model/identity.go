package model

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// UserIdentity links a user to an account at an external sign-in provider (GitHub, an OIDC issuer): the
// provider's slug and its stable subject id. One provider account signs in to at most one user.
type UserIdentity struct {
	ID        int64     `gorm:"primaryKey" json:"id"`
	UserID    int64     `gorm:"not null;index" json:"user_id"`
	Provider  string    `gorm:"type:varchar(32);not null;uniqueIndex:idx_identity_provider_subject,priority:1" json:"provider"`
	Subject   string    `gorm:"type:varchar(191);not null;uniqueIndex:idx_identity_provider_subject,priority:2" json:"subject"`
	Email     string    `gorm:"type:varchar(191);not null;default:''" json:"email"`
	CreatedAt time.Time `json:"created_at"`
}

// CreateIdentity inserts an identity; ErrDuplicate when the provider's subject is already linked.
func (s *Store) CreateIdentity(ctx context.Context, id *UserIdentity) error {
	return translate(s.DB.WithContext(ctx).Create(id).Error)
}

// IdentityBySubject finds the identity of a provider's subject.
func (s *Store) IdentityBySubject(ctx context.Context, provider, subject string) (*UserIdentity, error) {
	var id UserIdentity
	if err := s.DB.WithContext(ctx).Where("provider = ? AND subject = ?", provider, subject).First(&id).Error; err != nil {
		return nil, translate(err)
	}
	return &id, nil
}

// IdentitiesOf lists a user's identities, oldest first.
func (s *Store) IdentitiesOf(ctx context.Context, userID int64) ([]UserIdentity, error) {
	var out []UserIdentity
	err := s.DB.WithContext(ctx).Where("user_id = ?", userID).Order("id").Find(&out).Error
	return out, err
}

// ErrLastSignIn refuses to remove a passwordless user's last identity: they could not sign in again.
var ErrLastSignIn = errors.New("last way to sign in")

// DeleteIdentity removes the identity id of userID (ErrNotFound when it is not theirs). When the user has no
// password, it refuses (ErrLastSignIn) to remove their last identity; the user's row is locked meanwhile, so two
// unlinks at once cannot both pass the check.
func (s *Store) DeleteIdentity(ctx context.Context, userID, id int64) error {
	return s.Transact(ctx, func(tx *gorm.DB) error {
		var u User
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Select("id", "password_hash").Take(&u, userID).Error; err != nil {
			return translate(err)
		}
		var n int64
		if err := tx.Model(&UserIdentity{}).Where("user_id = ?", userID).Count(&n).Error; err != nil {
			return err
		}
		var mine int64
		if err := tx.Model(&UserIdentity{}).Where("id = ? AND user_id = ?", id, userID).Count(&mine).Error; err != nil {
			return err
		}
		if mine == 0 {
			return ErrNotFound
		}
		if u.PasswordHash == "" && n <= 1 {
			return ErrLastSignIn
		}
		return tx.Where("id = ? AND user_id = ?", id, userID).Delete(&UserIdentity{}).Error
	})
}

// UsersByEmail lists the users whose e-mail is email (case-insensitive), at most limit of them.
func (s *Store) UsersByEmail(ctx context.Context, email string, limit int) ([]User, error) {
	var out []User
	err := s.DB.WithContext(ctx).Where("LOWER(email) = LOWER(?)", email).Order("id").Limit(limit).Find(&out).Error
	return out, err
}

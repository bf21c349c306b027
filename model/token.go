package model

import (
	"context"
	"time"

	"gorm.io/gorm"
)

// Token is a user's sk- API key. The key itself is never stored in clear: KeyHash (HMAC-SHA256) finds it,
// KeyCipher (AES-GCM) lets its owner reveal it.
type Token struct {
	ID          int64          `gorm:"primaryKey" json:"id"`
	UserID      int64          `gorm:"not null;index:idx_tokens_user,priority:1" json:"user_id"`
	Name        string         `gorm:"type:varchar(64);not null" json:"name"`
	KeyHash     string         `gorm:"type:char(64);not null;uniqueIndex" json:"-"`
	KeyCipher   string         `gorm:"type:varchar(160);not null" json:"-"`
	KeyHint     string         `gorm:"type:varchar(16);not null" json:"-"` // "sk-abcd…wxyz" pieces for masked lists
	Status      string         `gorm:"type:varchar(16);not null;default:'enabled'" json:"status"`
	RemainQuota int64          `gorm:"not null;default:0" json:"remain_quota"`
	Unlimited   bool           `gorm:"not null;default:false" json:"unlimited"`
	UsedQuota   int64          `gorm:"not null;default:0" json:"used_quota"`
	ExpiresAt   *time.Time     `json:"expires_at"`
	Models      JSON[[]string] `gorm:"type:text" json:"models"`
	AllowedIPs  JSON[[]string] `gorm:"column:allowed_ips;type:text" json:"allowed_ips"`
	Group       string         `gorm:"column:token_group;type:varchar(64);not null;default:''" json:"group"`
	// FallbackGroups are tried in order when every route of Group is unavailable; a call is billed at the
	// group that served it.
	FallbackGroups JSON[[]string] `gorm:"type:text" json:"fallback_groups"`
	RPM            int            `gorm:"column:rpm;not null;default:0" json:"rpm"`
	Concurrency    int            `gorm:"not null;default:0" json:"concurrency"`
	// Spend limits in units per UTC day / month (0 = none), enforced in the same reservation as the balance;
	// TPM is tokens per minute (0 = none).
	DailyBudget   int64      `gorm:"not null;default:0" json:"daily_budget"`
	MonthlyBudget int64      `gorm:"not null;default:0" json:"monthly_budget"`
	TPM           int64      `gorm:"column:tpm;not null;default:0" json:"tpm"`
	CreatedAt     time.Time  `gorm:"index:idx_tokens_user,priority:2" json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
	LastUsedAt    *time.Time `json:"last_used_at"`

	// AdminDisabled marks a key an admin switched off: only an admin may switch it back on.
	AdminDisabled bool `gorm:"not null;default:false" json:"admin_disabled"`

	// Routing is the key's routing preferences (over its owner's profile ones; a request's override them).
	Routing JSON[RoutePrefs] `gorm:"type:text" json:"routing"`
}

// CreateToken inserts t.
func (s *Store) CreateToken(ctx context.Context, t *Token) error {
	return translate(s.DB.WithContext(ctx).Create(t).Error)
}

// TokenByID loads a token.
func (s *Store) TokenByID(ctx context.Context, id int64) (*Token, error) {
	var t Token
	if err := s.DB.WithContext(ctx).First(&t, id).Error; err != nil {
		return nil, translate(err)
	}
	return &t, nil
}

// TokenByHash loads a token by the HMAC of its key.
func (s *Store) TokenByHash(ctx context.Context, hash string) (*Token, error) {
	var t Token
	if err := s.DB.WithContext(ctx).Where("key_hash = ?", hash).First(&t).Error; err != nil {
		return nil, translate(err)
	}
	return &t, nil
}

// TokenFilter narrows ListTokens; UserID 0 means every user.
type TokenFilter struct {
	UserID int64
	Query  string
}

// ListTokens pages through tokens, newest first.
func (s *Store) ListTokens(ctx context.Context, f TokenFilter, p Page) ([]Token, int64, error) {
	q := s.DB.WithContext(ctx).Model(&Token{})
	if f.UserID != 0 {
		q = q.Where("user_id = ?", f.UserID)
	}
	if f.Query != "" {
		q = q.Where("name LIKE ? ESCAPE '!'", "%"+escapeLike(f.Query)+"%")
	}
	return newestPage[Token](q, p)
}

// SaveToken writes every column of t.
func (s *Store) SaveToken(ctx context.Context, t *Token) error {
	return translate(s.DB.WithContext(ctx).Save(t).Error)
}

// DeleteToken removes a token of a user (userID 0 = any owner).
func (s *Store) DeleteToken(ctx context.Context, id, userID int64) error {
	q := s.DB.WithContext(ctx).Where("id = ?", id)
	if userID != 0 {
		q = q.Where("user_id = ?", userID)
	}
	res := q.Delete(&Token{})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// CountTokensInGroup counts tokens that override their group to name.
func (s *Store) CountTokensInGroup(ctx context.Context, name string) (int64, error) {
	var n int64
	err := s.DB.WithContext(ctx).Model(&Token{}).Where("token_group = ?", name).Count(&n).Error
	return n, err
}

// AddTokenUsage moves spent units from remain to used atomically (remain only for limited keys). The usage log
// writer runs it for every key of every batch: one prepared text (stmtCache), not a statement gorm builds and
// the database parses each time.
func (s *Store) AddTokenUsage(ctx context.Context, tx *gorm.DB, id, spent int64, at time.Time) error {
	_, err := s.stmts.exec(ctx, tx.WithContext(ctx).Statement.ConnPool, "UPDATE tokens SET used_quota = used_quota + ?, "+
		"remain_quota = CASE WHEN unlimited THEN remain_quota ELSE remain_quota - ? END, last_used_at = ? WHERE id = ?",
		spent, spent, at, id)
	return err
}

package model

import "context"

// LoadUser reads a user's durable balance (ledger.Loader).
func (s *Store) LoadUser(ctx context.Context, userID int64) (int64, error) {
	var q struct{ Quota int64 }
	err := s.DB.WithContext(ctx).Model(&User{}).Select("quota").Where("id = ?", userID).Take(&q).Error
	return q.Quota, translate(err)
}

// LoadToken reads a key's durable remaining quota (ledger.Loader).
func (s *Store) LoadToken(ctx context.Context, tokenID int64) (int64, error) {
	var q struct{ RemainQuota int64 }
	err := s.DB.WithContext(ctx).Model(&Token{}).Select("remain_quota").Where("id = ?", tokenID).Take(&q).Error
	return q.RemainQuota, translate(err)
}

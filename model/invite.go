package model

import "context"

// UserByAffCode loads the user whose invite code is code (exact match; codes are stored upper-case).
func (s *Store) UserByAffCode(ctx context.Context, code string) (*User, error) {
	var u User
	if err := s.DB.WithContext(ctx).Where("aff_code = ?", code).Take(&u).Error; err != nil {
		return nil, translate(err)
	}
	return &u, nil
}

// SetAffCode gives a user the invite code code if they have none yet (a conditional update, so that two
// concurrent first calls agree on one code): set is false when the user already had one (or is missing);
// ErrDuplicate when another user holds code.
func (s *Store) SetAffCode(ctx context.Context, userID int64, code string) (set bool, err error) {
	res := s.DB.WithContext(ctx).Model(&User{}).Where("id = ? AND aff_code IS NULL", userID).
		UpdateColumn("aff_code", code)
	if res.Error != nil {
		return false, translate(res.Error)
	}
	return res.RowsAffected == 1, nil
}

// CountInvitees is how many users inviterID invited.
func (s *Store) CountInvitees(ctx context.Context, inviterID int64) (int64, error) {
	var n int64
	err := s.DB.WithContext(ctx).Model(&User{}).Where("inviter_id = ?", inviterID).Count(&n).Error
	return n, err
}

// LatestInvitees returns the newest limit users inviterID invited, newest first.
func (s *Store) LatestInvitees(ctx context.Context, inviterID int64, limit int) ([]User, error) {
	var out []User
	err := s.DB.WithContext(ctx).Where("inviter_id = ?", inviterID).Order("id DESC").Limit(limit).Find(&out).Error
	return out, err
}

// SumCreditsFrom is Σ units credited to a user from one source (e.g. CreditInvite).
func (s *Store) SumCreditsFrom(ctx context.Context, userID int64, source string) (int64, error) {
	var n struct{ N int64 }
	err := s.DB.WithContext(ctx).Model(&Credit{}).Select("COALESCE(SUM(units),0) AS n").
		Where("user_id = ? AND source = ?", userID, source).Take(&n).Error
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

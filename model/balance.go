package model

import (
	"context"
	"time"
)

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

// LoadSpent is what a key was charged in [from, to): Σ of its logged cost (ledger.Loader, for a spend
// window's first touch). It reads the (token_id, created_at) index.
func (s *Store) LoadSpent(ctx context.Context, tokenID int64, from, to time.Time) (int64, error) {
	var n struct{ Spent int64 }
	err := s.LogStore().DB.WithContext(ctx).Model(&UsageLog{}).Select("COALESCE(SUM(cost), 0) AS spent").
		Where("token_id = ? AND created_at >= ? AND created_at < ?", tokenID, from.UTC(), to.UTC()).Take(&n).Error
	return n.Spent, translate(err)
}

// SpentByTokens is LoadSpent of many keys at once: one grouped query over the (token_id, created_at) index.
// A key that spent nothing in [from, to) is absent from the map.
func (s *Store) SpentByTokens(ctx context.Context, tokenIDs []int64, from, to time.Time) (map[int64]int64, error) {
	out := make(map[int64]int64, len(tokenIDs))
	if len(tokenIDs) == 0 {
		return out, nil
	}
	var rows []struct {
		TokenID int64
		Spent   int64
	}
	err := s.LogStore().DB.WithContext(ctx).Model(&UsageLog{}).Select("token_id, COALESCE(SUM(cost), 0) AS spent").
		Where("token_id IN ? AND created_at >= ? AND created_at < ?", tokenIDs, from.UTC(), to.UTC()).
		Group("token_id").Find(&rows).Error
	if err != nil {
		return nil, translate(err)
	}
	for _, r := range rows {
		out[r.TokenID] = r.Spent
	}
	return out, nil
}

package model

import (
	"context"
	"fmt"
	"time"
)

// ActiveCounts is how many distinct users and keys made at least one relayed request (channel tests left
// out) in [from, to).
type ActiveCounts struct {
	Users int64
	Keys  int64
}

// ActiveUsersAndKeys counts the users and keys with traffic in [from, to): whole UTC days from the daily key
// sums (usage_daily_keys, a day × user × key row exists once the key was used that day), the partial days at
// either end from the raw rows through the created_at index, de-duplicated in one UNION so a user active on
// both sides is counted once.
func (s *Store) ActiveUsersAndKeys(ctx context.Context, from, to time.Time) (ActiveCounts, error) {
	first, last := WholeDays(from, to)
	logs := s.LogStore()
	var parts []string
	var args []any
	raw := func(a, b time.Time) {
		if !a.Before(b) {
			return
		}
		parts = append(parts, "SELECT user_id, token_id FROM "+logs.rawLogsTable()+" WHERE is_test = ? AND created_at >= ? AND created_at < ?")
		args = append(args, false, a.UTC(), b.UTC())
	}
	if first.Equal(last) {
		raw(from, to)
	} else {
		parts = append(parts, "SELECT user_id, token_id FROM usage_daily_keys WHERE day >= ? AND day < ? AND requests > test_requests")
		args = append(args, first.Format(time.DateOnly), last.Format(time.DateOnly))
		raw(from, first)
		raw(last, to)
	}
	union := parts[0]
	for _, p := range parts[1:] {
		union += " UNION " + p
	}
	// "keys" is a reserved word in MySQL: the aliases say active_.
	q := "SELECT COUNT(DISTINCT user_id) AS active_users, " +
		"COUNT(DISTINCT CASE WHEN token_id <> 0 THEN token_id END) AS active_keys FROM (" + union + ") AS active"
	var out struct{ ActiveUsers, ActiveKeys int64 }
	if err := logs.DB.WithContext(ctx).Raw(q, args...).Scan(&out).Error; err != nil {
		return ActiveCounts{}, fmt.Errorf("active users and keys: %w", err)
	}
	return ActiveCounts{Users: out.ActiveUsers, Keys: out.ActiveKeys}, nil
}

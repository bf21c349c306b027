package stats

import (
	"context"
	"sort"
	"time"
)

// ClassCount is how many upstream attempts ended in one failure class (service/health's names).
type ClassCount struct {
	Class string `json:"class"`
	Count int64  `json:"count"`
}

// Overview is the site-wide figures the admin dashboard shows beside the reports: distinct users and keys
// with relayed traffic (channel tests left out) and failed upstream attempts by class.
type Overview struct {
	From        time.Time    `json:"from"`
	To          time.Time    `json:"to"`
	ActiveUsers int64        `json:"active_users"`
	ActiveKeys  int64        `json:"active_keys"`
	Errors      []ClassCount `json:"errors"`
}

// Overview counts the window's active users and keys (daily key sums for whole days, raw rows for the
// edges) and its failed attempts by class from the fleet rollups (no raw row is read for them; the fleet
// writes every 10 s, so the last seconds may not be counted yet). Most frequent class first.
func (s *Service) Overview(ctx context.Context, from, to time.Time) (*Overview, error) {
	from, to, err := s.Window(from, to)
	if err != nil {
		return nil, err
	}
	active, err := s.store.ActiveUsersAndKeys(ctx, from, to)
	if err != nil {
		return nil, err
	}
	out := &Overview{From: from, To: to, ActiveUsers: active.Users, ActiveKeys: active.Keys, Errors: []ClassCount{}}
	if s.Fleet == nil {
		return out, nil
	}
	ss, err := s.Fleet.Range(ctx, from, to)
	if err != nil {
		return nil, err
	}
	byClass := map[string]int64{}
	for _, st := range ss {
		for class, n := range st.Classes {
			if class != "" && n > 0 { // "" is a success
				byClass[class] += n
			}
		}
	}
	for class, n := range byClass {
		out.Errors = append(out.Errors, ClassCount{Class: class, Count: n})
	}
	sort.Slice(out.Errors, func(i, j int) bool {
		if out.Errors[i].Count != out.Errors[j].Count {
			return out.Errors[i].Count > out.Errors[j].Count
		}
		return out.Errors[i].Class < out.Errors[j].Class
	})
	return out, nil
}

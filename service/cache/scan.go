package cache

import (
	"context"
	"strings"
)

// Entry is one key and value found by Scan.
type Entry struct {
	Key string
	Val []byte
}

// Scanner lists live entries under a key prefix, at most limit of them, in no particular order. It is for
// admin views, not the request path; both caches implement it.
type Scanner interface {
	Scan(ctx context.Context, prefix string, limit int) ([]Entry, error)
}

// Scan implements Scanner.
func (m *Memory) Scan(_ context.Context, prefix string, limit int) ([]Entry, error) {
	var out []Entry
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		for k, e := range s.m {
			if len(out) >= limit {
				break
			}
			if strings.HasPrefix(k, prefix) && m.live(e, true) {
				out = append(out, Entry{Key: k, Val: append([]byte(nil), e.val...)})
			}
		}
		s.mu.Unlock()
	}
	return out, nil
}

// Scan implements Scanner with SCAN MATCH (cursor by cursor, never KEYS) and one MGET per page.
func (r *Redis) Scan(ctx context.Context, prefix string, limit int) ([]Entry, error) {
	var out []Entry
	var cursor uint64
	pattern := r.prefix + globEscape(prefix) + "*"
	for {
		keys, next, err := r.c.Scan(ctx, cursor, pattern, 500).Result()
		if err != nil {
			return nil, err
		}
		if len(keys) > 0 {
			vals, err := r.c.MGet(ctx, keys...).Result()
			if err != nil {
				return nil, err
			}
			for i, v := range vals {
				s, ok := v.(string)
				if !ok || len(out) >= limit {
					continue
				}
				out = append(out, Entry{Key: strings.TrimPrefix(keys[i], r.prefix), Val: []byte(s)})
			}
		}
		if cursor = next; cursor == 0 || len(out) >= limit {
			return out, nil
		}
	}
}

// globEscape quotes the characters SCAN MATCH reads as a pattern.
func globEscape(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[]\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

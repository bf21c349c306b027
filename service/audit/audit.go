// Package audit records who changed what, when and from which IP.
package audit

import (
	"context"
	"encoding/json"
	"log/slog"

	"tollgate/model"
)

// Actor is who did something.
type Actor struct {
	ID   int64
	Name string
	IP   string
}

// Log writes audit entries.
type Log struct{ store *model.Store }

// New builds the audit log.
func New(store *model.Store) *Log { return &Log{store: store} }

// Record appends an entry; detail is marshalled as JSON. A failed write is logged, not returned: the change
// it describes already happened.
func (l *Log) Record(ctx context.Context, a Actor, action, target string, detail any) {
	var text string
	if detail != nil {
		b, _ := json.Marshal(detail)
		text = string(b)
	}
	e := &model.AuditLog{ActorID: a.ID, ActorName: a.Name, Action: action, Target: target, Detail: text, IP: a.IP}
	if err := l.store.CreateAudit(ctx, e); err != nil {
		slog.Error("audit write failed", "action", action, "target", target, "err", err)
	}
}

// After lists up to limit entries older than cursor (0 = newest) and the next cursor (nil on the last page).
func (l *Log) After(ctx context.Context, f model.AuditFilter, cursor int64, limit int) ([]model.AuditLog, *int64, error) {
	items, err := l.store.AuditAfter(ctx, f, cursor, limit+1)
	if err != nil {
		return nil, nil, err
	}
	var next *int64
	if len(items) > limit {
		items = items[:limit]
		id := items[len(items)-1].ID
		next = &id
	}
	if items == nil {
		items = []model.AuditLog{}
	}
	return items, next, nil
}

// List pages through entries.
func (l *Log) List(ctx context.Context, f model.AuditFilter, p model.Page) ([]model.AuditLog, int64, error) {
	return l.store.ListAudit(ctx, f, p)
}

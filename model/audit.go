package model

import (
	"context"
	"time"

	"gorm.io/gorm"
)

// AuditLog records who changed what, when and from where.
type AuditLog struct {
	ID        int64     `gorm:"primaryKey" json:"id"`
	ActorID   int64     `gorm:"not null;index:idx_audit_actor,priority:1" json:"actor_id"`
	ActorName string    `gorm:"type:varchar(32);not null" json:"actor_name"`
	Action    string    `gorm:"type:varchar(64);not null;index" json:"action"`
	Target    string    `gorm:"type:varchar(128);not null;default:''" json:"target"`
	Detail    string    `gorm:"type:text" json:"detail"`
	IP        string    `gorm:"column:ip;type:varchar(64);not null;default:''" json:"ip"`
	CreatedAt time.Time `gorm:"index;index:idx_audit_actor,priority:2" json:"created_at"`
}

// AuditFilter narrows ListAudit.
type AuditFilter struct {
	ActorID int64
	Action  string
}

// ListAudit pages through the audit log, newest first.
func (s *Store) ListAudit(ctx context.Context, f AuditFilter, p Page) ([]AuditLog, int64, error) {
	q := s.DB.WithContext(ctx).Model(&AuditLog{})
	if f.ActorID != 0 {
		q = q.Where("actor_id = ?", f.ActorID)
	}
	if f.Action != "" {
		q = q.Where("action = ?", f.Action)
	}
	return newestPage[AuditLog](q, p)
}

// AuditAfter is ListAudit as a keyset: up to limit entries with id < before (0 = newest), newest first, on
// the primary key (and the actor index), with no COUNT and no OFFSET, so a deep page costs what the first does.
func (s *Store) AuditAfter(ctx context.Context, f AuditFilter, before int64, limit int) ([]AuditLog, error) {
	q := s.DB.WithContext(ctx).Model(&AuditLog{})
	if f.ActorID != 0 {
		q = q.Where("actor_id = ?", f.ActorID)
	}
	if f.Action != "" {
		q = q.Where("action = ?", f.Action)
	}
	if before > 0 {
		q = q.Where("id < ?", before)
	}
	var out []AuditLog
	err := q.Order("id DESC").Limit(limit).Find(&out).Error
	return out, err
}

// CreateAudit appends one audit entry.
func (s *Store) CreateAudit(ctx context.Context, a *AuditLog) error {
	return s.CreateAuditTx(ctx, s.DB, a)
}

// CreateAuditTx appends one audit entry inside tx (the audit row of a money movement commits with it).
func (s *Store) CreateAuditTx(ctx context.Context, tx *gorm.DB, a *AuditLog) error {
	return tx.WithContext(ctx).Create(a).Error
}

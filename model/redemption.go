package model

import (
	"context"
	"time"

	"gorm.io/gorm"
)

// Redemption code states as stored. "expired" is never stored: it is an unused code whose expires_at has
// passed (RedemptionExpired, derived when reading).
const (
	RedemptionUnused   = "unused"
	RedemptionUsed     = "used"
	RedemptionDisabled = "disabled"
	RedemptionExpired  = "expired"
)

// Redemption is one redemption code. The code is never stored in clear: CodeHash (HMAC-SHA256) finds it when
// a user redeems, CodeCipher (AES-GCM) lets an admin export the batch, Hint identifies it in lists.
type Redemption struct {
	ID         int64      `gorm:"primaryKey" json:"id"`
	BatchID    string     `gorm:"type:varchar(32);not null;index:idx_redemptions_batch,priority:1" json:"batch"`
	BatchName  string     `gorm:"type:varchar(64);not null" json:"batch_name"`
	CodeHash   string     `gorm:"type:char(64);not null;uniqueIndex" json:"-"`
	CodeCipher string     `gorm:"type:varchar(160);not null" json:"-"`
	Hint       string     `gorm:"type:varchar(32);not null" json:"hint"`
	Quota      int64      `gorm:"not null" json:"quota"`
	Status     string     `gorm:"type:varchar(16);not null;default:'unused';index:idx_redemptions_batch,priority:2;index" json:"status"`
	ExpiresAt  *time.Time `json:"expires_at"`
	UsedBy     int64      `gorm:"not null;default:0;index" json:"used_by"`
	UsedAt     *time.Time `json:"used_at"`
	UsedIP     string     `gorm:"column:used_ip;type:varchar(64);not null;default:''" json:"used_ip"`
	CreatedBy  int64      `gorm:"not null;default:0" json:"created_by"`
	CreatedAt  time.Time  `json:"created_at"`
}

// RedemptionRow is a code with the name of the user who redeemed it (empty when unused or the user is gone).
type RedemptionRow struct {
	Redemption
	UsedByName string `json:"used_by_name"`
}

// StateAt is the code's state as the API shows it: its status, or "expired" for an unused code past its
// expiry.
func (r *Redemption) StateAt(now time.Time) string {
	if r.Status == RedemptionUnused && r.ExpiresAt != nil && !r.ExpiresAt.After(now) {
		return RedemptionExpired
	}
	return r.Status
}

// redemptionChunk is how many codes one INSERT carries: 500 rows × 13 columns stays far below the
// placeholder limits of MySQL (65,535) and SQLite (32,766).
const redemptionChunk = 500

// CreateRedemptions inserts a batch's codes in chunks, all in one transaction: the batch exists whole or not
// at all.
func (s *Store) CreateRedemptions(ctx context.Context, rows []Redemption) error {
	return translate(s.Transact(ctx, func(tx *gorm.DB) error {
		return tx.CreateInBatches(rows, redemptionChunk).Error
	}))
}

// RedemptionByHash loads a code by the HMAC of its canonical text.
func (s *Store) RedemptionByHash(ctx context.Context, hash string) (*Redemption, error) {
	var r Redemption
	if err := s.DB.WithContext(ctx).Where("code_hash = ?", hash).First(&r).Error; err != nil {
		return nil, translate(err)
	}
	return &r, nil
}

// RedemptionByID loads a code.
func (s *Store) RedemptionByID(ctx context.Context, id int64) (*Redemption, error) {
	var r Redemption
	if err := s.DB.WithContext(ctx).First(&r, id).Error; err != nil {
		return nil, translate(err)
	}
	return &r, nil
}

// ClaimRedemption, inside tx, marks an unused, unexpired code used by userID: one conditional UPDATE, so of
// any number of concurrent claims exactly one reports true.
func (s *Store) ClaimRedemption(ctx context.Context, tx *gorm.DB, id, userID int64, ip string, now time.Time) (bool, error) {
	res := tx.WithContext(ctx).Model(&Redemption{}).
		Where("id = ? AND status = ? AND (expires_at IS NULL OR expires_at > ?)", id, RedemptionUnused, now).
		UpdateColumns(map[string]any{"status": RedemptionUsed, "used_by": userID, "used_at": now, "used_ip": ip})
	return res.RowsAffected == 1, res.Error
}

// SetRedemptionStatus switches a code that is not used to status (unused or disabled). False when no row
// changed: the code is missing, used, or already has that status (MySQL counts changed rows only).
func (s *Store) SetRedemptionStatus(ctx context.Context, id int64, status string) (bool, error) {
	res := s.DB.WithContext(ctx).Model(&Redemption{}).
		Where("id = ? AND status IN ? AND status <> ?", id, []string{RedemptionUnused, RedemptionDisabled}, status).
		UpdateColumn("status", status)
	return res.RowsAffected == 1, res.Error
}

// DeleteRedemption removes a code that was never used (unused or disabled). False when nothing was deleted:
// the code is missing or used.
func (s *Store) DeleteRedemption(ctx context.Context, id int64) (bool, error) {
	res := s.DB.WithContext(ctx).
		Where("id = ? AND status IN ?", id, []string{RedemptionUnused, RedemptionDisabled}).
		Delete(&Redemption{})
	return res.RowsAffected == 1, res.Error
}

// RedemptionFilter narrows ListRedemptions. Status is a state as the API shows it (expired included),
// judged at Now.
type RedemptionFilter struct {
	BatchID string
	Status  string
	Now     time.Time
}

// redemptionRows selects codes with the redeemer's name, filtered.
func (s *Store) redemptionRows(ctx context.Context, f RedemptionFilter) *gorm.DB {
	q := s.DB.WithContext(ctx).Table("redemptions AS r").
		Select("r.*, COALESCE(u.username, '') AS used_by_name").
		Joins("LEFT JOIN users u ON u.id = r.used_by AND r.used_by <> 0")
	if f.BatchID != "" {
		q = q.Where("r.batch_id = ?", f.BatchID)
	}
	switch f.Status {
	case "":
	case RedemptionUnused:
		q = q.Where("r.status = ? AND (r.expires_at IS NULL OR r.expires_at > ?)", RedemptionUnused, f.Now)
	case RedemptionExpired:
		q = q.Where("r.status = ? AND r.expires_at IS NOT NULL AND r.expires_at <= ?", RedemptionUnused, f.Now)
	default:
		q = q.Where("r.status = ?", f.Status)
	}
	return q
}

// ListRedemptions pages through codes, newest first.
func (s *Store) ListRedemptions(ctx context.Context, f RedemptionFilter, p Page) ([]RedemptionRow, int64, error) {
	var total int64
	if err := s.redemptionRows(ctx, f).Count(&total).Error; err != nil {
		return nil, 0, err
	}
	var out []RedemptionRow
	err := s.redemptionRows(ctx, f).Order("r.id DESC").Offset(p.Offset()).Limit(p.Size).Scan(&out).Error
	return out, total, err
}

// BatchRedemptions loads every code of a batch in creation order (a batch holds at most 10,000).
func (s *Store) BatchRedemptions(ctx context.Context, batchID string) ([]RedemptionRow, error) {
	var out []RedemptionRow
	err := s.redemptionRows(ctx, RedemptionFilter{BatchID: batchID}).Order("r.id").Scan(&out).Error
	return out, err
}

// RedemptionBatch sums up one batch of codes; Expired counts unused codes past their expiry, Unused the others.
type RedemptionBatch struct {
	BatchID   string     `json:"batch"`
	Name      string     `json:"name"`
	Quota     int64      `json:"quota"`
	Count     int64      `json:"count"`
	Unused    int64      `json:"unused"`
	Used      int64      `json:"used"`
	Expired   int64      `json:"expired"`
	Disabled  int64      `json:"disabled"`
	ExpiresAt *time.Time `json:"expires_at"`
	CreatedBy int64      `json:"created_by"`
	CreatedAt time.Time  `json:"created_at"`
}

// ListRedemptionBatches pages through batches, newest first, with their counts at now.
func (s *Store) ListRedemptionBatches(ctx context.Context, now time.Time, p Page) ([]RedemptionBatch, int64, error) {
	db := s.DB.WithContext(ctx)
	var total int64
	if err := db.Model(&Redemption{}).Distinct("batch_id").Count(&total).Error; err != nil {
		return nil, 0, err
	}
	expired := "status = 'unused' AND expires_at IS NOT NULL AND expires_at <= ?"
	var counts []struct {
		FirstID                                int64
		Count, Unused, Used, Expired, Disabled int64
	}
	err := db.Model(&Redemption{}).
		Select(`MIN(id) AS first_id, COUNT(*) AS count,
			SUM(CASE WHEN status = 'unused' AND NOT (`+expired+`) THEN 1 ELSE 0 END) AS unused,
			SUM(CASE WHEN status = 'used' THEN 1 ELSE 0 END) AS used,
			SUM(CASE WHEN `+expired+` THEN 1 ELSE 0 END) AS expired,
			SUM(CASE WHEN status = 'disabled' THEN 1 ELSE 0 END) AS disabled`, now, now).
		Group("batch_id").Order("first_id DESC").Offset(p.Offset()).Limit(p.Size).Scan(&counts).Error
	if err != nil || len(counts) == 0 {
		return nil, total, err
	}
	// What every code of a batch shares (name, quota, expiry, creator, time) is read from its first code: an
	// aggregate of a time column comes back from SQLite as text.
	ids := make([]int64, len(counts))
	for i, c := range counts {
		ids[i] = c.FirstID
	}
	var firsts []Redemption
	if err := db.Where("id IN ?", ids).Find(&firsts).Error; err != nil {
		return nil, 0, err
	}
	byID := make(map[int64]*Redemption, len(firsts))
	for i := range firsts {
		byID[firsts[i].ID] = &firsts[i]
	}
	out := make([]RedemptionBatch, 0, len(counts))
	for _, c := range counts {
		f, ok := byID[c.FirstID]
		if !ok { // the batch's first code was deleted between the two reads
			continue
		}
		out = append(out, RedemptionBatch{BatchID: f.BatchID, Name: f.BatchName, Quota: f.Quota, Count: c.Count,
			Unused: c.Unused, Used: c.Used, Expired: c.Expired, Disabled: c.Disabled, ExpiresAt: f.ExpiresAt,
			CreatedBy: f.CreatedBy, CreatedAt: f.CreatedAt})
	}
	return out, total, nil
}

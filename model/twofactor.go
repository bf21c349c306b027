package model

import (
	"context"
	"time"

	"gorm.io/gorm"
)

// BackupCode is one single-use two-factor backup code of a user, stored as "salt$sha256(salt|code)" (hex).
type BackupCode struct {
	ID        int64  `gorm:"primaryKey"`
	UserID    int64  `gorm:"not null;index"`
	Hash      string `gorm:"type:varchar(100);not null"`
	UsedAt    *time.Time
	CreatedAt time.Time
}

// ReplaceBackupCodes deletes a user's backup codes and stores hashes as the new set, in one transaction.
func (s *Store) ReplaceBackupCodes(ctx context.Context, userID int64, hashes []string) error {
	return s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("user_id = ?", userID).Delete(&BackupCode{}).Error; err != nil {
			return err
		}
		if len(hashes) == 0 {
			return nil
		}
		rows := make([]BackupCode, len(hashes))
		for i, h := range hashes {
			rows[i] = BackupCode{UserID: userID, Hash: h}
		}
		return tx.Create(&rows).Error
	})
}

// UnusedBackupCodes lists a user's backup codes not used yet.
func (s *Store) UnusedBackupCodes(ctx context.Context, userID int64) ([]BackupCode, error) {
	var out []BackupCode
	err := s.DB.WithContext(ctx).Where("user_id = ? AND used_at IS NULL", userID).Order("id").Find(&out).Error
	return out, err
}

// UseBackupCode marks one unused backup code used and reports whether this call did (a code raced by two
// sign-ins is used by exactly one).
func (s *Store) UseBackupCode(ctx context.Context, id int64, now time.Time) (bool, error) {
	res := s.DB.WithContext(ctx).Model(&BackupCode{}).Where("id = ? AND used_at IS NULL", id).Update("used_at", now)
	return res.RowsAffected == 1, res.Error
}

// ClaimTOTPStep records step as the user's last accepted time step when it is later than the one stored, and
// reports whether it was (a code is accepted once, even by two nodes at the same moment).
func (s *Store) ClaimTOTPStep(ctx context.Context, userID, step int64) (bool, error) {
	r := s.DB.WithContext(ctx).Model(&User{}).Where("id = ? AND totp_last_step < ?", userID, step).
		UpdateColumn("totp_last_step", step)
	return r.RowsAffected == 1, r.Error
}

// UserSessionRow is a live refresh session with its family's start (for the session list).
type UserSessionRow struct {
	Session
	StartedAt time.Time
}

// LiveSessions lists a user's live refresh sessions (one per family: rotation revokes the previous row), newest
// first, each with the time its family began (the sign-in).
func (s *Store) LiveSessions(ctx context.Context, userID int64, now time.Time) ([]UserSessionRow, error) {
	var live []Session
	if err := s.DB.WithContext(ctx).Where("user_id = ? AND revoked_at IS NULL AND expires_at > ?", userID, now).
		Order("id DESC").Limit(200).Find(&live).Error; err != nil {
		return nil, err
	}
	fams := make([]string, 0, len(live))
	for _, l := range live {
		if l.Family != "" {
			fams = append(fams, l.Family)
		}
	}
	started := map[string]time.Time{}
	if len(fams) > 0 {
		var firsts []struct {
			Family string
			ID     int64
		}
		if err := s.DB.WithContext(ctx).Model(&Session{}).Select("family, MIN(id) AS id").
			Where("user_id = ? AND family IN ?", userID, fams).Group("family").Scan(&firsts).Error; err != nil {
			return nil, err
		}
		ids := make([]int64, len(firsts))
		for i, f := range firsts {
			ids[i] = f.ID
		}
		var rows []Session
		if err := s.DB.WithContext(ctx).Where("id IN ?", ids).Find(&rows).Error; err != nil {
			return nil, err
		}
		for _, r := range rows {
			started[r.Family] = r.CreatedAt
		}
	}
	out := make([]UserSessionRow, len(live))
	for i, l := range live {
		st, ok := started[l.Family]
		if !ok {
			st = l.CreatedAt
		}
		out[i] = UserSessionRow{Session: l, StartedAt: st}
	}
	return out, nil
}

// SessionOf loads one session row of a user by id (any state).
func (s *Store) SessionOf(ctx context.Context, userID, id int64) (*Session, error) {
	var sess Session
	if err := s.DB.WithContext(ctx).Where("id = ? AND user_id = ?", id, userID).First(&sess).Error; err != nil {
		return nil, translate(err)
	}
	return &sess, nil
}

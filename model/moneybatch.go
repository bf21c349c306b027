package model

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// MoneyBatch marks a batch of settled charges whose balance changes were applied to the main database while
// its log rows go to a separate log database (LOG_SQL_DSN). The money transaction records the mark with the
// changes, so a commit that went through but was reported failed (the connection dropped before the answer)
// and is run again finds its mark and moves no money twice. With one database the rows themselves (unique
// request ids) do that (WriteLogs).
type MoneyBatch struct {
	ID string `gorm:"type:varchar(40);primaryKey"` // NewMoneyBatchID: the creation time first, so old marks are one range
}

// moneyBatchKeep is how long a mark is kept. A batch is retried within seconds of a failed try (longer only while
// the main database stays unreachable), and the writer that retries it is the one pruning on its node; other
// nodes prune by their own clocks. A node makes a mark per batch: five a second from the 200 ms tick plus one
// per 500 rows beyond it (~17 a second at 6,000 requests a second: ~370,000 rows in six hours).
const moneyBatchKeep = 6 * time.Hour

// NewMoneyBatchID is a batch's id: its time in nanoseconds (19 digits) and 64 random bits, so ids sort by
// time and the marks older than a time are one key range.
func NewMoneyBatchID(at time.Time) string {
	var r [8]byte
	_, _ = rand.Read(r[:])
	return moneyBatchTime(at) + "-" + hex.EncodeToString(r[:])
}

// moneyBatchTime is the time part of a mark's id: nanoseconds, zero-padded to 19 digits (ordered as text).
func moneyBatchTime(at time.Time) string { return fmt.Sprintf("%019d", at.UnixNano()) }

// ClaimMoneyBatch records the batch id in tx and reports whether it was new; false means a transaction that
// committed before recorded it (its money moved then). Old marks go with PruneMoneyBatches.
func (s *Store) ClaimMoneyBatch(ctx context.Context, tx *gorm.DB, id string) (bool, error) {
	res := tx.WithContext(ctx).Exec(s.insertIgnore()+" money_batches (id) VALUES (?)", id)
	if res.Error != nil {
		return false, res.Error
	}
	return res.RowsAffected == 1, nil
}

// PruneMoneyBatches deletes the marks made more than moneyBatchKeep before now.
func (s *Store) PruneMoneyBatches(ctx context.Context, now time.Time) error {
	return s.DB.WithContext(ctx).Exec("DELETE FROM money_batches WHERE id < ?", moneyBatchTime(now.Add(-moneyBatchKeep))).Error
}

package model

import (
	"context"
	"errors"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"
	"gorm.io/gorm"
)

// txAttempts is how many times Transact runs a transaction InnoDB chose as a deadlock victim.
const txAttempts = 8

// Transact runs fn in one transaction, and runs it again (up to txAttempts times, with a short growing pause)
// when MySQL rolled it back as a deadlock victim (1213) or its lock wait timed out (1205). Both roll the
// whole transaction back, so running fn again is safe; fn must not have effects outside tx. Any other error
// ends it at once.
func (s *Store) Transact(ctx context.Context, fn func(tx *gorm.DB) error) error {
	var err error
	for attempt := 0; attempt < txAttempts; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return err
			case <-time.After(time.Duration(attempt*attempt) * 5 * time.Millisecond):
			}
		}
		err = s.DB.WithContext(ctx).Transaction(fn)
		if !retryable(err) {
			return err
		}
	}
	return err
}

// retryable says whether err is a transaction MySQL rolled back that may simply be run again.
func retryable(err error) bool {
	var me *mysqldrv.MySQLError
	if errors.As(err, &me) {
		return me.Number == 1213 || me.Number == 1205
	}
	return false
}

package model

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Resolutions of fleet metric rows.
const (
	ResMinute = "m"
	ResHour   = "h"
	ResDay    = "d"
)

// FleetBucket is one node's (or, rolled up, every node's: Node "*") traffic on one channel and model in one
// minute, hour or day: counts, sums and mergeable latency histograms (service/fleet). Rows of several nodes
// for the same bucket add up.
type FleetBucket struct {
	Res       string    `gorm:"primaryKey;type:varchar(1)" json:"res"`
	At        time.Time `gorm:"primaryKey;index:idx_fleet_at" json:"at"`
	ChannelID int64     `gorm:"primaryKey;autoIncrement:false" json:"channel_id"`
	Model     string    `gorm:"primaryKey;type:varchar(128)" json:"model"`
	Node      string    `gorm:"primaryKey;type:varchar(32)" json:"node"`
	Requests  int64     `gorm:"not null;default:0" json:"requests"`
	Successes int64     `gorm:"not null;default:0" json:"successes"`
	// Classes counts attempts by error class ("" = success), Latency and FirstByte are histograms
	// (counts per bucket, service/fleet's bounds); sums in milliseconds.
	Classes        JSON[map[string]int64] `gorm:"type:text" json:"classes"`
	LatencySumMs   int64                  `gorm:"not null;default:0" json:"latency_sum_ms"`
	LatencyHist    JSON[[]int64]          `gorm:"type:text" json:"latency_hist"`
	FirstByteCount int64                  `gorm:"not null;default:0" json:"first_byte_count"`
	FirstByteSumMs int64                  `gorm:"not null;default:0" json:"first_byte_sum_ms"`
	FirstByteHist  JSON[[]int64]          `gorm:"type:text" json:"first_byte_hist"`
	PromptTokens   int64                  `gorm:"not null;default:0" json:"prompt_tokens"`
	OutputTokens   int64                  `gorm:"not null;default:0" json:"completion_tokens"`
}

// The fleet rollups live with the usage logs (LogStore: LOG_SQL_DSN's database when set, else this one).

// UpsertFleet writes buckets, replacing a node's earlier write of the same bucket (a node writes its running
// totals for a bucket until the bucket is over).
func (s *Store) UpsertFleet(ctx context.Context, rows []FleetBucket) error {
	if len(rows) == 0 {
		return nil
	}
	return s.LogStore().DB.WithContext(ctx).Clauses(clause.OnConflict{UpdateAll: true}).CreateInBatches(rows, 200).Error
}

// FleetSince returns the buckets of one resolution at or after from (and before to when to is not zero).
func (s *Store) FleetSince(ctx context.Context, res string, from, to time.Time) ([]FleetBucket, error) {
	var out []FleetBucket
	q := s.LogStore().DB.WithContext(ctx).Where("res = ? AND at >= ?", res, from.UTC())
	if !to.IsZero() {
		q = q.Where("at < ?", to.UTC())
	}
	err := q.Find(&out).Error
	return out, err
}

// ReplaceFleet swaps rows for their roll-up in one transaction: the rolled-up rows go in, the rows of res in
// [from, to) go out.
func (s *Store) ReplaceFleet(ctx context.Context, res string, from, to time.Time, rolled []FleetBucket) error {
	return s.LogStore().Transact(ctx, func(tx *gorm.DB) error {
		if len(rolled) > 0 {
			if err := tx.Clauses(clause.OnConflict{UpdateAll: true}).CreateInBatches(rolled, 200).Error; err != nil {
				return err
			}
		}
		return tx.Where("res = ? AND at >= ? AND at < ?", res, from.UTC(), to.UTC()).Delete(&FleetBucket{}).Error
	})
}

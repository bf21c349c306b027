package channel

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"tollgate/service/cache"
)

// LastTestTTL is how long a channel's last test result is kept.
const LastTestTTL = 7 * 24 * time.Hour

// LastTest is the outcome of a channel's latest test (by hand, "test all" or the schedule): what the channel
// list shows when it has no live traffic, so a channel that failed its tests is not "Healthy" and a test's
// latency is shown as a test's.
type LastTest struct {
	OK         bool      `json:"ok"`
	LatencyMs  int64     `json:"latency_ms"`
	ErrorClass string    `json:"error_class,omitempty"`
	At         time.Time `json:"at"`
}

// LastTests keeps each channel's last test in the shared cache (one key per channel), so every node shows it.
type LastTests struct {
	Cache cache.Cache
}

func lastTestKey(id int64) string { return "chtest:" + strconv.FormatInt(id, 10) }

// Remember stores a test's outcome as the channel's last.
func (l LastTests) Remember(ctx context.Context, res TestResult, at time.Time) error {
	if l.Cache == nil {
		return nil
	}
	b, err := json.Marshal(LastTest{OK: res.OK, LatencyMs: res.LatencyMs, ErrorClass: res.ErrorClass, At: at.UTC()})
	if err != nil {
		return err
	}
	return l.Cache.Set(ctx, lastTestKey(res.ChannelID), b, LastTestTTL)
}

// Get answers the channel's last test, if one is kept.
func (l LastTests) Get(ctx context.Context, id int64) (*LastTest, error) {
	if l.Cache == nil {
		return nil, nil
	}
	b, ok, err := l.Cache.Get(ctx, lastTestKey(id))
	if err != nil || !ok {
		return nil, err
	}
	var t LastTest
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, nil // an unreadable entry is as good as none; the next test overwrites it
	}
	return &t, nil
}

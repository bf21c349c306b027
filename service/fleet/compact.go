package fleet

import (
	"context"
	"time"

	"tollgate/model"
)

// compactLock keeps compaction to one node at a time.
const compactLock = "fleet:compact"

// Compact rolls minutes older than minuteKeep into hours and hours older than hourKeep into days (every node's
// rows into one row, node "*"), and deletes days older than dayKeep. Whole hours and days only, each in one
// transaction, so a bucket is never counted twice or lost.
func (r *Recorder) Compact(ctx context.Context) error {
	if r.cache != nil {
		ok, err := r.cache.SetNX(ctx, compactLock, []byte(r.node), compactEvery-time.Second)
		if err != nil || !ok {
			return err
		}
	}
	now := r.now().UTC()
	if err := r.roll(ctx, model.ResMinute, model.ResHour, now.Add(-minuteKeep).Truncate(time.Hour), time.Hour); err != nil {
		return err
	}
	if err := r.roll(ctx, model.ResHour, model.ResDay, now.Add(-hourKeep).Truncate(24*time.Hour), 24*time.Hour); err != nil {
		return err
	}
	return r.store.ReplaceFleet(ctx, model.ResDay, time.Unix(0, 0), now.Add(-dayKeep), nil)
}

// roll merges rows of res before until into rows of into, step long.
func (r *Recorder) roll(ctx context.Context, res, into string, until time.Time, step time.Duration) error {
	rows, err := r.store.FleetSince(ctx, res, time.Unix(0, 0), until)
	if err != nil || len(rows) == 0 {
		return err
	}
	from := until
	for _, b := range rows {
		if b.At.Before(from) {
			from = b.At
		}
	}
	existing, err := r.store.FleetSince(ctx, into, from.Truncate(step), until)
	if err != nil {
		return err
	}
	type k struct {
		at    time.Time
		ch    int64
		model string
	}
	out := map[k]*model.FleetBucket{}
	put := func(b model.FleetBucket, at time.Time) {
		key := k{at, b.ChannelID, b.Model}
		t := out[key]
		if t == nil {
			t = &model.FleetBucket{Res: into, At: at, ChannelID: b.ChannelID, Model: b.Model, Node: "*",
				Classes: model.JSON[map[string]int64]{V: map[string]int64{}}}
			out[key] = t
		}
		t.Requests += b.Requests
		t.Successes += b.Successes
		for c, v := range b.Classes.V {
			t.Classes.V[c] += v
		}
		t.LatencySumMs += b.LatencySumMs
		addHist(&t.LatencyHist.V, b.LatencyHist.V)
		t.FirstByteCount += b.FirstByteCount
		t.FirstByteSumMs += b.FirstByteSumMs
		addHist(&t.FirstByteHist.V, b.FirstByteHist.V)
		t.PromptTokens += b.PromptTokens
		t.OutputTokens += b.OutputTokens
	}
	for _, b := range existing {
		put(b, b.At)
	}
	for _, b := range rows {
		put(b, b.At.Truncate(step))
	}
	rolled := make([]model.FleetBucket, 0, len(out))
	for _, b := range out {
		rolled = append(rolled, *b)
	}
	return r.store.ReplaceFleet(ctx, res, time.Unix(0, 0), until, rolled)
}

package usagelog_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"gorm.io/gorm"

	"tollgate/model"
	"tollgate/service/usagelog"
)

// With a separate log database the writer commits a batch's money in the main database, then its rows in the
// log one. A money commit that went through but was reported failed (the connection dropped before the
// answer) is run again: it must move no money twice. A try that really failed (rolled back) leaves no mark, so
// the next try moves the money once.
func TestApplyMoneyOnce_ARetriedCommitThatWentThroughChargesOnce(t *testing.T) {
	st := openStore(t)
	const start = 50_000_000
	threeUsers(t, st, start)
	batch := entries(30, 1, "once")
	spent := map[int64]int64{}
	for _, e := range batch {
		spent[e.Log.UserID] += e.Log.Cost
	}
	id := model.NewMoneyBatchID(time.Now())
	failed := errors.New("the try failed after the money step")
	if err := st.DB.Transaction(func(tx *gorm.DB) error {
		if err := usagelog.ApplyMoneyOnce(tx, st, id, batch); err != nil {
			return err
		}
		return failed // rolled back: the mark goes with the money
	}); !errors.Is(err, failed) {
		t.Fatalf("first try: %v", err)
	}
	for try := range 3 { // went through, then run again twice as if its answer had been lost
		if err := st.DB.Transaction(func(tx *gorm.DB) error { return usagelog.ApplyMoneyOnce(tx, st, id, batch) }); err != nil {
			t.Fatalf("try %d: %v", try, err)
		}
	}
	checkSpent(t, st, start, spent) // charged once
	// Another batch (another id) moves its own money.
	if err := st.DB.Transaction(func(tx *gorm.DB) error {
		return usagelog.ApplyMoneyOnce(tx, st, model.NewMoneyBatchID(time.Now()), batch[:1])
	}); err != nil {
		t.Fatal(err)
	}
	var u model.User
	st.DB.First(&u, batch[0].Log.UserID)
	if want := spent[batch[0].Log.UserID] + batch[0].Log.Cost; u.UsedQuota != want {
		t.Fatalf("a second batch: used %d, want %d", u.UsedQuota, want)
	}
}

// Marks older than six hours are pruned; newer ones stay (a batch is retried within seconds).
func TestPruneMoneyBatches_KeepsSixHours(t *testing.T) {
	st := openStore(t)
	now := time.Now()
	old, recent := model.NewMoneyBatchID(now.Add(-7*time.Hour)), model.NewMoneyBatchID(now.Add(-5*time.Hour))
	for _, id := range []string{old, recent} {
		if err := st.DB.Transaction(func(tx *gorm.DB) error {
			_, err := st.ClaimMoneyBatch(context.Background(), tx, id)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.PruneMoneyBatches(context.Background(), now); err != nil {
		t.Fatal(err)
	}
	var ids []string
	st.DB.Model(&model.MoneyBatch{}).Order("id").Pluck("id", &ids)
	if len(ids) != 1 || ids[0] != recent {
		t.Fatalf("marks after pruning: %v, want only %s", ids, recent)
	}
}

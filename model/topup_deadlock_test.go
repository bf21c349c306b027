package model_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"tollgate/model"
)

// CI failed with "create order: Error 1213 Deadlock found" (TestCreditBooks_EverySourceThenSpendAddsUp):
// creating a capped order locks the user's row and then inserts into topup_orders, while a payment's credit
// marks its order paid and then updates the user's row — the opposite order. InnoDB kills one of the two;
// the store now runs such transactions again instead of answering 500.
func TestCreateTopupCapped_DoesNotFailWhilePaymentsCreditTheSameUser(t *testing.T) {
	s := storeForPass(t)
	if s.Kind != "mysql" {
		t.Skip("SQLite serialises writers: no deadlock to provoke")
	}
	ctx := context.Background()
	u := &model.User{Username: "payer", PasswordHash: "x", Role: "user", Group: "default", Status: "enabled"}
	if err := s.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	order := func(i int) *model.TopupOrder {
		return &model.TopupOrder{OrderNo: fmt.Sprintf("o-%d-%d", i, time.Now().UnixNano()), UserID: u.ID, Provider: "epay",
			Amount: "1.00", Currency: "CNY", Quota: 100, Status: model.TopupPending, ExpiresAt: now.Add(time.Hour)}
	}
	const rounds = 40
	var wg sync.WaitGroup
	errs := make(chan error, 2*rounds)
	for i := 0; i < rounds; i++ {
		wg.Add(2)
		go func(i int) { // a user opening an order
			defer wg.Done()
			if _, err := s.CreateTopupCapped(ctx, order(i), 1000, now); err != nil {
				errs <- fmt.Errorf("create %d: %w", i, err)
			}
		}(i)
		go func(i int) { // a notify crediting a paid order: the order's row first, then the user's
			defer wg.Done()
			o := order(1000 + i)
			if err := s.CreateTopup(ctx, o); err != nil {
				errs <- err
				return
			}
			err := s.Transact(ctx, func(tx *gorm.DB) error {
				if err := tx.Model(&model.TopupOrder{}).Where("order_no = ? AND status = ?", o.OrderNo, model.TopupPending).
					Update("status", model.TopupPaid).Error; err != nil {
					return err
				}
				return s.CreditUser(ctx, tx, &model.Credit{UserID: u.ID, Units: 100, Source: model.CreditTopup,
					Ref: o.OrderNo, IdemKey: "topup:" + o.OrderNo})
			})
			if err != nil {
				errs <- fmt.Errorf("pay %d: %w", i, err)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := s.SumCredits(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got != rounds*100 {
		t.Fatalf("credited %d, want %d", got, rounds*100)
	}
}

package payment

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"tollgate/service/setting"
)

func TestQuote_RateAndHighestBonusTierRoundHalfAwayFromZero(t *testing.T) {
	tiers := []setting.BonusTier{{MinAmount: "50", Percent: "5"}, {MinAmount: "100", Percent: "10"}, {MinAmount: "20", Percent: "0"}}
	cases := []struct {
		amount, rate string
		quota, bonus int64
	}{
		{"10.00", "7.3", 1369863, 0},         // 10/7.3 = 1.369863013… USD
		{"10.00", "1", 10_000_000, 0},        // USD at rate 1
		{"60", "7.3", 8630137, 410959},       // 8219178.08 + 5 % (3 CNY = 410958.9)
		{"100.00", "7.3", 15068493, 1369863}, // highest tier that applies: 10 %
		{"49.99", "1", 49_990_000, 0},        // below every paying tier (the 20 tier pays 0 %)
		{"0.0000073", "7.3", 1, 0},           // 0.000001 USD
		{"0.00000365", "7.3", 1, 0},          // exactly half a unit rounds away from zero
	}
	for _, c := range cases {
		q, b, ok := Quote(decimal.RequireFromString(c.amount), decimal.RequireFromString(c.rate), tiers)
		if !ok || q != c.quota || b != c.bonus {
			t.Errorf("Quote(%s at %s) = %d, %d, %v; want %d, %d", c.amount, c.rate, q, b, ok, c.quota, c.bonus)
		}
	}
	if _, _, ok := Quote(decimal.RequireFromString("10"), decimal.Zero, nil); ok {
		t.Error("a zero rate must not quote")
	}
}

func TestCapper_AllowsNPerWindowAndCountsTheRest(t *testing.T) {
	c := newCapper(2, time.Minute)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if ok, _ := c.take(base); !ok {
		t.Fatal("first")
	}
	if ok, _ := c.take(base); !ok {
		t.Fatal("second")
	}
	if ok, _ := c.take(base); ok {
		t.Fatal("third must be capped")
	}
	if ok, dropped := c.take(base.Add(61 * time.Second)); !ok || dropped != 1 {
		t.Fatalf("next window: %v %d", ok, dropped)
	}
}

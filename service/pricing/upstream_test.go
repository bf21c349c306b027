package pricing

import (
	"testing"

	"github.com/shopspring/decimal"

	"tollgate/model"
	"tollgate/service/apperr"
)

func TestUpstreamCost_ModelOverridesChannelPriceOverridesRatio(t *testing.T) {
	sell := Price{Input: d("0.15"), Output: d("0.6")}
	u := Usage{Input: 1000, Output: 1000}
	chPrice := &model.CostPrice{Input: d("0.10"), Output: d("0.40")}
	ratio := decimal.NullDecimal{Decimal: d("0.5"), Valid: true}
	override := map[string]model.CostPrice{"gpt-4o-mini": {Input: d("0.05"), Output: d("0.2")}, "free": {}}
	cases := []struct {
		name  string
		c     model.Channel
		model string
		u     Usage
		want  int64
	}{
		{"nothing set costs nothing", model.Channel{}, "gpt-4o-mini", u, 0},
		{"channel price", model.Channel{CostPrice: model.JSON[*model.CostPrice]{V: chPrice}}, "x", u, 100 + 400},
		{"ratio of the sell price", model.Channel{CostRatio: ratio}, "x", u, (150 + 600) / 2},
		{"ratio rounds once, half away from zero", model.Channel{CostRatio: ratio}, "x", Usage{Input: 1, Output: 1}, 0},                                // 0.375
		{"ratio rounds up at a half", model.Channel{CostRatio: decimal.NullDecimal{Decimal: d("2"), Valid: true}}, "x", Usage{Input: 3, Output: 0}, 1}, // 0.9
		{"model override beats channel price", model.Channel{CostPrice: model.JSON[*model.CostPrice]{V: chPrice},
			CostPrices: model.JSON[map[string]model.CostPrice]{V: override}}, "gpt-4o-mini", u, 50 + 200},
		{"model override beats ratio", model.Channel{CostRatio: ratio, CostPrices: model.JSON[map[string]model.CostPrice]{V: override}}, "gpt-4o-mini", u, 250},
		{"zero override is free", model.Channel{CostRatio: ratio, CostPrices: model.JSON[map[string]model.CostPrice]{V: override}}, "free", u, 0},
		{"other models keep the channel terms", model.Channel{CostRatio: ratio, CostPrices: model.JSON[map[string]model.CostPrice]{V: override}}, "x", u, 375},
		{"per call", model.Channel{CostPrice: model.JSON[*model.CostPrice]{V: &model.CostPrice{Input: d("1"), PerCall: d("0.002")}}}, "x", u, 2000},
		{"saturates like Cost", model.Channel{CostPrice: model.JSON[*model.CostPrice]{V: chPrice}}, "x", Usage{Output: 1<<63 - 1}, MaxCost},
	}
	for _, tc := range cases {
		if got := UpstreamCost(&tc.c, tc.model, sell, tc.u); got != tc.want {
			t.Errorf("%s: got %d want %d", tc.name, got, tc.want)
		}
	}
}

func TestParseCostPrice_NamesTheTerm(t *testing.T) {
	if _, err := ParseCostPrice("cost_price", CostPriceRow{Input: "0.1", Output: "-1"}); err == nil || err.Error() == "" {
		t.Fatal("negative output accepted")
	} else if e, ok := asField(err); !ok || e != "cost_price.output" {
		t.Fatalf("field = %q", e)
	}
	if _, err := ParseCostPrice("cost_prices.m", CostPriceRow{CacheRead: "abc"}); err == nil {
		t.Fatal("abc accepted")
	}
	p, err := ParseCostPrice("cost_price", CostPriceRow{Input: " 0.10 ", Output: "0.4"})
	if err != nil || !p.Input.Equal(d("0.1")) || !p.Output.Equal(d("0.4")) || !p.PerCall.IsZero() {
		t.Fatalf("parsed = %+v, %v", p, err)
	}
	for _, bad := range []string{"-0.1", "101", "x", "1e400"} {
		if _, err := ParseCostRatio("cost_ratio", bad); err == nil {
			t.Errorf("ratio %q accepted", bad)
		}
	}
	if r, err := ParseCostRatio("cost_ratio", ""); err != nil || r.Valid {
		t.Fatalf("empty ratio = %+v, %v", r, err)
	}
}

func asField(err error) (string, bool) {
	e, ok := apperr.As(err)
	if !ok {
		return "", false
	}
	return e.Field, true
}

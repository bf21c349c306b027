package pricing

import (
	"strings"

	"github.com/shopspring/decimal"

	"tollgate/model"
	"tollgate/service/apperr"
)

// CostPriceRow is an upstream cost price as the admin API reads it: decimal USD strings, empty meaning 0.
type CostPriceRow struct {
	Input      string `json:"input"`
	Output     string `json:"output"`
	CacheRead  string `json:"cache_read"`
	CacheWrite string `json:"cache_write"`
	PerCall    string `json:"per_call"`
}

// ParseCostPrice validates a cost price row with the rules of the price table (non-negative decimals up to
// 1,000,000 USD); field prefixes the name of the term at fault ("cost_price" → "cost_price.output").
func ParseCostPrice(field string, r CostPriceRow) (model.CostPrice, error) {
	var p model.CostPrice
	for _, f := range []struct {
		name string
		v    string
		dst  *decimal.Decimal
	}{{"input", r.Input, &p.Input}, {"output", r.Output, &p.Output}, {"cache_read", r.CacheRead, &p.CacheRead},
		{"cache_write", r.CacheWrite, &p.CacheWrite}, {"per_call", r.PerCall, &p.PerCall}} {
		d, err := parseDec(field+"."+f.name, f.v)
		if err != nil {
			return p, err
		}
		*f.dst = d
	}
	return p, nil
}

// maxCostRatio bounds cost_ratio: an upstream charging 100 times the sell price is a typo.
var maxCostRatio = decimal.NewFromInt(100)

// ParseCostRatio validates a cost ratio (a decimal multiple of the sell price, 0 … 100); "" means none.
func ParseCostRatio(field, v string) (decimal.NullDecimal, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return decimal.NullDecimal{}, nil
	}
	d, err := decimal.NewFromString(v)
	if err != nil || d.IsNegative() || d.GreaterThan(maxCostRatio) {
		return decimal.NullDecimal{}, apperr.Field(field, "a decimal multiple of the sell price between 0 and 100")
	}
	return decimal.NullDecimal{Decimal: d, Valid: true}, nil
}

// IsZeroCost reports whether p prices nothing (every term 0).
func IsZeroCost(p model.CostPrice) bool {
	return p.Input.IsZero() && p.Output.IsZero() && p.CacheRead.IsZero() && p.CacheWrite.IsZero() && p.PerCall.IsZero()
}

// UpstreamCost is what usage of modelName served by channel c cost the reseller, in quota units, by Cost's
// one rounding rule (it is Cost on another price): the channel's price for that model (cost_prices[model]),
// else its price for every model (cost_price), else the sell price sell (the price table's, before any group
// or tier ratio) × cost_ratio, else 0. It reads only the channel's snapshot fields: no I/O, so the relay can
// call it on the hot path.
func UpstreamCost(c *model.Channel, modelName string, sell Price, u Usage) int64 {
	if p, ok := c.CostPrices.V[modelName]; ok {
		return Cost(priceOf(p), one, u)
	}
	if c.CostPrice.V != nil {
		return Cost(priceOf(*c.CostPrice.V), one, u)
	}
	if c.CostRatio.Valid {
		return Cost(sell, c.CostRatio.Decimal, u)
	}
	return 0
}

func priceOf(p model.CostPrice) Price {
	return Price{Input: p.Input, Output: p.Output, CacheRead: p.CacheRead, CacheWrite: p.CacheWrite, PerCall: p.PerCall}
}

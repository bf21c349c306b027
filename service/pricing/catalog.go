package pricing

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/shopspring/decimal"

	"tollgate/service/apperr"
	"tollgate/service/setting"
)

// ratioUSD is what model ratio 1 means in new-api's format: 2 USD per 1M input tokens ($0.002 per 1K).
var ratioUSD = decimal.NewFromInt(2)

// maxCatalogRows bounds an imported catalogue, like Replace.
const maxCatalogRows = 10000

// newAPICatalog is new-api's ratio format, as its options export writes it (each map may also arrive as a JSON
// string, the way its option table stores them).
type newAPICatalog struct {
	ModelRatio      json.RawMessage `json:"model_ratio"`
	CompletionRatio json.RawMessage `json:"completion_ratio"`
	CacheRatio      json.RawMessage `json:"cache_ratio"`
	CreateCacheRate json.RawMessage `json:"create_cache_ratio"`
	ModelPrice      json.RawMessage `json:"model_price"`
}

// ParseCatalog reads a price catalogue in our format (a list of rows, or {"prices": [rows]}) or in new-api's
// ratio format ({"model_ratio": {model: r}, "completion_ratio": {...}, "cache_ratio": {...},
// "create_cache_ratio": {...}, "model_price": {model: USD per call}}, also with the option names ModelRatio,
// CompletionRatio, CacheRatio, CreateCacheRatio, ModelPrice): ratio r is 2·r USD per 1M input tokens; output is
// input × completion ratio (1 when absent); cache read and write are input × their ratio (0 when absent); a model
// price is per call and wins. Rows come back sorted by model, unvalidated beyond the shape (Replace checks them).
func ParseCatalog(body []byte) (rows []setting.PriceRow, format string, err error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if err := json.Unmarshal(trimmed, &rows); err != nil {
			return nil, "", apperr.Field("catalog", "a list of price rows")
		}
		return rows, "tollgate", nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &top); err != nil {
		return nil, "", apperr.New(400, "invalid_json")
	}
	if raw, ok := top["prices"]; ok {
		if err := json.Unmarshal(raw, &rows); err != nil {
			return nil, "", apperr.Field("prices", "a list of price rows")
		}
		return rows, "tollgate", nil
	}
	var c newAPICatalog
	pick := func(names ...string) json.RawMessage {
		for _, n := range names {
			if v, ok := top[n]; ok {
				return v
			}
		}
		return nil
	}
	c.ModelRatio, c.CompletionRatio = pick("model_ratio", "ModelRatio"), pick("completion_ratio", "CompletionRatio")
	c.CacheRatio, c.CreateCacheRate = pick("cache_ratio", "CacheRatio"), pick("create_cache_ratio", "CreateCacheRatio")
	c.ModelPrice = pick("model_price", "ModelPrice")
	if c.ModelRatio == nil && c.ModelPrice == nil {
		return nil, "", apperr.Field("catalog", "our price rows, or new-api's model_ratio / model_price maps")
	}
	maps := make([]map[string]decimal.Decimal, 5)
	for i, f := range []struct {
		name string
		raw  json.RawMessage
	}{{"model_ratio", c.ModelRatio}, {"completion_ratio", c.CompletionRatio}, {"cache_ratio", c.CacheRatio},
		{"create_cache_ratio", c.CreateCacheRate}, {"model_price", c.ModelPrice}} {
		if maps[i], err = ratioMap(f.name, f.raw); err != nil {
			return nil, "", err
		}
	}
	ratio, completion, cacheR, cacheW, perCall := maps[0], maps[1], maps[2], maps[3], maps[4]
	names := map[string]bool{}
	for m := range ratio {
		names[m] = true
	}
	for m := range perCall {
		names[m] = true
	}
	if len(names) > maxCatalogRows {
		return nil, "", apperr.Field("catalog", fmt.Sprintf("at most %d models", maxCatalogRows))
	}
	for m := range names {
		row := setting.PriceRow{Model: m, Input: "0", Output: "0", CacheRead: "0", CacheWrite: "0", PerCall: "0"}
		if p, ok := perCall[m]; ok {
			row.PerCall = p.String()
		} else {
			in := ratio[m].Mul(ratioUSD)
			out := in
			if cr, ok := completion[m]; ok {
				out = in.Mul(cr)
			}
			row.Input, row.Output = in.String(), out.String()
			row.CacheRead, row.CacheWrite = in.Mul(cacheR[m]).String(), in.Mul(cacheW[m]).String()
		}
		rows = append(rows, row)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Model < rows[j].Model })
	return rows, "new-api", nil
}

// ratioMap reads {model: number} (or that map as a JSON string) exactly, as decimals; a negative or
// non-numeric value is refused naming the field and the model.
func ratioMap(field string, raw json.RawMessage) (map[string]decimal.Decimal, error) {
	out := map[string]decimal.Decimal{}
	if len(raw) == 0 || string(raw) == "null" {
		return out, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil { // the option table's form: the map as a string
		raw = json.RawMessage(s)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]json.Number
	if err := dec.Decode(&m); err != nil {
		return nil, apperr.Field(field, "an object of model → number")
	}
	if len(m) > maxCatalogRows {
		return nil, apperr.Field(field, fmt.Sprintf("at most %d models", maxCatalogRows))
	}
	for k, v := range m {
		d, err := decimal.NewFromString(v.String())
		if err != nil || d.IsNegative() || d.GreaterThan(decimal.NewFromInt(1_000_000)) {
			return nil, apperr.Field(field, fmt.Sprintf("%q: a number from 0 to 1000000", k))
		}
		if strings.TrimSpace(k) == "" {
			return nil, apperr.Field(field, "a model name is empty")
		}
		out[k] = d
	}
	return out, nil
}

// Merge lays imported rows over the current table: imported models replace theirs, others stay.
func Merge(current []Price, imported []setting.PriceRow) []setting.PriceRow {
	byModel := map[string]setting.PriceRow{}
	for _, p := range current {
		byModel[p.Model] = Row(p, nil)
	}
	for _, r := range imported {
		byModel[strings.TrimSpace(r.Model)] = r
	}
	out := make([]setting.PriceRow, 0, len(byModel))
	for _, r := range byModel {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Model < out[j].Model })
	return out
}

// Validate checks rows as Replace would, without saving: the first bad one is the error.
func Validate(rows []setting.PriceRow) error {
	_, err := check(rows)
	return err
}

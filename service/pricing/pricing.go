// Package pricing holds model prices (decimal USD per 1M tokens or per call) and turns usage into quota units
// with one rounding rule. Prices are served from a snapshot refreshed on every node through the bus.
package pricing

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/shopspring/decimal"

	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/audit"
	"tollgate/service/bus"
	"tollgate/service/setting"
)

// Topic is the bus topic of price changes.
const Topic = "price"

var one = decimal.NewFromInt(1)

// MulRatio is x × ratio, without the decimal product when either is one (most groups and tiers pay ×1, and the
// product allocates; the relay takes it several times a request).
func MulRatio(x, ratio decimal.Decimal) decimal.Decimal {
	switch {
	case ratio.Equal(one):
		return x
	case x.Equal(one):
		return ratio
	}
	return x.Mul(ratio)
}

// UnitsPerUSD is how many quota units make one US dollar.
const UnitsPerUSD = 1_000_000

// Usage is what one request consumed, normalised across protocols: Input excludes cached tokens. Beyond tokens:
// images generated (of ImageSize, e.g. "1024x1024", and ImageQuality, e.g. "hd"), milliseconds of audio in,
// characters of speech input and rerank searches.
type Usage struct {
	Input, Output, CacheRead, CacheWrite int64

	Images                  int64
	ImageSize, ImageQuality string
	AudioMs                 int64
	Chars                   int64
	Searches                int64
}

// PromptTotal is every input token, cached or not.
func (u Usage) PromptTotal() int64 { return u.Input + u.CacheRead + u.CacheWrite }

// Price is a model's price.
type Price = model.Price

// Cost turns usage into quota units: Σ tokens × USD-per-1M × ratio, because USD per 1M tokens × tokens / 1M
// × 1M units per USD = price × tokens units; likewise images × USD per image × 1M, audio minutes × USD per
// minute × 1M, characters × USD per 1M characters, searches × USD per 1,000 × 1,000. A prompt longer than a
// tier's threshold takes that tier's input and output prices. A per-call price replaces all of these.
// Rounding happens once, here: half away from zero to whole units.
func Cost(p Price, ratio decimal.Decimal, u Usage) int64 {
	var sum decimal.Decimal
	if !p.PerCall.IsZero() {
		sum = p.PerCall.Mul(unitsPerUSD)
	} else {
		in, out, _ := tierPrices(p, u.PromptTotal())
		// Zero terms are skipped: decimal arithmetic allocates, and most requests have no cache tokens.
		for _, t := range [4]struct {
			price  decimal.Decimal
			tokens int64
		}{{in, u.Input}, {out, u.Output}, {p.CacheRead, u.CacheRead}, {p.CacheWrite, u.CacheWrite}} {
			if t.tokens != 0 && !t.price.IsZero() {
				sum = sum.Add(t.price.Mul(decimal.NewFromInt(t.tokens)))
			}
		}
		if u.Images != 0 {
			if pi := ImagePrice(p, u.ImageSize, u.ImageQuality); !pi.IsZero() {
				sum = sum.Add(pi.Mul(decimal.NewFromInt(u.Images)).Mul(unitsPerUSD))
			}
		}
		if u.AudioMs != 0 && !p.PerAudioMinute.IsZero() {
			// USD per minute × ms / 60,000 × 1M units = price × ms × 50 / 3: exact up to the final rounding.
			sum = sum.Add(p.PerAudioMinute.Mul(decimal.NewFromInt(u.AudioMs)).Mul(fifty).DivRound(three, 20))
		}
		if u.Chars != 0 && !p.Per1MChars.IsZero() {
			sum = sum.Add(p.Per1MChars.Mul(decimal.NewFromInt(u.Chars)))
		}
		if u.Searches != 0 && !p.Per1KSearches.IsZero() {
			sum = sum.Add(p.Per1KSearches.Mul(decimal.NewFromInt(u.Searches)).Mul(thousand))
		}
	}
	sum = MulRatio(sum, ratio)
	// Clamp before converting: IntPart wraps past int64, and a hold of 2^62 tokens must not turn negative or
	// tiny. MaxCost stays exact in a double (Redis Lua numbers), so the ledger can add it safely.
	if sum.Sign() <= 0 {
		return 0
	}
	if sum.GreaterThan(maxCost) {
		return MaxCost
	}
	return sum.Round(0).IntPart()
}

var (
	unitsPerUSD = decimal.NewFromInt(UnitsPerUSD)
	three       = decimal.NewFromInt(3)
	fifty       = decimal.NewFromInt(50)
	thousand    = decimal.NewFromInt(1000)
)

// tierPrices are the input and output prices for a prompt of promptTokens: the highest tier it is above,
// else the row's own; above is that tier's threshold (0: none).
func tierPrices(p Price, promptTokens int64) (in, out decimal.Decimal, above int64) {
	in, out = p.Input, p.Output
	for _, t := range p.Tiers.V {
		if promptTokens > t.AbovePromptTokens && t.AbovePromptTokens >= above {
			in, out, above = t.Input, t.Output, t.AbovePromptTokens
		}
	}
	return in, out, above
}

// ImagePrice is the USD price of one image of size and quality: per_image_by_size["size/quality"], else
// per_image_by_size["size"], else per_image.
func ImagePrice(p Price, size, quality string) decimal.Decimal {
	if by := p.PerImageBySize.V; len(by) > 0 && size != "" {
		if quality != "" {
			if v, ok := by[size+"/"+quality]; ok {
				return v
			}
		}
		if v, ok := by[size]; ok {
			return v
		}
	}
	return p.PerImage
}

// UnitsFor turns an amount of money in some currency into quota units at rate (that currency per 1 USD of
// quota, e.g. 7.3 for CNY), with Cost's rounding rule: amount × 1,000,000 / rate, rounded once, half away
// from zero, exactly (no intermediate rounding of the quotient). ok is false for a rate ≤ 0, a negative
// amount or a result above MaxCost.
func UnitsFor(amount, rate decimal.Decimal) (units int64, ok bool) {
	if rate.Sign() <= 0 || amount.Sign() < 0 {
		return 0, false
	}
	q, r := amount.Mul(decimal.NewFromInt(UnitsPerUSD)).QuoRem(rate, 0)
	if r.Abs().Mul(decimal.NewFromInt(2)).GreaterThanOrEqual(rate) {
		q = q.Add(one)
	}
	if q.GreaterThan(maxCost) {
		return 0, false
	}
	return q.IntPart(), true
}

// Percent is percent % of units (e.g. an inviter's share of a top-up), with Cost's rounding rule: exactly
// units × percent / 100, rounded once, half away from zero; 0 for a percent or units ≤ 0, at most MaxCost.
func Percent(units int64, percent decimal.Decimal) int64 {
	if units <= 0 || percent.Sign() <= 0 {
		return 0
	}
	v := decimal.NewFromInt(units).Mul(percent).Shift(-2) // exact: no division
	if v.GreaterThan(maxCost) {
		return MaxCost
	}
	return v.Round(0).IntPart()
}

// MaxCost is the largest cost Cost returns (2^53 units, far beyond any balance).
const MaxCost = 1 << 53

var maxCost = decimal.NewFromInt(MaxCost)

// Breakdown renders the price applied to usage u for a usage log: the token prices (a prompt-length tier's
// when one applied) and, for what was billed beyond tokens, the quantity and its unit price.
func Breakdown(p Price, u Usage) model.PriceBreakdown {
	in, out, above := tierPrices(p, u.PromptTotal())
	b := model.PriceBreakdown{Input: in.String(), Output: out.String(), CacheRead: p.CacheRead.String(),
		CacheWrite: p.CacheWrite.String(), PerCall: p.PerCall.String(), TierAbove: above}
	if u.Images > 0 {
		b.Images, b.PerImage = u.Images, ImagePrice(p, u.ImageSize, u.ImageQuality).String()
		b.ImageSize = u.ImageSize
		if u.ImageQuality != "" {
			b.ImageSize += "/" + u.ImageQuality
		}
	}
	if u.AudioMs > 0 {
		b.AudioSeconds, b.PerAudioMinute = decimal.New(u.AudioMs, -3).String(), p.PerAudioMinute.String()
	}
	if u.Chars > 0 {
		b.Chars, b.Per1MChars = u.Chars, p.Per1MChars.String()
	}
	if u.Searches > 0 {
		b.Searches, b.Per1KSearches = u.Searches, p.Per1KSearches.String()
	}
	return b
}

// Service is the price book.
type Service struct {
	store    *model.Store
	bus      bus.Bus
	settings *setting.Service
	audit    *audit.Log
	snap     atomic.Pointer[map[string]Price]
	def      atomic.Pointer[defaultPrice]
}

// New builds the service; call Load before serving.
func New(store *model.Store, b bus.Bus, settings *setting.Service, a *audit.Log) *Service {
	s := &Service{store: store, bus: b, settings: settings, audit: a}
	empty := map[string]Price{}
	s.snap.Store(&empty)
	b.Subscribe(Topic, func(bus.Message) { _ = s.Load(context.Background()) })
	return s
}

// Load refreshes the snapshot from SQL.
func (s *Service) Load(ctx context.Context) error {
	rows, err := s.store.ListPrices(ctx)
	if err != nil {
		return fmt.Errorf("load prices: %w", err)
	}
	m := make(map[string]Price, len(rows))
	for _, r := range rows {
		m[r.Model] = r
	}
	s.snap.Store(&m)
	return nil
}

// Lookup returns the price of model; for an unknown model, the default price when the settings allow it.
func (s *Service) Lookup(modelName string) (Price, bool) {
	if p, ok := (*s.snap.Load())[modelName]; ok {
		return p, true
	}
	st := s.settings.Get()
	if st.UnknownModelPolicy != "default" {
		return Price{}, false
	}
	d := s.def.Load()
	if d == nil || d.from != st { // parse the default once per settings snapshot, not per request
		p, err := parseRow(st.DefaultPrice)
		d = &defaultPrice{from: st, p: p, ok: err == nil}
		s.def.Store(d)
	}
	p := d.p
	p.Model = modelName
	return p, d.ok
}

// defaultPrice is the settings' default price, parsed, with the snapshot it came from.
type defaultPrice struct {
	from *setting.Settings
	p    Price
	ok   bool
}

// All returns every configured price.
func (s *Service) All() []Price {
	m := *s.snap.Load()
	out := make([]Price, 0, len(m))
	for _, p := range m {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Price) int { return strings.Compare(a.Model, b.Model) })
	return out
}

func parseDec(field, v string) (decimal.Decimal, error) {
	if strings.TrimSpace(v) == "" {
		return decimal.Zero, nil
	}
	d, err := decimal.NewFromString(strings.TrimSpace(v))
	if err != nil || d.IsNegative() || d.GreaterThan(decimal.NewFromInt(1_000_000)) {
		return decimal.Zero, apperr.Field(field, "a non-negative decimal (USD)")
	}
	return d, nil
}

func parseRow(r setting.PriceRow) (Price, error) {
	var p Price
	var err error
	p.Model = strings.TrimSpace(r.Model)
	for _, f := range []struct {
		name string
		v    string
		dst  *decimal.Decimal
	}{{"input", r.Input, &p.Input}, {"output", r.Output, &p.Output}, {"cache_read", r.CacheRead, &p.CacheRead},
		{"cache_write", r.CacheWrite, &p.CacheWrite}, {"per_call", r.PerCall, &p.PerCall}} {
		if *f.dst, err = parseDec(f.name, f.v); err != nil {
			return p, err
		}
	}
	if err := parseMedia(r, &p); err != nil {
		return p, err
	}
	return p, nil
}

// Replace swaps the whole price table (PUT /api/admin/pricing).
func (s *Service) Replace(ctx context.Context, actor audit.Actor, rows []setting.PriceRow) ([]Price, error) {
	out, err := check(rows)
	if err != nil {
		return nil, err
	}
	if err := s.store.ReplacePrices(ctx, out); err != nil {
		return nil, fmt.Errorf("save prices: %w", err)
	}
	s.audit.Record(ctx, actor, "pricing.replace", "", map[string]int{"rows": len(out)})
	_ = s.Load(ctx)
	_ = s.bus.Publish(ctx, Topic, "")
	return s.All(), nil
}

// check parses and validates a whole price table: at most 10000 rows, each model once, decimals in range.
func check(rows []setting.PriceRow) ([]Price, error) {
	if len(rows) > maxCatalogRows {
		return nil, apperr.Field("pricing", "at most 10000 rows")
	}
	seen := map[string]bool{}
	out := make([]Price, 0, len(rows))
	for _, r := range rows {
		p, err := parseRow(r)
		if err != nil {
			return nil, err
		}
		if p.Model == "" || len(p.Model) > 128 {
			return nil, apperr.Field("model", "1-128 characters")
		}
		if seen[p.Model] {
			return nil, apperr.Field("model", "duplicate "+p.Model)
		}
		seen[p.Model] = true
		out = append(out, p)
	}
	return out, nil
}

// Row renders a price as decimal strings; with ratio non-nil, multiplied by it.
func Row(p Price, ratio *decimal.Decimal) setting.PriceRow {
	m := func(d decimal.Decimal) string {
		if ratio != nil {
			d = d.Mul(*ratio)
		}
		return d.String()
	}
	row := setting.PriceRow{Model: p.Model, Input: m(p.Input), Output: m(p.Output), CacheRead: m(p.CacheRead), CacheWrite: m(p.CacheWrite), PerCall: m(p.PerCall)}
	mediaRow(p, m, &row)
	return row
}

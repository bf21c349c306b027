package pricing

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/shopspring/decimal"

	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/setting"
)

// maxSizeKeys and maxTiers bound a row's per-size image prices and prompt tiers.
const (
	maxSizeKeys = 64
	maxTiers    = 16
)

// sizeKey is a per_image_by_size key: WIDTHxHEIGHT (or "auto"), optionally "/quality".
var sizeKey = regexp.MustCompile(`^([0-9]{1,5}x[0-9]{1,5}|auto)(/[a-z]{1,16})?$`)

// parseMedia reads a row's prices beyond tokens into p: the unit prices, per-size image prices and tiers
// (sorted by threshold, each threshold once).
func parseMedia(r setting.PriceRow, p *Price) error {
	var err error
	for _, f := range []struct {
		name string
		v    string
		dst  *decimal.Decimal
	}{{"per_image", r.PerImage, &p.PerImage}, {"per_audio_minute", r.PerAudioMinute, &p.PerAudioMinute},
		{"per_1m_chars", r.Per1MChars, &p.Per1MChars}, {"per_1k_searches", r.Per1KSearches, &p.Per1KSearches}} {
		if *f.dst, err = parseDec(f.name, f.v); err != nil {
			return err
		}
	}
	if len(r.PerImageBySize) > maxSizeKeys {
		return apperr.Field("per_image_by_size", fmt.Sprintf("at most %d sizes", maxSizeKeys))
	}
	if len(r.PerImageBySize) > 0 {
		p.PerImageBySize.V = make(map[string]decimal.Decimal, len(r.PerImageBySize))
		for k, v := range r.PerImageBySize {
			if !sizeKey.MatchString(k) {
				return apperr.Field("per_image_by_size", "keys are WIDTHxHEIGHT or WIDTHxHEIGHT/quality, e.g. 1024x1024/hd")
			}
			if p.PerImageBySize.V[k], err = parseDec("per_image_by_size."+k, v); err != nil {
				return err
			}
		}
	}
	if len(r.Tiers) > maxTiers {
		return apperr.Field("tiers", fmt.Sprintf("at most %d tiers", maxTiers))
	}
	for i, t := range r.Tiers {
		field := fmt.Sprintf("tiers[%d]", i)
		if t.AbovePromptTokens < 1 || t.AbovePromptTokens > 100_000_000 {
			return apperr.Field(field+".above_prompt_tokens", "a prompt length from 1 to 100000000 tokens")
		}
		tier := PriceTier{AbovePromptTokens: t.AbovePromptTokens}
		if tier.Input, err = parseDec(field+".input", t.Input); err != nil {
			return err
		}
		if tier.Output, err = parseDec(field+".output", t.Output); err != nil {
			return err
		}
		p.Tiers.V = append(p.Tiers.V, tier)
	}
	slices.SortFunc(p.Tiers.V, func(a, b PriceTier) int { return int(a.AbovePromptTokens - b.AbovePromptTokens) })
	for i := 1; i < len(p.Tiers.V); i++ {
		if p.Tiers.V[i].AbovePromptTokens == p.Tiers.V[i-1].AbovePromptTokens {
			return apperr.Field("tiers", "each above_prompt_tokens once")
		}
	}
	return nil
}

// mediaRow renders the prices beyond tokens into row, through m (which may apply a ratio). Zero unit prices
// stay empty, so rows of token-only models look as before.
func mediaRow(p Price, m func(decimal.Decimal) string, row *setting.PriceRow) {
	opt := func(d decimal.Decimal) string {
		if d.IsZero() {
			return ""
		}
		return m(d)
	}
	row.PerImage, row.PerAudioMinute = opt(p.PerImage), opt(p.PerAudioMinute)
	row.Per1MChars, row.Per1KSearches = opt(p.Per1MChars), opt(p.Per1KSearches)
	if len(p.PerImageBySize.V) > 0 {
		row.PerImageBySize = make(map[string]string, len(p.PerImageBySize.V))
		for k, v := range p.PerImageBySize.V {
			row.PerImageBySize[k] = m(v)
		}
	}
	for _, t := range p.Tiers.V {
		row.Tiers = append(row.Tiers, setting.PriceTierRow{AbovePromptTokens: t.AbovePromptTokens, Input: m(t.Input), Output: m(t.Output)})
	}
}

// PriceTier is a prompt-length tier of a price.
type PriceTier = model.PriceTier

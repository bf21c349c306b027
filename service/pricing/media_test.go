package pricing

import (
	"errors"
	"testing"

	"github.com/shopspring/decimal"

	"tollgate/service/apperr"
	"tollgate/service/setting"
)

func TestCost_BeyondTokens(t *testing.T) {
	img := Price{PerImage: d("0.04")}
	img.PerImageBySize.V = map[string]decimal.Decimal{"1024x1792": d("0.08"), "1024x1792/hd": d("0.12")}
	tiered := Price{Input: d("1.25"), Output: d("10")}
	tiered.Tiers.V = []PriceTier{{AbovePromptTokens: 200_000, Input: d("2.5"), Output: d("15")}}
	cases := []struct {
		name  string
		p     Price
		ratio string
		u     Usage
		want  int64
	}{
		{"two images at 0.04", img, "1", Usage{Images: 2, ImageSize: "1024x1024"}, 80_000},
		{"size price", img, "1", Usage{Images: 1, ImageSize: "1024x1792"}, 80_000},
		{"size and quality price", img, "1", Usage{Images: 1, ImageSize: "1024x1792", ImageQuality: "hd"}, 120_000},
		{"unknown quality falls back to the size", img, "1", Usage{Images: 1, ImageSize: "1024x1792", ImageQuality: "low"}, 80_000},
		{"3.0 s of audio at 0.006 per minute", Price{PerAudioMinute: d("0.006")}, "1", Usage{AudioMs: 3000}, 300},
		{"audio rounds once", Price{PerAudioMinute: d("0.006")}, "1", Usage{AudioMs: 1}, 0},
		{"1,000 characters at 15 per 1M", Price{Per1MChars: d("15")}, "1", Usage{Chars: 1000}, 15_000},
		{"one search at 2 per 1,000", Price{Per1KSearches: d("2")}, "1", Usage{Searches: 1}, 2_000},
		{"searches and tokens add", Price{Per1KSearches: d("2"), Input: d("0.05")}, "1", Usage{Searches: 1, Input: 1000}, 2_050},
		{"group ratio applies", Price{Per1MChars: d("15")}, "1.5", Usage{Chars: 1000}, 22_500},
		{"per call replaces media prices", Price{PerImage: d("0.04"), PerCall: d("0.01")}, "1", Usage{Images: 3}, 10_000},
		{"prompt at the tier threshold: base price", tiered, "1", Usage{Input: 200_000, Output: 1000}, 250_000 + 10_000},
		{"prompt above the tier: tier price", tiered, "1", Usage{Input: 200_001, Output: 1000}, 500_003 + 15_000},
		{"cached tokens count toward the tier", tiered, "1", Usage{Input: 1, CacheRead: 200_000, Output: 1000}, 3 + 15_000},
		{"huge audio saturates", Price{PerAudioMinute: d("1000")}, "1", Usage{AudioMs: 1 << 62}, MaxCost},
	}
	for _, tc := range cases {
		if got := Cost(tc.p, d(tc.ratio), tc.u); got != tc.want {
			t.Errorf("%s: got %d want %d", tc.name, got, tc.want)
		}
	}
}

func TestBreakdown_ShowsQuantitiesAndUnitPrices(t *testing.T) {
	p := Price{Input: d("1"), Output: d("2"), PerImage: d("0.04"), PerAudioMinute: d("0.006")}
	p.Tiers.V = []PriceTier{{AbovePromptTokens: 10, Input: d("3"), Output: d("4")}}
	b := Breakdown(p, Usage{Input: 11, Images: 2, ImageSize: "1024x1024", ImageQuality: "hd", AudioMs: 3000})
	if b.Input != "3" || b.Output != "4" || b.TierAbove != 10 || b.Images != 2 || b.PerImage != "0.04" ||
		b.ImageSize != "1024x1024/hd" || b.AudioSeconds != "3" || b.PerAudioMinute != "0.006" || b.Chars != 0 || b.Per1MChars != "" {
		t.Fatalf("breakdown = %+v", b)
	}
}

func TestParseRow_MediaFieldsValidatedAndRoundTrip(t *testing.T) {
	row := setting.PriceRow{Model: "m", PerImage: "0.04", PerImageBySize: map[string]string{"1024x1024/hd": "0.08"},
		PerAudioMinute: "0.006", Per1MChars: "15", Per1KSearches: "2",
		Tiers: []setting.PriceTierRow{{AbovePromptTokens: 200000, Input: "2.5", Output: "15"}, {AbovePromptTokens: 100, Input: "2", Output: "3"}}}
	p, err := parseRow(row)
	if err != nil {
		t.Fatal(err)
	}
	if p.Tiers.V[0].AbovePromptTokens != 100 || !p.PerImageBySize.V["1024x1024/hd"].Equal(d("0.08")) {
		t.Fatalf("parsed = %+v", p)
	}
	back := Row(p, nil)
	if back.PerImage != "0.04" || back.Per1KSearches != "2" || back.PerImageBySize["1024x1024/hd"] != "0.08" || len(back.Tiers) != 2 {
		t.Fatalf("row = %+v", back)
	}
	if r := Row(Price{Model: "chat", Input: d("1")}, nil); r.PerImage != "" || r.Tiers != nil || r.PerImageBySize != nil {
		t.Fatalf("a token-only row shows no media fields: %+v", r)
	}
	bad := []struct {
		field string
		row   setting.PriceRow
	}{
		{"per_image", setting.PriceRow{Model: "m", PerImage: "-1"}},
		{"per_image_by_size", setting.PriceRow{Model: "m", PerImageBySize: map[string]string{"big": "1"}}},
		{"per_image_by_size.1024x1024", setting.PriceRow{Model: "m", PerImageBySize: map[string]string{"1024x1024": "x"}}},
		{"tiers[0].above_prompt_tokens", setting.PriceRow{Model: "m", Tiers: []setting.PriceTierRow{{AbovePromptTokens: 0}}}},
		{"tiers", setting.PriceRow{Model: "m", Tiers: []setting.PriceTierRow{{AbovePromptTokens: 5}, {AbovePromptTokens: 5}}}},
		{"per_1k_searches", setting.PriceRow{Model: "m", Per1KSearches: "2000000"}},
	}
	for _, tc := range bad {
		_, err := parseRow(tc.row)
		var fe *apperr.Error
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s: err = %v", tc.field, err)
		}
	}
}

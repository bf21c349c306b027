package controller

import (
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/shopspring/decimal"

	"tollgate/middleware"
	"tollgate/service/apperr"
	"tollgate/service/pricing"
	"tollgate/service/setting"
)

// ImportPricing handles POST /api/admin/pricing/import?mode=merge|replace&dry_run=1: a catalogue in our format
// or new-api's ratio format (pricing.ParseCatalog). merge (the default) replaces the imported models' prices and
// keeps the rest; replace makes the catalogue the whole table. dry_run answers what would be saved.
func (h *Billing) ImportPricing(c *gin.Context) {
	mode := c.DefaultQuery("mode", "merge")
	if mode != "merge" && mode != "replace" {
		middleware.Fail(c, apperr.Field("mode", `"merge" or "replace"`))
		return
	}
	body, err := io.ReadAll(c.Request.Body)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	imported, format, err := pricing.ParseCatalog(body)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	rows := imported
	if mode == "merge" {
		rows = pricing.Merge(h.Pricing.All(), imported)
	}
	if err := pricing.Validate(rows); err != nil {
		middleware.Fail(c, err)
		return
	}
	before := map[string]setting.PriceRow{}
	for _, p := range h.Pricing.All() {
		before[p.Model] = pricing.Row(p, nil)
	}
	added, changed := 0, 0
	for _, r := range imported {
		old, ok := before[r.Model]
		switch {
		case !ok:
			added++
		case !samePrice(old, r):
			changed++
		}
	}
	out := gin.H{"format": format, "mode": mode, "imported": len(imported), "added": added, "changed": changed,
		"rows": len(rows), "dry_run": c.Query("dry_run") != ""}
	if c.Query("dry_run") != "" {
		out["prices"] = rows
		c.JSON(http.StatusOK, out)
		return
	}
	if _, err := h.Pricing.Replace(c.Request.Context(), middleware.Actor(c), rows); err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// samePrice compares two rows by value ("0.50" equals "0.5").
func samePrice(a, b setting.PriceRow) bool {
	eq := func(x, y string) bool {
		dx, ex := decimal.NewFromString(orZero(x))
		dy, ey := decimal.NewFromString(orZero(y))
		return ex == nil && ey == nil && dx.Equal(dy)
	}
	same := eq(a.Input, b.Input) && eq(a.Output, b.Output) && eq(a.CacheRead, b.CacheRead) &&
		eq(a.CacheWrite, b.CacheWrite) && eq(a.PerCall, b.PerCall) && eq(a.PerImage, b.PerImage) &&
		eq(a.PerAudioMinute, b.PerAudioMinute) && eq(a.Per1MChars, b.Per1MChars) && eq(a.Per1KSearches, b.Per1KSearches) &&
		len(a.PerImageBySize) == len(b.PerImageBySize) && len(a.Tiers) == len(b.Tiers)
	for k, v := range a.PerImageBySize {
		same = same && eq(v, b.PerImageBySize[k])
	}
	for i, t := range a.Tiers {
		same = same && t.AbovePromptTokens == b.Tiers[i].AbovePromptTokens && eq(t.Input, b.Tiers[i].Input) && eq(t.Output, b.Tiers[i].Output)
	}
	return same
}

func orZero(s string) string {
	if strings.TrimSpace(s) == "" {
		return "0"
	}
	return strings.TrimSpace(s)
}

// ExportPricing handles GET /api/admin/pricing/export: the table in our format, as a file.
func (h *Billing) ExportPricing(c *gin.Context) {
	ps := h.Pricing.All()
	out := make([]setting.PriceRow, len(ps))
	for i, p := range ps {
		out[i] = pricing.Row(p, nil)
	}
	c.Header("Content-Disposition", `attachment; filename="tollgate-prices.json"`)
	c.JSON(http.StatusOK, out)
}

package controller

import (
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/shopspring/decimal"

	"tollgate/middleware"
	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/group"
	"tollgate/service/pricing"
	"tollgate/service/setting"
	"tollgate/service/usagelog"
)

// Billing serves prices and usage logs.
type Billing struct {
	Pricing  *pricing.Service
	Groups   *group.Service
	Reader   *usagelog.Reader
	Settings *setting.Service // show_channel_to_users
	Tiers    TierRatios       // the caller's tier ratio on the public price list (nil: 1)
}

// TierRatios gives a tier's price ratio (implemented by service/tier).
type TierRatios interface {
	Ratio(name string) decimal.Decimal
}

// AdminPricing handles GET /api/admin/pricing.
func (h *Billing) AdminPricing(c *gin.Context) {
	ps := h.Pricing.All()
	out := make([]setting.PriceRow, len(ps))
	for i, p := range ps {
		out[i] = pricing.Row(p, nil)
	}
	c.JSON(http.StatusOK, out)
}

// ReplacePricing handles PUT /api/admin/pricing.
func (h *Billing) ReplacePricing(c *gin.Context) {
	var rows []setting.PriceRow
	if !middleware.Bind(c, &rows) {
		return
	}
	ps, err := h.Pricing.Replace(c.Request.Context(), middleware.Actor(c), rows)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	out := make([]setting.PriceRow, len(ps))
	for i, p := range ps {
		out[i] = pricing.Row(p, nil)
	}
	c.JSON(http.StatusOK, out)
}

// PublicPricing handles GET /api/pricing?group=&q=: what the caller pays per model — the price × the group's
// ratio × the caller's tier ratio — in a group they may use (their own when none is named; "default" when
// anonymous), for the models whose name contains q (any letter case).
func (h *Billing) PublicPricing(c *gin.Context) {
	g, tier := "default", ""
	u := middleware.User(c)
	if u != nil {
		g, tier = u.Group, u.Tier
	}
	if want := c.Query("group"); want != "" && want != g {
		if u == nil || !h.Groups.MayUse(u, want) {
			middleware.Fail(c, apperr.New(http.StatusForbidden, "group_not_allowed", want))
			return
		}
		g = want
	}
	ratio := h.Groups.Ratio(g)
	tierRatio := decimal.NewFromInt(1)
	if h.Tiers != nil {
		tierRatio = h.Tiers.Ratio(tier)
	}
	total := pricing.MulRatio(ratio, tierRatio)
	q := strings.ToLower(strings.TrimSpace(c.Query("q")))
	out := []gin.H{}
	for _, p := range h.Pricing.All() {
		if q != "" && !strings.Contains(strings.ToLower(p.Model), q) {
			continue
		}
		r := pricing.Row(p, &total)
		row := gin.H{"model": r.Model, "input": r.Input, "output": r.Output, "cache_read": r.CacheRead,
			"cache_write": r.CacheWrite, "per_call": r.PerCall, "group": g, "group_ratio": ratio.String(),
			"tier": tier, "tier_ratio": tierRatio.String(), "ratio": total.String()}
		// Units beyond tokens, only where the model has them (images, audio minutes, characters, searches, tiers).
		for k, v := range map[string]string{"per_image": r.PerImage, "per_audio_minute": r.PerAudioMinute,
			"per_1m_chars": r.Per1MChars, "per_1k_searches": r.Per1KSearches} {
			if v != "" {
				row[k] = v
			}
		}
		if len(r.PerImageBySize) > 0 {
			row["per_image_by_size"] = r.PerImageBySize
		}
		if len(r.Tiers) > 0 {
			row["tiers"] = r.Tiers
		}
		out = append(out, row)
	}
	c.JSON(http.StatusOK, out)
}

func parseTime(c *gin.Context, name string) (time.Time, bool) {
	v := c.Query(name)
	if v == "" {
		return time.Time{}, true
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		middleware.Fail(c, apperr.Field(name, "an RFC 3339 time"))
		return t, false
	}
	return t, true
}

// logFilter reads the shared log filters; admins may also filter by user and channel.
func logFilter(c *gin.Context, admin bool) (model.LogFilter, bool) {
	var f model.LogFilter
	var ok bool
	if f.From, ok = parseTime(c, "from"); !ok {
		return f, false
	}
	if f.To, ok = parseTime(c, "to"); !ok {
		return f, false
	}
	if f.TokenID, ok = queryInt64(c, "token_id"); !ok {
		return f, false
	}
	f.Model = c.Query("model")
	f.Status = c.Query("status")
	f.RequestID = c.Query("request_id")
	f.ClientRequestID = c.Query("client_request_id")
	for _, q := range [...]struct{ name, v string }{{"request_id", f.RequestID}, {"client_request_id", f.ClientRequestID}} {
		if len(q.v) > 64 {
			middleware.Fail(c, apperr.Field(q.name, "at most 64 characters"))
			return f, false
		}
	}
	if f.Kind, ok = model.ParseLogKind(c.Query("type")); !ok {
		middleware.Fail(c, apperr.Field("type", `"usage", "test" or "all"`))
		return f, false
	}
	if f.Status != "" && f.Status != "success" && f.Status != "error" {
		middleware.Fail(c, apperr.Field("status", `"success" or "error"`))
		return f, false
	}
	if admin {
		if f.UserID, ok = queryInt64(c, "user_id"); !ok {
			return f, false
		}
		if f.ChannelID, ok = queryInt64(c, "channel_id"); !ok {
			return f, false
		}
	} else {
		f.UserID = middleware.User(c).ID
	}
	return f, true
}

func (h *Billing) list(c *gin.Context, admin bool) {
	f, ok := logFilter(c, admin)
	if !ok {
		return
	}
	cursor, limit, ok := keysetPage(c)
	if !ok {
		return
	}
	items, next, err := h.Reader.List(c.Request.Context(), f, cursor, limit)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	if admin {
		c.JSON(http.StatusOK, gin.H{"items": items, "next_cursor": next})
		return
	}
	show := h.Settings.Get().ShowChannelToUsers
	lang := middleware.Lang(c)
	out := make([]userLog, len(items))
	for i := range items {
		out[i] = toUserLog(&items[i], lang, show)
	}
	c.JSON(http.StatusOK, gin.H{"items": out, "next_cursor": next})
}

func (h *Billing) stats(c *gin.Context, admin bool) {
	f, ok := logFilter(c, admin)
	if !ok {
		return
	}
	s, err := h.Reader.Stats(c.Request.Context(), f)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, s)
}

// Logs handles GET /api/logs (own logs).
func (h *Billing) Logs(c *gin.Context) { h.list(c, false) }

// AdminLogs handles GET /api/admin/logs.
func (h *Billing) AdminLogs(c *gin.Context) { h.list(c, true) }

// Stats handles GET /api/logs/stats.
func (h *Billing) Stats(c *gin.Context) { h.stats(c, false) }

// AdminStats handles GET /api/admin/logs/stats.
func (h *Billing) AdminStats(c *gin.Context) { h.stats(c, true) }

package controller

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"tollgate/model"
	"tollgate/service/cache"
	"tollgate/service/oauth"
	"tollgate/service/setting"
)

// Status serves liveness, readiness and the public site status.
type Status struct {
	Version  string
	Store    *model.Store
	Cache    cache.Cache
	Settings *setting.Service
	// OAuth lists the enabled sign-in providers (nil: none).
	OAuth *oauth.Service
	// Base gives public_base_url: what the connect card builds snippets on.
	Base *PublicBase
}

// Healthz handles GET /healthz: the process is alive.
func (h *Status) Healthz(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) }

// Readyz handles GET /readyz: the database and the cache answer.
func (h *Status) Readyz(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
	defer cancel()
	out, code := gin.H{"status": "ok", "store": "ok", "cache": "ok"}, http.StatusOK
	if err := h.Store.Ping(ctx); err != nil {
		out["store"], out["status"], code = err.Error(), "unavailable", http.StatusServiceUnavailable
	}
	if err := h.Cache.Ping(ctx); err != nil {
		out["cache"], out["status"], code = err.Error(), "unavailable", http.StatusServiceUnavailable
	}
	c.JSON(code, out)
}

// Site handles GET /api/status.
func (h *Status) Site(c *gin.Context) {
	s := h.Settings.Get()
	out := gin.H{"version": h.Version, "registration_open": s.RegistrationOpen, "store": h.Store.Kind,
		"cache": h.Cache.Kind(), "site_name": s.SiteName, "notice": s.Notice,
		"display_currency": s.DisplayCurrency, "display_rate": s.DisplayRate}
	out["public_base_url"] = h.Base.Of(c)
	out["oauth_providers"] = []oauth.Info{}
	if h.OAuth != nil {
		out["oauth_providers"] = h.OAuth.Enabled()
	}
	for k, v := range signinStatus(s) {
		out[k] = v
	}
	c.JSON(http.StatusOK, out)
}

package controller

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"tollgate/middleware"
	"tollgate/service/stats"
)

// Stats serves the admin's business reports (GET /api/admin/stats/...).
type Stats struct {
	Stats *stats.Service
}

// statsWindow reads from and to (RFC 3339, both optional); the service checks their order and span.
func statsWindow(c *gin.Context) (from, to time.Time, ok bool) {
	if from, ok = parseTime(c, "from"); !ok {
		return
	}
	to, ok = parseTime(c, "to")
	return
}

func renderReport[T any](c *gin.Context, rep *stats.Report[T], err error) {
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, rep)
}

// Channels handles GET /api/admin/stats/channels.
func (h *Stats) Channels(c *gin.Context) {
	if from, to, ok := statsWindow(c); ok {
		rep, err := h.Stats.Channels(c.Request.Context(), from, to)
		renderReport(c, rep, err)
	}
}

// Models handles GET /api/admin/stats/models.
func (h *Stats) Models(c *gin.Context) {
	if from, to, ok := statsWindow(c); ok {
		rep, err := h.Stats.Models(c.Request.Context(), from, to)
		renderReport(c, rep, err)
	}
}

// Days handles GET /api/admin/stats/days.
func (h *Stats) Days(c *gin.Context) {
	if from, to, ok := statsWindow(c); ok {
		rep, err := h.Stats.Days(c.Request.Context(), from, to)
		renderReport(c, rep, err)
	}
}

// Users handles GET /api/admin/stats/users (top users by revenue; limit 1-100, default 20).
func (h *Stats) Users(c *gin.Context) {
	from, to, ok := statsWindow(c)
	if !ok {
		return
	}
	limit, ok := queryInt64(c, "limit")
	if !ok {
		return
	}
	if c.Query("limit") == "" {
		limit = 20
	}
	rep, err := h.Stats.Users(c.Request.Context(), from, to, int(max(min(limit, 1<<20), -1)))
	renderReport(c, rep, err)
}

// Overview handles GET /api/admin/stats/overview: active users and keys, failed attempts by class.
func (h *Stats) Overview(c *gin.Context) {
	if from, to, ok := statsWindow(c); ok {
		out, err := h.Stats.Overview(c.Request.Context(), from, to)
		if err != nil {
			middleware.Fail(c, err)
			return
		}
		c.JSON(http.StatusOK, out)
	}
}

package controller

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"tollgate/middleware"
	"tollgate/service/apperr"
	"tollgate/service/fleet"
)

// FleetReader reads the fleet-wide metrics (implemented by service/fleet).
type FleetReader interface {
	Window(ctx context.Context, d time.Duration) ([]fleet.Stats, error)
}

// fleetWindows are the windows the health view shows, by name.
var fleetWindows = []struct {
	name string
	d    time.Duration
}{{"5m", 5 * time.Minute}, {"1h", time.Hour}, {"24h", 24 * time.Hour}}

// fleetOf is one channel's fleet numbers per window (nil when the reader is missing or fails: the live
// per-node view still answers).
func fleetOf(ctx context.Context, r FleetReader, channelID int64) gin.H {
	if r == nil {
		return nil
	}
	out := gin.H{}
	for _, w := range fleetWindows {
		ss, err := r.Window(ctx, w.d)
		if err != nil {
			return nil
		}
		out[w.name] = fleet.ByChannel(ss)[channelID]
	}
	return out
}

// FleetWindow handles GET /api/admin/fleet?window=5m|1h|24h|7d: every node's traffic per channel × model.
func (h *Channels) FleetWindow(c *gin.Context) {
	d, err := time.ParseDuration(c.DefaultQuery("window", "1h"))
	if w := c.Query("window"); w == "7d" {
		d, err = 7*24*time.Hour, nil
	} else if w == "24h" || w == "1d" {
		d, err = 24*time.Hour, nil
	}
	if err != nil || d < time.Minute || d > 31*24*time.Hour {
		middleware.Fail(c, apperr.Field("window", "a duration from 1m to 31 days (5m, 1h, 24h, 7d)"))
		return
	}
	if h.Fleet == nil {
		c.JSON(http.StatusOK, gin.H{"items": []fleet.Stats{}})
		return
	}
	ss, err := h.Fleet.Window(c.Request.Context(), d)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"window": d.String(), "items": ss})
}

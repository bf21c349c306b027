package controller

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/gin-gonic/gin"

	"tollgate/middleware"
	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/channel"
	"tollgate/service/fleet"
)

// ModelLister asks an upstream which models it serves (implemented by the relay's adaptors).
type ModelLister interface {
	ListModels(ctx context.Context, ch *channel.Channel) ([]string, error)
}

// Channels serves the admin channel API.
type Channels struct {
	Channels *channel.Service
	Lister   ModelLister
	Tester   ChannelTester
	HealthOf HealthReader
	Fleet    FleetReader // fleet-wide numbers in the list and the health view (nil: none)
	// StepUp asks an admin with 2FA for a fresh code before channel keys change (nil: never).
	StepUp middleware.StepUpper
	// LastTests gives each row its latest test outcome (zero value: none shown).
	LastTests channel.LastTests
}

// Create handles POST /api/admin/channels.
func (h *Channels) Create(c *gin.Context) {
	var in channel.Input
	if !middleware.Bind(c, &in) {
		return
	}
	if h.StepUp != nil && !middleware.RequireStepUp(c, h.StepUp) { // a new channel brings keys
		return
	}
	v, err := h.Channels.Create(c.Request.Context(), middleware.Actor(c), in)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, v)
}

// List handles GET /api/admin/channels.
func (h *Channels) List(c *gin.Context) {
	f := channel.Filter{ChannelFilter: model.ChannelFilter{Query: c.Query("q"), Type: c.Query("type"), Status: c.Query("status"), Tag: c.Query("tag")},
		Group: c.Query("group"), Model: c.Query("model")}
	items, total, err := h.Channels.List(c.Request.Context(), f, pageOf(c))
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	if items == nil {
		items = []*channel.View{}
	}
	snap := h.Channels.Snapshot()
	var hour map[int64]fleet.Stats
	if h.Fleet != nil {
		if ss, err := h.Fleet.Window(c.Request.Context(), time.Hour); err == nil {
			hour = fleet.ByChannel(ss)
		}
	}
	for _, v := range items {
		if ch, ok := snap.ByID[v.ID]; ok && h.HealthOf != nil {
			s := summarize(ch, h.HealthOf.Snapshot(ch.ID, len(ch.Keys)))
			if f, ok := hour[ch.ID]; ok {
				s.Fleet = &f
			}
			if lt, err := h.LastTests.Get(c.Request.Context(), ch.ID); err == nil {
				s.LastTest = lt
			}
			v.Health = s
		}
	}
	c.JSON(http.StatusOK, Page[*channel.View]{Items: items, Total: total})
}

// Get handles GET /api/admin/channels/:id.
func (h *Channels) Get(c *gin.Context) {
	id, ok := idParam(c, "channel_not_found")
	if !ok {
		return
	}
	v, err := h.Channels.Get(c.Request.Context(), id)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

// Update handles PATCH /api/admin/channels/:id.
func (h *Channels) Update(c *gin.Context) {
	id, ok := idParam(c, "channel_not_found")
	if !ok {
		return
	}
	var in channel.Input
	if !middleware.Bind(c, &in) {
		return
	}
	if in.Keys != nil && h.StepUp != nil {
		// Changing the upstream keys (not resending the masked list unchanged) needs a fresh 2FA code.
		if cur, err := h.Channels.Get(c.Request.Context(), id); err == nil && !slices.Equal(cur.Keys, *in.Keys) &&
			!middleware.RequireStepUp(c, h.StepUp) {
			return
		}
	}
	v, err := h.Channels.Update(c.Request.Context(), middleware.Actor(c), id, in)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

// Delete handles DELETE /api/admin/channels/:id.
func (h *Channels) Delete(c *gin.Context) {
	id, ok := idParam(c, "channel_not_found")
	if !ok {
		return
	}
	if err := h.Channels.Delete(c.Request.Context(), middleware.Actor(c), id); err != nil {
		middleware.Fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// FetchModels handles POST /api/admin/channels/:id/fetch-models.
func (h *Channels) FetchModels(c *gin.Context) {
	id, ok := idParam(c, "channel_not_found")
	if !ok {
		return
	}
	ch, found := h.Channels.Snapshot().ByID[id]
	if !found {
		middleware.Fail(c, apperr.New(http.StatusNotFound, "channel_not_found"))
		return
	}
	ms, err := h.Lister.ListModels(c.Request.Context(), ch)
	var ae *apperr.Error
	if errors.As(err, &ae) {
		middleware.Fail(c, ae)
		return
	}
	if err != nil {
		middleware.Fail(c, apperr.New(http.StatusBadGateway, "upstream_error", err.Error()))
		return
	}
	c.JSON(http.StatusOK, gin.H{"models": ms})
}

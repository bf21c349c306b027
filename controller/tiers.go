package controller

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"tollgate/middleware"
	"tollgate/service/tier"
)

// Tiers serves price tier administration.
type Tiers struct {
	Tiers *tier.Service
}

// List handles GET /api/admin/tiers.
func (h *Tiers) List(c *gin.Context) {
	ts, err := h.Tiers.List(c.Request.Context())
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, ts)
}

// Create handles POST /api/admin/tiers.
func (h *Tiers) Create(c *gin.Context) {
	var in tier.Input
	if !middleware.Bind(c, &in) {
		return
	}
	t, err := h.Tiers.Create(c.Request.Context(), middleware.Actor(c), in)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, t)
}

// Update handles PATCH /api/admin/tiers/:name.
func (h *Tiers) Update(c *gin.Context) {
	var in tier.Input
	if !middleware.Bind(c, &in) {
		return
	}
	t, err := h.Tiers.Update(c.Request.Context(), middleware.Actor(c), c.Param("name"), in)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, t)
}

// Delete handles DELETE /api/admin/tiers/:name.
func (h *Tiers) Delete(c *gin.Context) {
	if err := h.Tiers.Delete(c.Request.Context(), middleware.Actor(c), c.Param("name")); err != nil {
		middleware.Fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

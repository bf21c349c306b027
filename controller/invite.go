package controller

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"tollgate/middleware"
	"tollgate/service/invite"
)

// Invites serves the caller's invite page.
type Invites struct {
	Invites *invite.Service
}

// Mine handles GET /api/user/invites.
func (h *Invites) Mine(c *gin.Context) {
	s, err := h.Invites.Mine(c.Request.Context(), middleware.User(c).ID)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, s)
}

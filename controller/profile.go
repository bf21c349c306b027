package controller

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"tollgate/middleware"
	"tollgate/service/account"
)

// UpdateSelf handles PATCH /api/user/self: the caller's own balance_alert, language and e-mail.
func (h *Auth) UpdateSelf(c *gin.Context) {
	var in account.SelfInput
	if !middleware.Bind(c, &in) {
		return
	}
	// A new e-mail address is a sensitive change: with 2FA on it needs a fresh code (X-Tollgate-TOTP).
	if in.Email != nil && *in.Email != middleware.User(c).Email && !middleware.RequireStepUp(c, h.Accounts) {
		return
	}
	u, err := h.Accounts.UpdateSelf(c.Request.Context(), middleware.User(c).ID, in)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, u)
}

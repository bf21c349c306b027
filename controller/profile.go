package controller

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"tollgate/middleware"
	"tollgate/service/account"
)

// UpdateSelf handles PATCH /api/user/self: the caller's own balance_alert and language (a new e-mail goes through /api/user/email/send and /change).
func (h *Auth) UpdateSelf(c *gin.Context) {
	var in account.SelfInput
	if !middleware.Bind(c, &in) {
		return
	}
	u, err := h.Accounts.UpdateSelf(c.Request.Context(), middleware.User(c).ID, in)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, u)
}

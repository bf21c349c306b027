package controller

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"tollgate/i18n"
	"tollgate/middleware"
	"tollgate/service/account"
)

// secondFactorBody is the 401 totp_required answer to a right password: the console error plus the ticket
// that POST /api/auth/login/totp exchanges with a code.
type secondFactorBody struct {
	Error  middleware.ErrorDetail `json:"error"`
	Ticket string                 `json:"ticket"`
}

func secondFactorNeeded(c *gin.Context, ticket string) {
	c.AbortWithStatusJSON(http.StatusUnauthorized, secondFactorBody{Ticket: ticket, Error: middleware.ErrorDetail{
		Code: account.CodeTOTPRequired, Message: i18n.T(middleware.Lang(c), account.CodeTOTPRequired)}})
}

// LoginTOTP handles POST /api/auth/login/totp {ticket, totp}: the second step of a sign-in.
func (h *Auth) LoginTOTP(c *gin.Context) {
	var in struct {
		Ticket string `json:"ticket"`
		TOTP   string `json:"totp"`
	}
	if !middleware.Bind(c, &in) {
		return
	}
	s, err := h.Accounts.CompleteSecondFactor(c.Request.Context(), in.Ticket, in.TOTP, c.ClientIP())
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	h.session(c, s)
}

type codeInput struct {
	Code string `json:"code"`
}

// TwoFactor handles GET /api/user/2fa.
func (h *Auth) TwoFactor(c *gin.Context) {
	st, err := h.Accounts.TwoFactor(c.Request.Context(), middleware.User(c).ID)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, st)
}

// TwoFactorSetup handles POST /api/user/2fa/setup.
func (h *Auth) TwoFactorSetup(c *gin.Context) {
	st, err := h.Accounts.SetupTwoFactor(c.Request.Context(), middleware.User(c).ID)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, st)
}

// TwoFactorEnable handles POST /api/user/2fa/enable {code}.
func (h *Auth) TwoFactorEnable(c *gin.Context) {
	var in codeInput
	if !middleware.Bind(c, &in) {
		return
	}
	codes, err := h.Accounts.EnableTwoFactor(c.Request.Context(), middleware.User(c).ID, in.Code, c.ClientIP())
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"backup_codes": codes})
}

// TwoFactorDisable handles POST /api/user/2fa/disable {code}.
func (h *Auth) TwoFactorDisable(c *gin.Context) {
	var in codeInput
	if !middleware.Bind(c, &in) {
		return
	}
	if err := h.Accounts.DisableTwoFactor(c.Request.Context(), middleware.User(c).ID, in.Code, c.ClientIP()); err != nil {
		middleware.Fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// Sessions handles GET /api/user/sessions.
func (h *Auth) Sessions(c *gin.Context) {
	list, err := h.Accounts.Sessions(c.Request.Context(), middleware.User(c).ID, middleware.Bearer(c))
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"items": list})
}

// EndSession handles DELETE /api/user/sessions/:id.
func (h *Auth) EndSession(c *gin.Context) {
	id, ok := idParam(c, "session_not_found")
	if !ok {
		return
	}
	if err := h.Accounts.EndSession(c.Request.Context(), middleware.User(c).ID, id, c.ClientIP()); err != nil {
		middleware.Fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// EndOtherSessions handles DELETE /api/user/sessions: every session but the caller's.
func (h *Auth) EndOtherSessions(c *gin.Context) {
	n, err := h.Accounts.EndOtherSessions(c.Request.Context(), middleware.User(c).ID, middleware.Bearer(c), c.ClientIP())
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"ended": n})
}

// ResetTwoFactor handles DELETE /api/admin/users/:id/2fa.
func (h *Admin) ResetTwoFactor(c *gin.Context) {
	id, ok := idParam(c, "user_not_found")
	if !ok {
		return
	}
	if err := h.Accounts.ResetTwoFactor(c.Request.Context(), middleware.User(c), c.ClientIP(), id); err != nil {
		middleware.Fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// UserSessions handles GET /api/admin/users/:id/sessions.
func (h *Admin) UserSessions(c *gin.Context) {
	id, ok := idParam(c, "user_not_found")
	if !ok {
		return
	}
	list, err := h.Accounts.AdminSessions(c.Request.Context(), middleware.User(c), id)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"items": list})
}

// EndUserSessions handles DELETE /api/admin/users/:id/sessions.
func (h *Admin) EndUserSessions(c *gin.Context) {
	id, ok := idParam(c, "user_not_found")
	if !ok {
		return
	}
	n, err := h.Accounts.AdminEndSessions(c.Request.Context(), middleware.User(c), c.ClientIP(), id)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"ended": n})
}

package controller

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"tollgate/config"
	"tollgate/middleware"
	"tollgate/service/account"
	"tollgate/service/apperr"
	"tollgate/service/group"
)

// RefreshCookie is the httpOnly cookie that carries the refresh token.
const RefreshCookie = "tollgate_refresh"

// Auth serves sign-up, sign-in, session refresh and the caller's own profile.
type Auth struct {
	Accounts *account.Service
	Groups   *group.Service
	Secure   config.CookieSecure // when the refresh cookie gets the Secure flag (empty means auto)
}

// Register handles POST /api/auth/register.
func (h *Auth) Register(c *gin.Context) {
	var in account.RegisterInput
	if !middleware.Bind(c, &in) {
		return
	}
	u, err := h.Accounts.Register(c.Request.Context(), in, c.ClientIP())
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, gin.H{"user": u})
}

func (h *Auth) setCookie(c *gin.Context, value string, maxAge int) {
	c.SetSameSite(http.SameSiteStrictMode)
	secure := h.Secure == config.CookieSecureAlways || (h.Secure != config.CookieSecureNever && middleware.HTTPS(c))
	c.SetCookie(RefreshCookie, value, maxAge, "/api/auth", "", secure, true)
}

func (h *Auth) session(c *gin.Context, s *account.Session) {
	h.setCookie(c, s.RefreshToken, int(s.RefreshTTL.Seconds()))
	c.JSON(http.StatusOK, s)
}

// Login handles POST /api/auth/login.
func (h *Auth) Login(c *gin.Context) {
	var in struct {
		Username string `json:"username"`
		Password string `json:"password"`
		Captcha  string `json:"captcha"` // asked for after failures when a captcha is configured
		TOTP     string `json:"totp"`    // a TOTP or backup code, for a user with 2FA on
	}
	if !middleware.Bind(c, &in) {
		return
	}
	if err := h.Accounts.LoginCaptcha(c.Request.Context(), in.Username, in.Captcha, c.ClientIP()); err != nil {
		middleware.Fail(c, err)
		return
	}
	s, err := h.Accounts.Login(c.Request.Context(), in.Username, in.Password, in.TOTP, c.ClientIP())
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	if s.Ticket != "" {
		secondFactorNeeded(c, s.Ticket)
		return
	}
	h.session(c, s)
}

// Refresh handles POST /api/auth/refresh.
func (h *Auth) Refresh(c *gin.Context) {
	raw, _ := c.Cookie(RefreshCookie)
	s, err := h.Accounts.Refresh(c.Request.Context(), raw, c.ClientIP())
	if err != nil {
		// A token rotated a moment ago (another tab won the race) keeps the cookie: the jar holds its successor.
		if ae, ok := apperr.As(err); !ok || ae.Code != account.CodeRefreshRotated {
			h.setCookie(c, "", -1)
		}
		middleware.Fail(c, err)
		return
	}
	h.session(c, s)
}

// Logout handles POST /api/auth/logout: it ends the refresh cookie's session family and the access JWT sent
// as Authorization: Bearer (either may be absent).
func (h *Auth) Logout(c *gin.Context) {
	raw, _ := c.Cookie(RefreshCookie)
	if err := h.Accounts.Logout(c.Request.Context(), raw, middleware.Bearer(c)); err != nil {
		middleware.Fail(c, err)
		return
	}
	h.setCookie(c, "", -1)
	c.Status(http.StatusNoContent)
}

// Self handles GET /api/user/self.
func (h *Auth) Self(c *gin.Context) {
	u, err := h.Accounts.Get(c.Request.Context(), middleware.User(c).ID)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, u)
}

// Password handles POST /api/user/password.
func (h *Auth) Password(c *gin.Context) {
	var in struct {
		Old string `json:"old_password"`
		New string `json:"new_password"`
	}
	if !middleware.Bind(c, &in) {
		return
	}
	if err := h.Accounts.ChangePassword(c.Request.Context(), middleware.User(c).ID, in.Old, in.New, c.ClientIP()); err != nil {
		middleware.Fail(c, err)
		return
	}
	h.setCookie(c, "", -1)
	c.Status(http.StatusNoContent)
}

package middleware

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"tollgate/model"
	"tollgate/service/account"
	"tollgate/service/apperr"
)

// TOTPHeader carries a fresh two-factor code for a sensitive action (step-up).
const TOTPHeader = "X-Tollgate-TOTP"

// StepUpper asks a user with 2FA on for a fresh code (implemented by service/account).
type StepUpper interface {
	StepUp(ctx context.Context, u *model.User, code string) error
}

// StepUp guards a sensitive route (use after Console): a user with 2FA on must send a fresh code in
// X-Tollgate-TOTP, else 403 totp_required (or totp_invalid, or 429 totp_delayed).
func StepUp(s StepUpper) gin.HandlerFunc {
	return func(c *gin.Context) {
		if s == nil {
			c.Next()
			return
		}
		if err := s.StepUp(c.Request.Context(), User(c), c.GetHeader(TOTPHeader)); err != nil {
			Fail(c, err)
			return
		}
		c.Next()
	}
}

// RequireStepUp is StepUp for a handler that needs a code only for some inputs (an admin changing a channel's
// keys): it reports whether the handler may go on, having rendered the refusal when not.
func RequireStepUp(c *gin.Context, s StepUpper) bool {
	if s == nil {
		return true
	}
	if err := s.StepUp(c.Request.Context(), User(c), c.GetHeader(TOTPHeader)); err != nil {
		Fail(c, err)
		return false
	}
	return true
}

// AdminEnrolment refuses admin API calls from an admin or root without 2FA while required() is true (the
// require_2fa_admins setting): 403 2fa_enrolment_required. Use after Admin; what enrolment needs
// (/api/user/2fa/*, /api/user/self, logout) is outside the admin group.
func AdminEnrolment(required func() bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		if u := User(c); u != nil && u.IsAdmin() && !u.TOTPEnabled && required != nil && required() {
			Fail(c, apperr.New(http.StatusForbidden, "2fa_enrolment_required"))
			return
		}
		c.Next()
	}
}

// UserAgent puts the client's User-Agent into the request context, where a session opened by the request
// (sign-in, refresh, OAuth) records it for the session list.
func UserAgent() gin.HandlerFunc {
	return func(c *gin.Context) {
		c.Request = c.Request.WithContext(account.WithUserAgent(c.Request.Context(), c.Request.UserAgent()))
		c.Next()
	}
}

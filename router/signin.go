package router

import (
	"github.com/gin-gonic/gin"

	"tollgate/controller"
)

// signinRoutes are the e-mail flows of sign-in: anonymous ones under /api/auth, the e-mail change for a
// signed-in user, the SMTP test for admins.
// Applying a new e-mail address is a sensitive change: with 2FA on it needs a fresh code (X-Tollgate-TOTP).
func signinRoutes(auth, user, admin *gin.RouterGroup, h *controller.Signin, stepUp gin.HandlerFunc) {
	if h == nil {
		return
	}
	auth.POST("/email/send", h.SendEmail)
	auth.POST("/email/verify", h.VerifyEmail)
	auth.POST("/password/reset", h.ResetPassword)
	user.POST("/user/email/send", h.SendEmailChange)
	user.POST("/user/email/change", stepUp, h.ChangeEmail)
	admin.POST("/settings/smtp/test", h.SMTPTest)
}

package controller

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"tollgate/middleware"
	"tollgate/service/account"
	"tollgate/service/mail"
	"tollgate/service/setting"
)

// Signin serves the e-mail flows of sign-in and sign-up (verification codes, password reset, e-mail change)
// and the admin's SMTP test.
type Signin struct {
	Accounts *account.Service
	Outbox   *mail.Outbox
	// Base is the site's public base URL (PublicBase) reset links are built on.
	Base *PublicBase
}

// origin is where reset links point.
func (h *Signin) origin(c *gin.Context) string { return h.Base.Of(c) }

// SendEmail handles POST /api/auth/email/send {email, purpose, captcha}: 202 whether or not the address
// belongs to an account that needs the e-mail.
func (h *Signin) SendEmail(c *gin.Context) {
	var in account.EmailSendInput
	if !middleware.Bind(c, &in) {
		return
	}
	if err := h.Accounts.SendEmail(c.Request.Context(), in, c.ClientIP(), string(middleware.Lang(c)), h.origin(c)); err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusAccepted, gin.H{"accepted": true})
}

// VerifyEmail handles POST /api/auth/email/verify {email, code}.
func (h *Signin) VerifyEmail(c *gin.Context) {
	var in struct {
		Email string `json:"email"`
		Code  string `json:"code"`
	}
	if !middleware.Bind(c, &in) {
		return
	}
	u, err := h.Accounts.VerifyEmail(c.Request.Context(), in.Email, in.Code, c.ClientIP())
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"user": u})
}

// ResetPassword handles POST /api/auth/password/reset {token, new_password}.
func (h *Signin) ResetPassword(c *gin.Context) {
	var in struct {
		Token       string `json:"token"`
		NewPassword string `json:"new_password"`
	}
	if !middleware.Bind(c, &in) {
		return
	}
	if err := h.Accounts.ResetPassword(c.Request.Context(), in.Token, in.NewPassword, c.ClientIP()); err != nil {
		middleware.Fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// SendEmailChange handles POST /api/user/email/send {email}: a code to the new address.
func (h *Signin) SendEmailChange(c *gin.Context) {
	var in struct {
		Email string `json:"email"`
	}
	if !middleware.Bind(c, &in) {
		return
	}
	if err := h.Accounts.SendEmailChange(c.Request.Context(), middleware.User(c).ID, in.Email, c.ClientIP(), string(middleware.Lang(c))); err != nil {
		middleware.Fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// ChangeEmail handles POST /api/user/email/change {email, code}.
func (h *Signin) ChangeEmail(c *gin.Context) {
	var in struct {
		Email string `json:"email"`
		Code  string `json:"code"`
	}
	if !middleware.Bind(c, &in) {
		return
	}
	u, err := h.Accounts.ChangeEmail(c.Request.Context(), middleware.User(c).ID, in.Email, in.Code, c.ClientIP())
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, u)
}

// SMTPTest handles POST /api/admin/settings/smtp/test {to?}: a test e-mail to to, or to the admin's own
// address.
func (h *Signin) SMTPTest(c *gin.Context) {
	var in struct {
		To string `json:"to"`
	}
	if c.Request.ContentLength != 0 && !middleware.Bind(c, &in) {
		return
	}
	if in.To == "" {
		in.To = middleware.User(c).Email
	}
	if err := h.Outbox.Test(c.Request.Context(), in.To, string(middleware.Lang(c))); err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"to": in.To})
}

// signinStatus is what GET /api/status says about sign-in: whether sign-up verifies e-mail, whether reset
// works, and the captcha (provider and site key) with when it is asked for.
func signinStatus(s *setting.Settings) gin.H {
	out := gin.H{"email_verification": s.EmailVerification, "password_reset": s.PasswordReset && s.Alerts.SMTP.Enabled()}
	if s.Captcha.Enabled() {
		out["captcha"] = gin.H{"provider": s.Captcha.Provider, "site_key": s.Captcha.SiteKey,
			"signup": true, "password_reset": true, "login_after_failures": s.Captcha.LoginAfterFailures}
	} else {
		out["captcha"] = nil
	}
	return out
}

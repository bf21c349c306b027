package controller

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/gin-gonic/gin"

	"tollgate/config"
	"tollgate/middleware"
	"tollgate/service/apperr"
	"tollgate/service/oauth"
)

// OAuthBindingCookie ties a started OAuth flow to the browser that started it (SameSite=Lax: it must come
// back on the provider's cross-site redirect to the callback).
const OAuthBindingCookie = "tollgate_oauth"

// OAuth serves sign-in with external accounts and linking them from the profile.
type OAuth struct {
	OAuth *oauth.Service
	// Auth sets the same refresh cookie as a password sign-in.
	Auth *Auth
	// Base is the site's public base URL (PublicBase). Callback URLs registered at the providers must be
	// <base>/api/auth/oauth/<slug>/callback.
	Base   *PublicBase
	Secure config.CookieSecure
}

// base is the URL the provider's redirect URI is built on.
func (h *OAuth) base(c *gin.Context) string { return h.Base.Of(c) }

func (h *OAuth) redirectURI(c *gin.Context, slug string) string {
	return h.base(c) + "/api/auth/oauth/" + url.PathEscape(slug) + "/callback"
}

func (h *OAuth) setBinding(c *gin.Context, value string, maxAge int) {
	c.SetSameSite(http.SameSiteLaxMode)
	secure := h.Secure == config.CookieSecureAlways || (h.Secure != config.CookieSecureNever && middleware.HTTPS(c))
	c.SetCookie(OAuthBindingCookie, value, maxAge, "/api/auth/oauth", "", secure, true)
}

// Start handles GET /api/auth/oauth/:provider/start: a 302 to the provider (errors: 302 to /login?error=).
func (h *OAuth) Start(c *gin.Context) {
	slug := c.Param("provider")
	st, err := h.OAuth.Start(c.Request.Context(), oauth.StartInput{Provider: slug, Mode: oauth.ModeSignIn,
		RedirectURI: h.redirectURI(c, slug), AffCode: c.Query("aff")})
	if err != nil {
		h.back(c, oauth.ModeSignIn, err)
		return
	}
	h.setBinding(c, st.Binding, 600)
	c.Redirect(http.StatusFound, st.URL)
}

// LinkStart handles POST /api/user/oauth/:provider/link/start: {url} to send the signed-in user to; the
// callback then links the provider's account to them.
func (h *OAuth) LinkStart(c *gin.Context) {
	slug := c.Param("provider")
	st, err := h.OAuth.Start(c.Request.Context(), oauth.StartInput{Provider: slug, Mode: oauth.ModeLink,
		UserID: middleware.User(c).ID, RedirectURI: h.redirectURI(c, slug)})
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	h.setBinding(c, st.Binding, 600)
	c.JSON(http.StatusOK, gin.H{"url": st.URL})
}

// Callback handles GET /api/auth/oauth/:provider/callback: signs in (the refresh cookie, then a 302 to the
// console, which refreshes into a session) or links (a 302 to the profile); failures 302 to /login?error=<code>
// (or the profile's ?oauth_error=<code> for a link).
func (h *OAuth) Callback(c *gin.Context) {
	binding, _ := c.Cookie(OAuthBindingCookie)
	res, err := h.OAuth.Callback(c.Request.Context(), oauth.CallbackInput{Provider: c.Param("provider"),
		State: c.Query("state"), Code: c.Query("code"), Error: c.Query("error"), Binding: binding, IP: c.ClientIP()})
	h.setBinding(c, "", -1)
	if err != nil {
		var fe *oauth.FlowError
		mode := oauth.ModeSignIn
		if errors.As(err, &fe) {
			mode = fe.Mode
		}
		h.back(c, mode, err)
		return
	}
	if res.Mode == oauth.ModeLink {
		c.Redirect(http.StatusFound, "/console/profile?linked="+url.QueryEscape(res.Identity.Provider))
		return
	}
	if res.Session.Ticket != "" { // the user has 2FA on: the console's code step completes the sign-in
		c.Redirect(http.StatusFound, "/login?ticket="+url.QueryEscape(res.Session.Ticket))
		return
	}
	h.Auth.setCookie(c, res.Session.RefreshToken, int(res.Session.RefreshTTL.Seconds()))
	c.Redirect(http.StatusFound, "/console")
}

// back sends the browser to the login page (or the profile, for a link) with the error's code.
func (h *OAuth) back(c *gin.Context, mode string, err error) {
	code := oauth.CodeFailed
	var fe *oauth.FlowError
	if errors.As(err, &fe) {
		code = fe.Code
	} else if ae, ok := apperr.As(err); ok {
		code = ae.Code
	}
	if mode == oauth.ModeLink {
		c.Redirect(http.StatusFound, "/console/profile?oauth_error="+url.QueryEscape(code))
		return
	}
	c.Redirect(http.StatusFound, "/login?error="+url.QueryEscape(code))
}

// Identities handles GET /api/user/identities: the caller's linked accounts and whether they have a password.
func (h *OAuth) Identities(c *gin.Context) {
	ids, hasPassword, err := h.OAuth.Identities(c.Request.Context(), middleware.User(c).ID)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"identities": ids, "has_password": hasPassword})
}

// Unlink handles DELETE /api/user/identities/:id.
func (h *OAuth) Unlink(c *gin.Context) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		middleware.Fail(c, apperr.Field("id", "not an id"))
		return
	}
	if err := h.OAuth.Unlink(c.Request.Context(), middleware.User(c).ID, id, c.ClientIP()); err != nil {
		middleware.Fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

package controller

import (
	"github.com/gin-gonic/gin"

	"tollgate/middleware"
	"tollgate/service/setting"
)

// PublicBase is the site's public base URL, the one answer for reset links, OAuth redirect URIs, payment
// notify and return URLs, and the base URL users are told to point their SDKs at (public_base_url in GET
// /api/status). In order: PUBLIC_URL from the environment (an operator's override), the admin's
// public_base_url setting, else the scheme and Host of the request — which whoever sends the request chooses,
// so set one of the two wherever links leave the site.
type PublicBase struct {
	Env      string           // PUBLIC_URL ("" = not set)
	Settings *setting.Service // public_base_url (nil: not consulted)
}

// Of is the base URL for the request c, without a trailing slash.
func (b *PublicBase) Of(c *gin.Context) string {
	if b != nil && b.Env != "" {
		return b.Env
	}
	if b != nil && b.Settings != nil {
		if u := b.Settings.Get().PublicBaseURL; u != "" {
			return u
		}
	}
	scheme := "http"
	if middleware.HTTPS(c) {
		scheme = "https"
	}
	return scheme + "://" + c.Request.Host
}

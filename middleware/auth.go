package middleware

import (
	"context"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/audit"
)

const keyUser = "tg.user"

// Authenticator verifies a console JWT (implemented by service/account).
type Authenticator interface {
	Authenticate(ctx context.Context, token string) (*model.User, error)
}

// Bearer returns the token of an "Authorization: Bearer <token>" header, or "".
func Bearer(c *gin.Context) string {
	h := c.GetHeader("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// Console requires a valid console JWT and puts its user in the context.
func Console(a Authenticator) gin.HandlerFunc {
	return func(c *gin.Context) {
		tok := Bearer(c)
		if tok == "" {
			Fail(c, apperr.New(http.StatusUnauthorized, "unauthorized"))
			return
		}
		u, err := a.Authenticate(c.Request.Context(), tok)
		if err != nil {
			Fail(c, err)
			return
		}
		c.Set(keyUser, u)
		c.Next()
	}
}

// OptionalConsole sets the user when a valid JWT is present and goes on either way.
func OptionalConsole(a Authenticator) gin.HandlerFunc {
	return func(c *gin.Context) {
		if tok := Bearer(c); tok != "" {
			if u, err := a.Authenticate(c.Request.Context(), tok); err == nil {
				c.Set(keyUser, u)
			}
		}
		c.Next()
	}
}

// Admin refuses callers that are not admin or root (use after Console).
func Admin() gin.HandlerFunc {
	return func(c *gin.Context) {
		u := User(c)
		if u == nil || !u.IsAdmin() {
			Fail(c, apperr.ErrForbidden)
			return
		}
		c.Next()
	}
}

// User returns the signed-in console user, or nil.
func User(c *gin.Context) *model.User {
	if v, ok := c.Get(keyUser); ok {
		return v.(*model.User)
	}
	return nil
}

// Actor describes the signed-in user for the audit log.
func Actor(c *gin.Context) audit.Actor {
	u := User(c)
	if u == nil {
		return audit.Actor{IP: c.ClientIP()}
	}
	return audit.Actor{ID: u.ID, Name: u.Username, IP: c.ClientIP()}
}

// MetricsToken guards /metrics with a static bearer token (constant-time compare).
func MetricsToken(token string) gin.HandlerFunc {
	return func(c *gin.Context) {
		if subtle.ConstantTimeCompare([]byte(Bearer(c)), []byte(token)) != 1 {
			Fail(c, apperr.New(http.StatusUnauthorized, "unauthorized"))
			return
		}
		c.Next()
	}
}

package controller

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"tollgate/middleware"
	"tollgate/model"
	"tollgate/service/account"
	"tollgate/service/token"
)

// Tokens serves the caller's own sk- keys and the admin view of every key.
type Tokens struct {
	Tokens   *token.Service
	Accounts *account.Service
}

// Create handles POST /api/tokens.
func (h *Tokens) Create(c *gin.Context) {
	var in token.Input
	if !middleware.Bind(c, &in) {
		return
	}
	v, err := h.Tokens.Create(c.Request.Context(), middleware.User(c), in)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, v)
}

// List handles GET /api/tokens.
func (h *Tokens) List(c *gin.Context) {
	items, total, err := h.Tokens.List(c.Request.Context(), model.TokenFilter{UserID: middleware.User(c).ID, Query: c.Query("q")}, pageOf(c))
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, Page[*token.View]{Items: items, Total: total})
}

// Get handles GET /api/tokens/:id.
func (h *Tokens) Get(c *gin.Context) {
	id, ok := idParam(c, "token_not_found")
	if !ok {
		return
	}
	v, err := h.Tokens.Get(c.Request.Context(), id, middleware.User(c).ID)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

// Update handles PATCH /api/tokens/:id.
func (h *Tokens) Update(c *gin.Context) {
	id, ok := idParam(c, "token_not_found")
	if !ok {
		return
	}
	var in token.Input
	if !middleware.Bind(c, &in) {
		return
	}
	v, err := h.Tokens.Update(c.Request.Context(), middleware.User(c), id, in)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

// Delete handles DELETE /api/tokens/:id.
func (h *Tokens) Delete(c *gin.Context) {
	id, ok := idParam(c, "token_not_found")
	if !ok {
		return
	}
	if err := h.Tokens.Delete(c.Request.Context(), id, middleware.User(c).ID); err != nil {
		middleware.Fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// Reveal handles POST /api/tokens/:id/reveal.
func (h *Tokens) Reveal(c *gin.Context) {
	id, ok := idParam(c, "token_not_found")
	if !ok {
		return
	}
	key, err := h.Tokens.Reveal(c.Request.Context(), id, middleware.User(c).ID)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"key": key})
}

// AdminList handles GET /api/admin/tokens.
func (h *Tokens) AdminList(c *gin.Context) {
	uid, ok := queryInt64(c, "user_id")
	if !ok {
		return
	}
	items, total, err := h.Tokens.List(c.Request.Context(), model.TokenFilter{UserID: uid, Query: c.Query("q")}, pageOf(c))
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, Page[*token.View]{Items: items, Total: total})
}

// AdminUpdate handles PATCH /api/admin/tokens/:id (status only; audited; admin_disabled on disable).
func (h *Tokens) AdminUpdate(c *gin.Context) {
	id, ok := idParam(c, "token_not_found")
	if !ok {
		return
	}
	var in struct {
		Status string `json:"status"`
	}
	if !middleware.Bind(c, &in) {
		return
	}
	v, err := h.Tokens.SetStatus(c.Request.Context(), middleware.User(c), c.ClientIP(), id, in.Status)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

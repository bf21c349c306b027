package controller

import (
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

	"tollgate/middleware"
	"tollgate/model"
	"tollgate/service/account"
	"tollgate/service/audit"
	"tollgate/service/group"
	"tollgate/service/setting"
)

// Admin serves user, group, settings and audit administration.
type Admin struct {
	Accounts *account.Service
	Groups   *group.Service
	Settings *setting.Service
	Audit    *audit.Log
}

// Users handles GET /api/admin/users.
func (h *Admin) Users(c *gin.Context) {
	f := model.UserFilter{Query: c.Query("q"), Role: c.Query("role"), Status: c.Query("status")}
	items, total, err := h.Accounts.List(c.Request.Context(), f, pageOf(c))
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, Page[model.User]{Items: items, Total: total})
}

// User handles GET /api/admin/users/:id.
func (h *Admin) User(c *gin.Context) {
	id, ok := idParam(c, "user_not_found")
	if !ok {
		return
	}
	u, err := h.Accounts.Get(c.Request.Context(), id)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, u)
}

// UpdateUser handles PATCH /api/admin/users/:id.
func (h *Admin) UpdateUser(c *gin.Context) {
	id, ok := idParam(c, "user_not_found")
	if !ok {
		return
	}
	var in account.UpdateInput
	if !middleware.Bind(c, &in) {
		return
	}
	u, err := h.Accounts.Update(c.Request.Context(), middleware.User(c), c.ClientIP(), id, in)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, u)
}

// AdjustQuota handles POST /api/admin/users/:id/quota.
func (h *Admin) AdjustQuota(c *gin.Context) {
	id, ok := idParam(c, "user_not_found")
	if !ok {
		return
	}
	var in struct {
		Delta  int64  `json:"delta"`
		Reason string `json:"reason"`
	}
	if !middleware.Bind(c, &in) {
		return
	}
	u, err := h.Accounts.AdjustQuota(c.Request.Context(), middleware.User(c), c.ClientIP(), id, in.Delta, in.Reason)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, u)
}

// SettingsGet handles GET /api/admin/settings.
func (h *Admin) SettingsGet(c *gin.Context) { c.JSON(http.StatusOK, setting.Masked(h.Settings.Get())) }

// SettingsPut handles PUT /api/admin/settings (partial object).
func (h *Admin) SettingsPut(c *gin.Context) {
	var patch map[string]json.RawMessage
	if !middleware.Bind(c, &patch) {
		return
	}
	s, err := h.Settings.Update(c.Request.Context(), patch)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	keys := make([]string, 0, len(patch))
	for k := range patch {
		keys = append(keys, k)
	}
	h.Audit.Record(c.Request.Context(), middleware.Actor(c), "settings.update", "", keys)
	c.JSON(http.StatusOK, setting.Masked(s))
}

// AuditList handles GET /api/admin/audit.
func (h *Admin) AuditList(c *gin.Context) {
	actor, ok := queryInt64(c, "actor_id")
	if !ok {
		return
	}
	f := model.AuditFilter{ActorID: actor, Action: c.Query("action")}
	if _, keyset := c.GetQuery("cursor"); keyset { // keyset pages: no COUNT, no OFFSET
		cursor, limit, ok := keysetPage(c)
		if !ok {
			return
		}
		items, next, err := h.Audit.After(c.Request.Context(), f, cursor, limit)
		if err != nil {
			middleware.Fail(c, err)
			return
		}
		c.JSON(http.StatusOK, gin.H{"items": items, "next_cursor": next})
		return
	}
	items, total, err := h.Audit.List(c.Request.Context(), f, pageOf(c))
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, Page[model.AuditLog]{Items: items, Total: total})
}

// CreateUser handles POST /api/admin/users.
func (h *Admin) CreateUser(c *gin.Context) {
	var in account.CreateInput
	if !middleware.Bind(c, &in) {
		return
	}
	u, err := h.Accounts.Create(c.Request.Context(), middleware.User(c), c.ClientIP(), in)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, u)
}

// DeleteUser handles DELETE /api/admin/users/:id (account.Service.Delete: closed and anonymised, books kept).
func (h *Admin) DeleteUser(c *gin.Context) {
	id, ok := idParam(c, "user_not_found")
	if !ok {
		return
	}
	if err := h.Accounts.Delete(c.Request.Context(), middleware.User(c), c.ClientIP(), id); err != nil {
		middleware.Fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

package controller

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"tollgate/middleware"
	"tollgate/model"
	"tollgate/service/alert"
	"tollgate/service/apperr"
)

// Alerts serves the alert log and the test send.
type Alerts struct {
	Alerts *alert.Service
}

// List handles GET /api/admin/alerts?event=&channel=&status=&cursor=&limit= (newest first, keyset on id).
func (h *Alerts) List(c *gin.Context) {
	cursor, limit, ok := keysetPage(c)
	if !ok {
		return
	}
	f := model.AlertFilter{Event: c.Query("event"), Channel: c.Query("channel"), Status: c.Query("status")}
	if len(f.Event) > 32 || len(f.Channel) > 8 || len(f.Status) > 8 {
		middleware.Fail(c, apperr.Field("event", "unknown filter value"))
		return
	}
	items, next, err := h.Alerts.ListLogs(c.Request.Context(), f, cursor, limit)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"items": items, "next_cursor": next})
}

// Test handles POST /api/admin/alerts/test {channel: "webhook"|"email"}: sends now, answers the rows written.
func (h *Alerts) Test(c *gin.Context) {
	var in struct {
		Channel string `json:"channel"`
	}
	if !middleware.Bind(c, &in) {
		return
	}
	rows, err := h.Alerts.SendTest(c.Request.Context(), in.Channel)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"items": rows})
}

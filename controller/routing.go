package controller

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"tollgate/middleware"
	"tollgate/model"
	"tollgate/service/account"
	"tollgate/service/apperr"
	"tollgate/service/routing"
)

// Routing serves metric-driven routing: per group × model configuration, the decision log, the simulator and
// the user's own preferences.
type Routing struct {
	Configs   *routing.Configs
	Simulator *routing.Simulator
	Log       *routing.DecisionLog
	Accounts  *account.Service
}

// configView is one configuration row with what it resolves to.
type configView struct {
	model.RoutingConfig
	Effective model.RouteTuning `json:"effective"`
}

// Models handles GET /api/admin/routing/models: every row, the built-in defaults and the strategy names.
func (h *Routing) Models(c *gin.Context) {
	rows, err := h.Configs.List(c.Request.Context())
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	items := make([]configView, 0, len(rows))
	for _, r := range rows {
		items = append(items, configView{RoutingConfig: r, Effective: h.Configs.Tuning(r.Group, r.Model)})
	}
	c.JSON(http.StatusOK, gin.H{"items": items, "defaults": routing.Defaults, "strategies": routing.Strategies,
		"global": h.Configs.Tuning(routing.Any, routing.Any)})
}

// PutModel handles PUT /api/admin/routing/models/:group/:model ("*" for every group or model).
func (h *Routing) PutModel(c *gin.Context) {
	var in model.RouteTuning
	if !middleware.Bind(c, &in) {
		return
	}
	row, err := h.Configs.Put(c.Request.Context(), middleware.Actor(c), c.Param("group"), c.Param("model"), in)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, configView{RoutingConfig: *row, Effective: h.Configs.Tuning(row.Group, row.Model)})
}

// DeleteModel handles DELETE /api/admin/routing/models/:group/:model.
func (h *Routing) DeleteModel(c *gin.Context) {
	if err := h.Configs.Delete(c.Request.Context(), middleware.Actor(c), c.Param("group"), c.Param("model")); err != nil {
		middleware.Fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// Decisions handles GET /api/admin/routing/decisions?request_id=|model=|from=(RFC 3339)&cursor=&limit=, newest
// first; next_cursor pages on.
func (h *Routing) Decisions(c *gin.Context) {
	cursor, limit, ok := keysetPage(c)
	if !ok {
		return
	}
	f := model.DecisionFilter{RequestID: c.Query("request_id"), Model: c.Query("model"), Before: cursor, Limit: limit}
	if v := c.Query("from"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			middleware.Fail(c, apperr.Field("from", "an RFC 3339 time"))
			return
		}
		f.From = t
	}
	rows, err := h.Log.List(c.Request.Context(), f)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	var next *int64
	if len(rows) == limit {
		next = &rows[len(rows)-1].ID
	}
	if rows == nil {
		rows = []model.RoutingDecision{}
	}
	c.JSON(http.StatusOK, gin.H{"items": rows, "next_cursor": next})
}

// Simulate handles POST /api/routing/simulate: the ranking for a request, with scores and reasons.
func (h *Routing) Simulate(c *gin.Context) {
	var in routing.SimInput
	if !middleware.Bind(c, &in) {
		return
	}
	res, err := h.Simulator.Simulate(c.Request.Context(), middleware.User(c), in)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, res)
}

// UpdatePrefs handles PATCH /api/user/routing: the caller's profile routing preferences (replaced whole).
func (h *Routing) UpdatePrefs(c *gin.Context) {
	var in model.RoutePrefs
	if !middleware.Bind(c, &in) {
		return
	}
	u, err := h.Accounts.UpdateSelf(c.Request.Context(), middleware.User(c).ID, account.SelfInput{Routing: &in})
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, u.Routing.V)
}

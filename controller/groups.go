package controller

import (
	"net/http"
	"sort"
	"strings"

	"github.com/gin-gonic/gin"

	"tollgate/middleware"
	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/group"
	"tollgate/service/routing"
	"tollgate/service/sticky"
)

// Groups serves logical-group administration, the sticky-session view and the user's own group list.
type Groups struct {
	Groups  *group.Service
	Sticky  *sticky.Store
	Routing *routing.Engine
}

// List handles GET /api/admin/logical-groups (and the old /api/admin/groups).
func (h *Groups) List(c *gin.Context) {
	gs, err := h.Groups.List(c.Request.Context())
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	if gs == nil {
		gs = []model.Group{}
	}
	c.JSON(http.StatusOK, gs)
}

// Get handles GET /api/admin/logical-groups/:name.
func (h *Groups) Get(c *gin.Context) {
	g, ok := h.Groups.Get(c.Param("name"))
	if !ok {
		middleware.Fail(c, apperr.New(http.StatusNotFound, "group_not_found"))
		return
	}
	c.JSON(http.StatusOK, g)
}

// Create handles POST /api/admin/logical-groups.
func (h *Groups) Create(c *gin.Context) {
	var in group.Input
	if !middleware.Bind(c, &in) {
		return
	}
	g, err := h.Groups.Create(c.Request.Context(), middleware.Actor(c), in)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, g)
}

// Update handles PATCH /api/admin/logical-groups/:name.
func (h *Groups) Update(c *gin.Context) {
	var in group.Input
	if !middleware.Bind(c, &in) {
		return
	}
	g, err := h.Groups.Update(c.Request.Context(), middleware.Actor(c), c.Param("name"), in)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, g)
}

// Delete handles DELETE /api/admin/logical-groups/:name.
func (h *Groups) Delete(c *gin.Context) {
	if err := h.Groups.Delete(c.Request.Context(), middleware.Actor(c), c.Param("name")); err != nil {
		middleware.Fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// Defaults handles GET /api/admin/logical-groups/defaults: what a policy field left at 0 means.
func (h *Groups) Defaults(c *gin.Context) {
	ttls := map[string]int{}
	levels := []string{}
	for _, k := range sticky.Kinds {
		levels = append(levels, string(k))
		ttls[string(k)] = int(h.Sticky.TTL(k, nil).Seconds())
	}
	c.JSON(http.StatusOK, gin.H{
		"sticky": gin.H{"levels": levels, "ttl_s": ttls},
		"failover": gin.H{"consecutive_failures": routing.DefaultConsecutiveFailures,
			"cooldown_s": int(routing.DefaultCooldown.Seconds()), "max_attempts": 0, "deadline_s": 0},
		"return_to_primary_s": 0,
	})
}

// stickyLimit bounds the bindings one sticky view reads.
const stickyLimit = 5000

// StickyView handles GET /api/admin/sticky?group=&model=: live bindings of a group (and model), with counts
// per route, and each route's breaker state.
func (h *Groups) StickyView(c *gin.Context) {
	name, m := c.Query("group"), c.Query("model")
	if name == "" || strings.ContainsAny(name+m, "*?[]\\") {
		middleware.Fail(c, apperr.Field("group", "a group name"))
		return
	}
	ls, err := h.Sticky.List(c.Request.Context(), name, m, stickyLimit)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	type routeCount struct {
		Group string `json:"group"`
		Route string `json:"route"`
		Count int    `json:"count"`
		State string `json:"state"`
	}
	counts := map[[2]string]int{}
	for _, l := range ls {
		counts[[2]string{l.Group, l.Route}]++
	}
	routes := []routeCount{}
	for k, n := range counts {
		routes = append(routes, routeCount{Group: k[0], Route: k[1], Count: n, State: string(h.Routing.RouteHealth(k[0], k[1]).State)})
	}
	sort.Slice(routes, func(i, j int) bool { return routes[i].Count > routes[j].Count })
	total := len(ls) // every binding read (the listing below shows at most 200 of them)
	if len(ls) > 200 {
		ls = ls[:200]
	}
	c.JSON(http.StatusOK, gin.H{"group": name, "model": m, "total": total, "counted": total,
		"truncated": total >= stickyLimit, "routes": routes, "bindings": ls})
}

// userGroup is what a user sees of a group they may use.
type userGroup struct {
	Name        string   `json:"name"`
	DisplayName string   `json:"display_name"`
	Description string   `json:"description"`
	Ratio       string   `json:"ratio"`
	Models      []string `json:"models"`
	Selectable  bool     `json:"selectable"`
}

// Mine handles GET /api/user/groups: the groups the signed-in user may put on a key, with what each offers.
func (h *Groups) Mine(c *gin.Context) {
	u := middleware.User(c)
	out := []userGroup{}
	for _, g := range h.Groups.Selectable(u) {
		out = append(out, userGroup{Name: g.Name, DisplayName: g.DisplayName, Description: g.Description,
			Ratio: g.Ratio.String(), Models: h.Routing.Models([]string{g.Name}), Selectable: true})
	}
	c.JSON(http.StatusOK, out)
}

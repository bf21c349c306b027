package controller

import (
	"encoding/csv"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"tollgate/middleware"
	"tollgate/model"
	"tollgate/service/redemption"
)

// Redemptions serves the admin's redemption-code batches and the user's redeem.
type Redemptions struct {
	Redemptions *redemption.Service
}

// Create handles POST /api/admin/redemptions.
func (h *Redemptions) Create(c *gin.Context) {
	var in redemption.BatchInput
	if !middleware.Bind(c, &in) {
		return
	}
	b, err := h.Redemptions.CreateBatch(c.Request.Context(), middleware.Actor(c), in)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, b)
}

// List handles GET /api/admin/redemptions.
func (h *Redemptions) List(c *gin.Context) {
	f := redemption.Filter{Batch: c.Query("batch"), Status: c.Query("status")}
	items, total, err := h.Redemptions.List(c.Request.Context(), f, pageOf(c))
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, Page[redemption.View]{Items: items, Total: total})
}

// Batches handles GET /api/admin/redemptions/batches.
func (h *Redemptions) Batches(c *gin.Context) {
	items, total, err := h.Redemptions.Batches(c.Request.Context(), pageOf(c))
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, Page[model.RedemptionBatch]{Items: items, Total: total})
}

// exportHeader is the CSV's first line.
var exportHeader = []string{"code", "quota", "status", "expires_at", "used_by", "used_by_name", "used_at"}

// Export handles GET /api/admin/redemptions/export?batch=: the batch's codes in clear, as CSV.
func (h *Redemptions) Export(c *gin.Context) {
	batch := c.Query("batch")
	rows, err := h.Redemptions.Export(c.Request.Context(), middleware.Actor(c), batch)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.Header("Content-Type", "text/csv; charset=utf-8")
	c.Header("Content-Disposition", `attachment; filename="redemptions-`+batch+`.csv"`) // batch is [0-9A-Za-z]
	c.Header("Cache-Control", "no-store")
	c.Status(http.StatusOK)
	w := csv.NewWriter(c.Writer)
	_ = w.Write(exportHeader)
	for _, r := range rows {
		usedBy := ""
		if r.UsedBy != 0 {
			usedBy = strconv.FormatInt(r.UsedBy, 10)
		}
		_ = w.Write([]string{r.Code, strconv.FormatInt(r.Quota, 10), r.Status, csvTime(r.ExpiresAt), usedBy,
			csvCell(r.UsedByName), csvTime(r.UsedAt)})
	}
	w.Flush()
}

func csvTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// csvCell keeps a spreadsheet from reading a text cell as a formula (a username may start with '-').
func csvCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// Update handles PATCH /api/admin/redemptions/:id {status: "disabled"|"unused"}.
func (h *Redemptions) Update(c *gin.Context) {
	id, ok := idParam(c, "redemption_not_found")
	if !ok {
		return
	}
	var in struct {
		Status string `json:"status"`
	}
	if !middleware.Bind(c, &in) {
		return
	}
	v, err := h.Redemptions.SetStatus(c.Request.Context(), middleware.Actor(c), id, in.Status)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

// Delete handles DELETE /api/admin/redemptions/:id.
func (h *Redemptions) Delete(c *gin.Context) {
	id, ok := idParam(c, "redemption_not_found")
	if !ok {
		return
	}
	if err := h.Redemptions.Delete(c.Request.Context(), middleware.Actor(c), id); err != nil {
		middleware.Fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// Redeem handles POST /api/user/redeem {code}.
func (h *Redemptions) Redeem(c *gin.Context) {
	var in struct {
		Code string `json:"code"`
	}
	if !middleware.Bind(c, &in) {
		return
	}
	out, err := h.Redemptions.Redeem(c.Request.Context(), middleware.User(c), c.ClientIP(), in.Code)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

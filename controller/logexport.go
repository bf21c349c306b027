package controller

import (
	"encoding/csv"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/shopspring/decimal"

	"tollgate/middleware"
	"tollgate/model"
	"tollgate/service/pricing"
)

// exportPage is how many rows an export reads per keyset page: one page is all it holds in memory.
const exportPage = 500

// logTotals is GET /api/logs/totals: the sums over every row the same filter lists.
type logTotals struct {
	Requests         int64 `json:"requests"`
	Cost             int64 `json:"cost"`
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
}

func (h *Billing) totals(c *gin.Context, admin bool) {
	f, ok := logFilter(c, admin)
	if !ok {
		return
	}
	t, err := h.Reader.Totals(c.Request.Context(), f)
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, logTotals{Requests: t.Requests, Cost: t.Cost, PromptTokens: t.PromptTokens, CompletionTokens: t.CompletionTokens})
}

// Totals handles GET /api/logs/totals (own logs, the logs page's filters).
func (h *Billing) Totals(c *gin.Context) { h.totals(c, false) }

// AdminTotals handles GET /api/admin/logs/totals.
func (h *Billing) AdminTotals(c *gin.Context) { h.totals(c, true) }

// Export handles GET /api/logs/export: the caller's own logs under the logs page's filters as CSV, in the
// columns the owner's view allows.
func (h *Billing) Export(c *gin.Context) { h.export(c, false) }

// AdminExport handles GET /api/admin/logs/export: every log under the filters as CSV, admin columns.
func (h *Billing) AdminExport(c *gin.Context) { h.export(c, true) }

var (
	userCSVHeader = []string{"time", "request_id", "client_request_id", "type", "username", "token_id", "token_name",
		"model", "endpoint", "stream", "status", "http_status", "prompt_tokens", "completion_tokens",
		"cache_read_tokens", "cache_write_tokens", "usage_estimated", "cost_units", "cost_usd", "group",
		"elapsed_ms", "first_byte_ms", "client_ip", "error_code", "error", "channel_name"}
	adminCSVHeader = append(append([]string{}, userCSVHeader...), "id", "user_id", "channel_id", "upstream_model",
		"upstream_cost_units", "client_protocol", "upstream_protocol", "route", "error_class")
)

// export streams the logs as CSV, newest first, one keyset page at a time straight from the database to the
// client: memory stays one page whatever the number of rows. Every text cell goes through csvCell (a
// spreadsheet must not run a cell as a formula); encoding/csv quotes commas, quotes and line breaks.
func (h *Billing) export(c *gin.Context, admin bool) {
	f, ok := logFilter(c, admin)
	if !ok {
		return
	}
	show := admin || h.Settings.Get().ShowChannelToUsers
	lang := middleware.Lang(c)
	name := "tollgate-logs-" + time.Now().UTC().Format("20060102-150405") + ".csv"
	c.Header("Content-Type", "text/csv; charset=utf-8")
	c.Header("Content-Disposition", `attachment; filename="`+name+`"`)
	c.Header("Cache-Control", "no-store")
	c.Header("X-Content-Type-Options", "nosniff")
	c.Status(http.StatusOK)
	w := csv.NewWriter(c.Writer)
	header := userCSVHeader
	if admin {
		header = adminCSVHeader
	}
	_ = w.Write(header)
	row := make([]string, 0, len(adminCSVHeader))
	err := h.Reader.Each(c.Request.Context(), f, exportPage, func(logs []model.UsageLog) error {
		for i := range logs {
			l := &logs[i]
			u := toUserLog(l, lang, show)
			kind := "usage"
			if l.IsTest {
				kind = "test"
			}
			row = append(row[:0], u.CreatedAt.UTC().Format(time.RFC3339Nano), u.RequestID, csvCell(u.ClientRequestID), kind,
				csvCell(u.Username), strconv.FormatInt(u.TokenID, 10), csvCell(u.TokenName), csvCell(u.Model),
				u.Endpoint, strconv.FormatBool(u.Stream), u.Status, strconv.Itoa(u.HTTPStatus),
				strconv.FormatInt(u.PromptTokens, 10), strconv.FormatInt(u.CompletionTokens, 10),
				strconv.FormatInt(u.CacheReadTokens, 10), strconv.FormatInt(u.CacheWriteTokens, 10),
				strconv.FormatBool(u.UsageEstimated), strconv.FormatInt(u.Cost, 10), usd(u.Cost), csvCell(u.Group),
				strconv.FormatInt(u.ElapsedMs, 10), strconv.FormatInt(u.FirstByteMs, 10), csvCell(u.ClientIP),
				u.ErrorCode, csvCell(u.Error), csvCell(u.ChannelName))
			if admin {
				row[len(userCSVHeader)-2] = csvCell(l.Error) // the whole row: the upstream's own text
				row = append(row, strconv.FormatInt(l.ID, 10), strconv.FormatInt(l.UserID, 10),
					strconv.FormatInt(l.ChannelID, 10), csvCell(l.UpstreamModel), strconv.FormatInt(l.UpstreamCost, 10),
					l.ClientProtocol, l.UpstreamProtocol, csvCell(l.Route), l.ErrorClass)
			}
			if err := w.Write(row); err != nil {
				return err
			}
		}
		w.Flush()
		return w.Error()
	})
	w.Flush()
	if err != nil {
		// The header is out: the status cannot change. A truncated file must not look whole, so the last
		// line says what happened.
		_ = c.Error(err)
		_, _ = c.Writer.WriteString("\n# export interrupted\n")
	}
}

// usd is units as an exact decimal number of US dollars.
func usd(units int64) string {
	return decimal.New(units, 0).Div(decimal.NewFromInt(pricing.UnitsPerUSD)).String()
}

package controller

import (
	"context"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

	"tollgate/middleware"
	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/payment"
)

// NotifyBodyLimit caps a provider notification's body (Stripe events are a few KiB).
const NotifyBodyLimit = 256 << 10

// Topups serves top-up orders and the providers' notifications.
type Topups struct {
	Payments *payment.Service
	// Base is the site's public base URL (PublicBase) notify and return URLs are built on.
	Base *PublicBase
}

// Options handles GET /api/user/topup/options.
func (h *Topups) Options(c *gin.Context) { c.JSON(http.StatusOK, h.Payments.Options()) }

// Create handles POST /api/user/topup.
func (h *Topups) Create(c *gin.Context) {
	var in payment.CreateInput
	if !middleware.Bind(c, &in) {
		return
	}
	out, err := h.Payments.Create(c.Request.Context(), middleware.User(c).ID, in, h.base(c))
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, out)
}

// base is the URL the provider's notify and return URLs are built on.
func (h *Topups) base(c *gin.Context) string { return h.Base.Of(c) }

// Mine handles GET /api/user/topups.
func (h *Topups) Mine(c *gin.Context) {
	h.list(c, h.Payments.List, model.TopupFilter{UserID: middleware.User(c).ID, Status: c.Query("status")})
}

// MyOrder handles GET /api/user/topups/:order_no (another user's order is 404).
func (h *Topups) MyOrder(c *gin.Context) { h.get(c, middleware.User(c).ID) }

// AdminList handles GET /api/admin/topups?status=&provider=&user_id=.
func (h *Topups) AdminList(c *gin.Context) {
	uid, ok := queryInt64(c, "user_id")
	if !ok {
		return
	}
	h.list(c, h.Payments.AdminList, model.TopupFilter{UserID: uid, Status: c.Query("status"), Provider: c.Query("provider")})
}

// AdminOrder handles GET /api/admin/topups/:order_no (with the payer's username).
func (h *Topups) AdminOrder(c *gin.Context) {
	o, err := h.Payments.AdminGet(c.Request.Context(), c.Param("order_no"))
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, o)
}

type topupLister func(context.Context, model.TopupFilter, model.Page) ([]model.TopupOrder, int64, error)

func (h *Topups) list(c *gin.Context, list topupLister, f model.TopupFilter) {
	items, total, err := list(c.Request.Context(), f, pageOf(c))
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, Page[model.TopupOrder]{Items: items, Total: total})
}

func (h *Topups) get(c *gin.Context, userID int64) {
	o, err := h.Payments.Get(c.Request.Context(), userID, c.Param("order_no"))
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, o)
}

// EpayNotify handles GET|POST /api/payment/epay/notify.
func (h *Topups) EpayNotify(c *gin.Context) { h.notify(c, "epay") }

// StripeWebhook handles POST /api/payment/stripe/webhook.
func (h *Topups) StripeWebhook(c *gin.Context) { h.notify(c, "stripe") }

func (h *Topups) notify(c *gin.Context, provider string) {
	body, err := io.ReadAll(io.LimitReader(c.Request.Body, NotifyBodyLimit+1))
	if err != nil || len(body) > NotifyBodyLimit {
		middleware.Fail(c, apperr.New(http.StatusBadRequest, payment.CodeMalformed))
		return
	}
	in := payment.Inbound{Header: c.Request.Header, Query: c.Request.URL.Query(), Body: body}
	ack, err := h.Payments.Notify(c.Request.Context(), provider, in, c.ClientIP())
	if err != nil {
		middleware.Fail(c, err)
		return
	}
	c.Data(http.StatusOK, ack.ContentType, ack.Body)
}

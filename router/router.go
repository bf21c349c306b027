// Package router is the whole route table in one place: which middleware guards which handler.
package router

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"tollgate/controller"
	"tollgate/middleware"
	"tollgate/service/apperr"
)

// ConsoleBodyLimit caps console request bodies.
const ConsoleBodyLimit = 1 << 20

// Handlers are the handler groups the routes point at.
type Handlers struct {
	Status   *controller.Status
	Auth     *controller.Auth
	Tokens   *controller.Tokens
	Admin    *controller.Admin
	Channels *controller.Channels
	Billing  *controller.Billing
	Topups   *controller.Topups
	Invites  *controller.Invites
	Auther   middleware.Authenticator
	Relay    RelayRoutes
	Metrics  gin.HandlerFunc // nil: /metrics is not on this listener
	SPA      http.Handler
	Trusted  []string

	// Redemptions serves redemption codes (admin batches, the user's redeem).
	Redemptions *controller.Redemptions
	// Groups serves logical groups, the sticky view and the user's group list.
	Groups *controller.Groups
	// Tiers serves price tier administration.
	Tiers *controller.Tiers
	// Breakers serves the admin's breaker control (force open/close/half_open/reset).
	Breakers *controller.Breakers
	// Stats serves the admin's revenue, upstream cost and profit reports.
	Stats *controller.Stats
	// Alerts serves the alert log and the test send.
	Alerts *controller.Alerts
	// OAuth serves sign-in with GitHub / OIDC providers and linking them in the profile.
	OAuth *controller.OAuth
	// Signin serves e-mail verification, password reset, e-mail change and the SMTP test.
	Signin *controller.Signin
	// Routing serves routing configuration, decisions, the simulator and the user's preferences.
	Routing *controller.Routing
	// StepUp asks a user with 2FA on for a fresh code before a sensitive action (revealing a key, a new password).
	StepUp middleware.StepUpper
	// Require2FAAdmins reports the require_2fa_admins setting: admins without 2FA are held to enrolment.
	Require2FAAdmins func() bool
}

// RelayRoutes registers the /v1 routes.
type RelayRoutes interface {
	Register(r *gin.Engine)
	// NotFound answers a /v1 or /v1beta path no route matched, in the protocol the path belongs to.
	NotFound(c *gin.Context)
}

// New builds the engine.
func New(h Handlers) *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.HandleMethodNotAllowed = false
	r.RemoveExtraSlash = true
	if err := r.SetTrustedProxies(h.Trusted); err != nil {
		panic(err) // validated by config already
	}
	// Security first, so that every answer carries its headers, even a recovered panic.
	r.Use(middleware.Security(h.Trusted))
	r.Use(middleware.BodyDeadline(middleware.BodyIdleTimeout, middleware.BodyTotalTimeout))
	r.Use(middleware.RequestIDs(), middleware.Recovery(), middleware.AccessLog()) // the locale is read lazily by Lang

	r.GET("/healthz", h.Status.Healthz)
	r.GET("/readyz", h.Status.Readyz)
	if h.Metrics != nil {
		r.GET("/metrics", h.Metrics)
	}

	api := r.Group("/api", middleware.LimitBody(ConsoleBodyLimit), middleware.UserAgent())
	api.GET("/status", h.Status.Site)
	api.GET("/pricing", middleware.OptionalConsole(h.Auther), h.Billing.PublicPricing)

	// Payment providers' notifications: authenticated by their signatures, not by a session.
	api.GET("/payment/epay/notify", h.Topups.EpayNotify)
	api.POST("/payment/epay/notify", h.Topups.EpayNotify)
	api.POST("/payment/stripe/webhook", h.Topups.StripeWebhook)

	auth := api.Group("/auth")
	auth.POST("/register", h.Auth.Register)
	auth.POST("/login", h.Auth.Login)
	auth.POST("/refresh", h.Auth.Refresh)
	auth.POST("/logout", h.Auth.Logout)
	auth.GET("/oauth/:provider/start", h.OAuth.Start)
	auth.GET("/oauth/:provider/callback", h.OAuth.Callback)
	auth.POST("/login/totp", h.Auth.LoginTOTP)

	user := api.Group("", middleware.Console(h.Auther))
	user.GET("/user/self", h.Auth.Self)
	user.PATCH("/user/self", h.Auth.UpdateSelf)
	user.POST("/user/password", middleware.StepUp(h.StepUp), h.Auth.Password)
	user.GET("/user/groups", h.Groups.Mine)
	user.PATCH("/user/routing", h.Routing.UpdatePrefs)
	user.POST("/routing/simulate", h.Routing.Simulate)
	user.POST("/tokens", h.Tokens.Create)
	user.GET("/tokens", h.Tokens.List)
	user.GET("/tokens/:id", h.Tokens.Get)
	user.PATCH("/tokens/:id", h.Tokens.Update)
	user.DELETE("/tokens/:id", h.Tokens.Delete)
	user.POST("/tokens/:id/reveal", middleware.StepUp(h.StepUp), h.Tokens.Reveal)
	user.GET("/logs", h.Billing.Logs)
	user.GET("/logs/stats", h.Billing.Stats)
	user.GET("/logs/totals", h.Billing.Totals)
	user.GET("/logs/export", h.Billing.Export)
	user.GET("/user/topup/options", h.Topups.Options)
	user.POST("/user/topup", h.Topups.Create)
	user.GET("/user/topups", h.Topups.Mine)
	user.GET("/user/topups/:order_no", h.Topups.MyOrder)
	user.GET("/user/invites", h.Invites.Mine)
	user.POST("/user/redeem", h.Redemptions.Redeem)
	user.POST("/user/oauth/:provider/link/start", h.OAuth.LinkStart)
	user.GET("/user/identities", h.OAuth.Identities)
	user.DELETE("/user/identities/:id", h.OAuth.Unlink)
	user.GET("/user/2fa", h.Auth.TwoFactor)
	user.POST("/user/2fa/setup", h.Auth.TwoFactorSetup)
	user.POST("/user/2fa/enable", h.Auth.TwoFactorEnable)
	user.POST("/user/2fa/disable", h.Auth.TwoFactorDisable)
	user.GET("/user/sessions", h.Auth.Sessions)
	user.DELETE("/user/sessions", h.Auth.EndOtherSessions)
	user.DELETE("/user/sessions/:id", h.Auth.EndSession)

	admin := user.Group("/admin", middleware.Admin(), middleware.AdminEnrolment(h.Require2FAAdmins))
	admin.DELETE("/users/:id/2fa", h.Admin.ResetTwoFactor)
	admin.GET("/users/:id/sessions", h.Admin.UserSessions)
	admin.DELETE("/users/:id/sessions", h.Admin.EndUserSessions)
	signinRoutes(auth, user, admin, h.Signin, middleware.StepUp(h.StepUp))
	admin.GET("/users", h.Admin.Users)
	admin.POST("/users", h.Admin.CreateUser)
	admin.DELETE("/users/:id", h.Admin.DeleteUser)
	admin.GET("/users/:id", h.Admin.User)
	admin.PATCH("/users/:id", h.Admin.UpdateUser)
	admin.POST("/users/:id/quota", h.Admin.AdjustQuota)
	admin.GET("/tokens", h.Tokens.AdminList)
	admin.PATCH("/tokens/:id", h.Tokens.AdminUpdate)
	for _, base := range []string{"/groups", "/logical-groups"} { // /groups: the path before logical groups
		admin.GET(base, h.Groups.List)
		admin.POST(base, h.Groups.Create)
		admin.GET(base+"/:name", h.Groups.Get)
		admin.PATCH(base+"/:name", h.Groups.Update)
		admin.DELETE(base+"/:name", h.Groups.Delete)
	}
	admin.GET("/logical-groups/defaults", h.Groups.Defaults)
	admin.GET("/sticky", h.Groups.StickyView)
	admin.GET("/routing/models", h.Routing.Models)
	admin.PUT("/routing/models/:group/:model", h.Routing.PutModel)
	admin.DELETE("/routing/models/:group/:model", h.Routing.DeleteModel)
	admin.GET("/routing/decisions", h.Routing.Decisions)
	admin.GET("/tiers", h.Tiers.List)
	admin.POST("/tiers", h.Tiers.Create)
	admin.PATCH("/tiers/:name", h.Tiers.Update)
	admin.DELETE("/tiers/:name", h.Tiers.Delete)
	admin.GET("/settings", h.Admin.SettingsGet)
	admin.PUT("/settings", h.Admin.SettingsPut)
	admin.GET("/audit", h.Admin.AuditList)
	admin.GET("/alerts", h.Alerts.List)
	admin.POST("/alerts/test", h.Alerts.Test)
	admin.POST("/channels", h.Channels.Create)
	admin.GET("/channels", h.Channels.List)
	admin.GET("/channels/:id", h.Channels.Get)
	admin.PATCH("/channels/:id", h.Channels.Update)
	admin.DELETE("/channels/:id", h.Channels.Delete)
	admin.POST("/channels/:id/fetch-models", h.Channels.FetchModels)
	admin.POST("/channels/:id/test", h.Channels.Test)
	admin.GET("/channels/:id/health", h.Channels.Health)
	admin.POST("/channels/:id/breaker", h.Breakers.Force)
	admin.GET("/fleet", h.Channels.FleetWindow)
	admin.POST("/channels/test", h.Channels.TestMany)
	admin.GET("/channels/test/:job", h.Channels.TestJob)
	admin.GET("/pricing", h.Billing.AdminPricing)
	admin.PUT("/pricing", h.Billing.ReplacePricing)
	admin.POST("/pricing/import", h.Billing.ImportPricing)
	admin.GET("/pricing/export", h.Billing.ExportPricing)
	admin.GET("/logs", h.Billing.AdminLogs)
	admin.GET("/logs/stats", h.Billing.AdminStats)
	admin.GET("/logs/totals", h.Billing.AdminTotals)
	admin.GET("/logs/export", h.Billing.AdminExport)
	admin.GET("/stats/channels", h.Stats.Channels)
	admin.GET("/stats/models", h.Stats.Models)
	admin.GET("/stats/days", h.Stats.Days)
	admin.GET("/stats/users", h.Stats.Users)
	admin.GET("/stats/overview", h.Stats.Overview)
	admin.GET("/topups", h.Topups.AdminList)
	admin.GET("/topups/:order_no", h.Topups.AdminOrder)
	admin.POST("/redemptions", h.Redemptions.Create)
	admin.GET("/redemptions", h.Redemptions.List)
	admin.GET("/redemptions/batches", h.Redemptions.Batches)
	admin.GET("/redemptions/export", h.Redemptions.Export)
	admin.PATCH("/redemptions/:id", h.Redemptions.Update)
	admin.DELETE("/redemptions/:id", h.Redemptions.Delete)

	h.Relay.Register(r)

	r.NoRoute(func(c *gin.Context) {
		p := c.Request.URL.Path
		if strings.HasPrefix(p, "/v1") {
			h.Relay.NotFound(c)
			return
		}
		if strings.HasPrefix(p, "/api/") || p == "/api" {
			middleware.Fail(c, apperr.New(http.StatusNotFound, "route_not_found"))
			return
		}
		if c.Request.Method != http.MethodGet && c.Request.Method != http.MethodHead {
			middleware.Fail(c, apperr.New(http.StatusNotFound, "route_not_found"))
			return
		}
		middleware.SetConsoleCSP(c)
		h.SPA.ServeHTTP(c.Writer, c.Request)
	})
	return r
}

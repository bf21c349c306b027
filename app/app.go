// Package app wires Tollgate together from a Config: store, cache, bus, services, handlers and routes. main.go
// and the integration tests build the same App, so tests exercise exactly what runs in production.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"

	"tollgate/config"
	"tollgate/controller"
	"tollgate/middleware"
	"tollgate/model"
	"tollgate/relay"
	"tollgate/relay/adaptor"
	"tollgate/relay/adaptor/anthropic"
	"tollgate/relay/adaptor/azure"
	"tollgate/relay/adaptor/bedrock"
	"tollgate/relay/adaptor/gemini"
	"tollgate/relay/adaptor/openai"
	"tollgate/relay/adaptor/vertex"
	"tollgate/router"
	"tollgate/service/account"
	"tollgate/service/alert"
	"tollgate/service/audit"
	"tollgate/service/bus"
	"tollgate/service/cache"
	"tollgate/service/captcha"
	"tollgate/service/channel"
	"tollgate/service/fleet"
	"tollgate/service/group"
	"tollgate/service/health"
	"tollgate/service/invite"
	"tollgate/service/ledger"
	"tollgate/service/mail"
	"tollgate/service/metrics"
	"tollgate/service/oauth"
	"tollgate/service/payment"
	"tollgate/service/payment/epay"
	stripepay "tollgate/service/payment/stripe"
	"tollgate/service/pricing"
	"tollgate/service/redemption"
	"tollgate/service/routing"
	"tollgate/service/secret"
	"tollgate/service/setting"
	"tollgate/service/stats"
	"tollgate/service/sticky"
	"tollgate/service/tier"
	"tollgate/service/token"
	"tollgate/service/tokencount"
	"tollgate/service/usagelog"
	"tollgate/web"
)

// Version is set at build time with -ldflags "-X tollgate/app.Version=...".
var Version = "dev"

// Options adjust an App for tests.
type Options struct {
	BcryptCost  int    // lower in tests
	RedisPrefix string // key prefix in Redis ("tg:" by default)
	Health      health.Config
	// RefreshGrace overrides account.Options.RefreshGrace (tests that replay a rotated token at once).
	RefreshGrace time.Duration
	// Clock is the relay's and the key service's time for spend windows and log rows (nil: time.Now).
	Clock func() time.Time
	// RouteClock is the route breakers' and return-to-primary's time (nil: time.Now); tests move it past
	// a group's cooldown.
	RouteClock func() time.Time
	// Alerts tunes the alert service (webhook backoff, check interval) for tests.
	Alerts alert.Options
	// FleetClock is the fleet metrics' time (nil: time.Now); tests age buckets into hours.
	FleetClock func() time.Time
	// RoutingPeriod is metric-driven routing's aggregation period (0: routing.DefaultPeriod); tests shorten it.
	RoutingPeriod time.Duration
	// OAuthClient makes the calls to sign-in providers (nil: a client with a 15 s timeout); OAuthClock is
	// the time ID tokens are checked against (nil: time.Now).
	OAuthClient *http.Client
	OAuthClock  func() time.Time
	// AccountClock is the account service's time (sessions, e-mail codes and reset links; nil: time.Now);
	// tests move it past a link's expiry.
	AccountClock func() time.Time
}

// App is one running Tollgate node.
type App struct {
	Cfg      config.Config
	Store    *model.Store
	Cache    cache.Cache
	Bus      bus.Bus
	Ledger   ledger.Ledger
	Keys     *secret.Keyring
	Settings *setting.Service
	Groups   *group.Service
	Accounts *account.Service
	Invites  *invite.Service
	Tokens   *token.Service
	Audit    *audit.Log
	Channels *channel.Service
	Pricing  *pricing.Service
	Logs     *usagelog.Writer
	Relay    *relay.Relay
	Health   *health.Tracker
	Prober   *relay.Prober
	Metrics  *metrics.Metrics
	Payments *payment.Service
	Handler  http.Handler

	// Retention deletes usage logs older than log_retention_days (one node at a time).
	Retention *usagelog.Retention

	// Redemptions is the redemption-code book.
	Redemptions *redemption.Service
	// Tiers is the price tier book: Tiers.Ratio(user.Tier) multiplies prices on top of the group's ratio.
	Tiers *tier.Service
	// Fleet is the fleet-wide traffic book (per channel × model × minute, all nodes).
	Fleet *fleet.Recorder
	// Routing is the routing engine (logical groups → routes → channels) with the route breakers.
	Routing *routing.Engine
	// RoutingConfigs is the per group × model routing configuration; Decisions the routing decision log.
	RoutingConfigs *routing.Configs
	Decisions      *routing.DecisionLog
	Sticky         *sticky.Store
	// Alerts sends webhooks and e-mails on breaker trips, disabled keys, error rates and low balances.
	Alerts *alert.Service
	// OAuth signs users in with GitHub and OIDC providers.
	OAuth *oauth.Service
	// Outbox sends sign-in e-mails (codes, reset links, the SMTP test) through the one SMTP configuration.
	Outbox *mail.Outbox

	redis   *redis.Client
	closers []func(context.Context) error
}

// New builds an App: connects, migrates, seeds the root user and the default group, loads snapshots.
// rootPassword is returned when it was generated on this start (to print once).
func New(ctx context.Context, cfg config.Config, opt Options) (*App, string, error) {
	a := &App{Cfg: cfg}
	ok := false
	defer func() {
		if !ok {
			_ = a.Close(context.Background())
		}
	}()
	if opt.RedisPrefix == "" {
		opt.RedisPrefix = "tg:"
	}
	var err error
	if a.Keys, err = secret.New(cfg.SecretKey); err != nil {
		return nil, "", err
	}
	if a.Store, err = model.Open(cfg.SQLDSN, cfg.SQLitePath); err != nil {
		return nil, "", err
	}
	a.closers = append(a.closers, func(context.Context) error { return a.Store.Close() })
	if err := a.Store.Migrate(ctx); err != nil {
		return nil, "", fmt.Errorf("migrate: %w", err)
	}
	logOpts, err := a.openLogs(ctx) // LOG_SQL_DSN: usage logs in their own database
	if err != nil {
		return nil, "", err
	}
	if err := a.Store.EnsureDefaultGroup(ctx); err != nil {
		return nil, "", fmt.Errorf("default group: %w", err)
	}
	if err := a.Store.EnsureDefaultTier(ctx); err != nil {
		return nil, "", fmt.Errorf("default tier: %w", err)
	}
	if cfg.RedisURL == "" {
		a.Cache, a.Bus = cache.NewMemory(), bus.NewMemory()
		// Settlements are remembered for duplicate Settle calls: an hour, but at most 65,536 (~10 MB; the
		// default 262,144, ~150 B each by estimate, set the node's peak RSS: 215 → 191 MB measured in a default bench).
		a.Ledger = ledger.NewMemory(a.Store, ledger.WithSettledTTL(time.Hour), ledger.WithSettledMax(1<<16))
	} else {
		ropt, err := redis.ParseURL(cfg.RedisURL)
		if err != nil {
			return nil, "", fmt.Errorf("REDIS_URL: %w", err)
		}
		ropt.PoolSize = 256
		a.redis = redis.NewClient(ropt)
		a.closers = append(a.closers, func(context.Context) error { return a.redis.Close() })
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := a.redis.Ping(pctx).Err(); err != nil {
			return nil, "", fmt.Errorf("redis %s: %w", cfg.RedisURL, err)
		}
		a.Cache = cache.NewRedis(a.redis, opt.RedisPrefix)
		a.Bus = bus.NewRedis(a.redis, opt.RedisPrefix, 2*time.Second)
		rl := ledger.NewRedis(a.redis, opt.RedisPrefix+"l:", a.Store, ledger.WithSettledTTL(time.Hour))
		a.closers = append(a.closers, rl.StartBatcher().Close)
		// Leases keep each request's money movements in process; the flusher sends them to Redis in batches.
		leased := ledger.NewLeased(rl, ledger.LeaseOptions{}).Start()
		a.closers = append(a.closers, leased.Close)
		a.Ledger = leased
	}
	a.Audit = audit.New(a.Store)
	a.Settings = setting.New(a.Store, a.Bus)
	a.Settings.UseKeyring(a.Keys) // payment secrets are stored sealed
	a.Groups = group.New(a.Store, a.Bus, a.Audit)
	a.Accounts = account.New(a.Store, a.Cache, a.Bus, a.Keys, a.Settings, a.Groups, a.Ledger, a.Audit,
		account.Options{BcryptCost: opt.BcryptCost, RefreshGrace: opt.RefreshGrace, Now: opt.AccountClock})
	a.Outbox = mail.NewOutbox(a.Settings, opt.AccountClock)
	a.closers = append(a.closers, a.Outbox.Close)
	a.Accounts.SetMailer(a.Outbox)
	a.Accounts.SetCaptcha(captcha.New(a.Settings, nil))
	a.Invites = invite.New(a.Store, a.Settings, a.Accounts)
	a.Accounts.SetInvites(a.Invites)
	a.Tiers = tier.New(a.Store, a.Bus, a.Audit)
	a.Accounts.SetTiers(a.Tiers)
	a.Tokens = token.New(a.Store, a.Bus, a.Keys, a.Groups, a.Ledger, a.Accounts, a.Audit)
	a.Channels = channel.New(a.Store, a.Bus, a.Keys, a.Audit)
	a.Pricing = pricing.New(a.Store, a.Bus, a.Settings, a.Audit)
	a.Health = health.New(opt.Health, a.Cache, a.Bus, time.Now)
	routeClock := opt.RouteClock
	if routeClock == nil {
		routeClock = time.Now
	}
	// Route breakers are breakers too, in their own namespace of the cache and bus (ids are routing.RouteID).
	a.Routing = routing.NewEngine(a.Channels.Snapshot, a.Groups.Book,
		health.New(health.Config{Namespace: "route"}, a.Cache, a.Bus, routeClock), routeClock)
	a.RoutingConfigs = routing.NewConfigs(a.Store, a.Bus, a.Audit)
	a.Routing.Configs, a.Routing.Live = a.RoutingConfigs, a.Health.Live
	a.Groups.ChannelExists = func(id int64) bool { _, ok := a.Channels.Snapshot().ByID[id]; return ok }
	a.Channels.OnLoad(func(s *channel.Snapshot) {
		for id, ch := range s.ByID {
			a.Health.SetChannelConfig(id, ch.Breaker.V)
		}
	})

	if _, err := a.Channels.SealHeaderOverrides(ctx); err != nil { // rows from before values were sealed
		return nil, "", err
	}
	if err := a.Bus.Start(ctx); err != nil {
		return nil, "", err
	}
	a.closers = append(a.closers, func(context.Context) error { return a.Bus.Close() })
	if err := errors.Join(a.Settings.Load(ctx), a.Groups.Load(ctx), a.Tiers.Load(ctx), a.Channels.Load(ctx), a.Pricing.Load(ctx),
		a.RoutingConfigs.Load(ctx)); err != nil {
		return nil, "", err
	}
	a.Logs = usagelog.NewWriter(a.Store, 8192, 500, 200*time.Millisecond, logOpts...)
	a.closers = append(a.closers, func(ctx context.Context) error { return a.Logs.Close(ctx) })
	a.startRetention()
	// Every channel type, declared once with its adaptor: the admin API accepts exactly these.
	client := relay.NewClient()
	adaptors := adaptor.Registry{
		channel.TypeOpenAI: openai.Adaptor{}, channel.TypeOpenAICompatible: openai.Adaptor{ChatOnly: true},
		channel.TypeAnthropic: anthropic.Adaptor{}, channel.TypeGemini: gemini.Adaptor{},
		channel.TypeAzure: azure.Adaptor{}, channel.TypeBedrock: bedrock.Adaptor{},
		channel.TypeVertex: vertex.New(vertex.NewTokens(client, nil)),
	}
	a.Channels.Types, a.Channels.Presets = adaptors.Types(), openai.PresetURLs()
	a.Sticky = sticky.New(a.Cache, nil, time.Now)
	// Multipart uploads are spooled here while their request runs (relay/upload.go), on disk rather than in memory.
	uploads := filepath.Join(cfg.DataDir, "uploads")
	if err := os.MkdirAll(uploads, 0o700); err != nil {
		return nil, "", fmt.Errorf("upload spool: %w", err)
	}
	a.Relay = relay.New(relay.Deps{
		Tokens: a.Tokens, Accounts: a.Accounts, Groups: a.Groups, Channels: a.Channels, Pricing: a.Pricing,
		Settings: a.Settings, Ledger: a.Ledger, Logs: a.Logs, Cache: a.Cache, Counter: tokencount.New(),
		Adaptors:  adaptors,
		Client:    client,
		Health:    a.Health,
		Sticky:    a.Sticky,
		Routing:   a.Routing,
		Tiers:     a.Tiers,
		UploadDir: uploads,
	})
	a.Relay.Clock, a.Tokens.Clock = opt.Clock, opt.Clock
	a.Tokens.Logs = a.Logs  // a budget switched on reloads spend from SQL: the writer's batch is written first
	if cfg.RedisURL != "" { // an in-process ledger answers in microseconds: nothing to overlap
		a.Relay.Headroom = relay.NewHeadroom()
	}
	a.Metrics = metrics.New(metrics.Sources{
		ChannelStates: a.channelStates,
		LogQueue:      a.Logs.Pending.Load,
		Settling:      a.Logs.Settling,
		LogLastFlush:  func() time.Time { return time.Unix(0, a.Logs.LastFlush.Load()) },
	})
	a.Relay.Metrics = a.Metrics
	// Fleet-wide numbers per channel × model: each node writes its minutes, every node reads them all.
	a.Fleet = fleet.New(a.Store, a.Cache, opt.FleetClock)
	a.Fleet.Start()
	a.closers = append(a.closers, a.Fleet.Close)
	a.Relay.Fleet = a.Fleet
	// Metric-driven routing: this node's periods (and the fleet's rollups) in a snapshot the strategies read.
	a.Routing.Book = routing.NewBook(opt.RoutingPeriod, a.Fleet)
	a.Routing.Book.Start()
	a.closers = append(a.closers, a.Routing.Book.Close)
	a.Decisions = routing.NewDecisionLog(a.Store, a.Cache, func() int { return a.Settings.Get().RoutingDecisionSample },
		func() int { return a.Settings.Get().RoutingDecisionRetentionDays })
	a.Decisions.Start()
	a.closers = append(a.closers, a.Decisions.Close)
	a.Relay.Decisions = a.Decisions
	a.Alerts = alert.New(alert.Deps{Store: a.Store, Cache: a.Cache, Settings: a.Settings, Balances: a.Ledger,
		ChannelName: func(id int64) string {
			if ch, ok := a.Channels.Snapshot().ByID[id]; ok {
				return ch.Name
			}
			return ""
		}}, opt.Alerts)
	a.Health.OnTransition(a.Alerts.OnTransition)
	a.Relay.Alerts = a.Alerts
	a.Alerts.Start()
	a.closers = append(a.closers, a.Alerts.Close)
	a.Redemptions = redemption.New(a.Store, a.Cache, a.Keys, a.Accounts, a.Audit, nil)
	a.Prober = relay.NewProber(a.Relay, 4)
	a.Prober.StartSchedule(func() time.Duration { return time.Duration(a.Settings.Get().ChannelTestInterval) * time.Second })
	a.closers = append(a.closers, a.Prober.Close)
	// The tokenizer vocabularies (~15 MB of heap) load on first use: most requests never need them (the upstream
	// reports usage); the first one that does pays the ~0.2 s parse once.
	// Top-ups; the invite service pays the inviter's share of an invitee's first top-up.
	a.Payments = payment.New(a.Store, a.Accounts, a.Settings, a.Audit, payment.Options{Rewarder: a.Invites},
		epay.New(), stripepay.New(cfg.StripeAPIBase))
	generated, err := a.Accounts.EnsureRoot(ctx, cfg.RootPassword)
	if err != nil {
		return nil, "", fmt.Errorf("create root: %w", err)
	}

	a.OAuth = oauth.New(a.Store, a.Cache, a.Settings, a.Accounts, a.Audit, opt.OAuthClient, opt.OAuthClock)
	authHandler := &controller.Auth{Accounts: a.Accounts, Groups: a.Groups, Secure: cfg.CookieSecure}

	reports := stats.New(a.Store, a.Channels, nil)
	reports.Fleet = a.Fleet // percentiles of whole days from the rollups (their sums come from the daily tables)
	base := &controller.PublicBase{Env: cfg.PublicURL, Settings: a.Settings}
	a.Handler = router.New(router.Handlers{
		Status: &controller.Status{Version: Version, Store: a.Store, Cache: a.Cache, Settings: a.Settings, OAuth: a.OAuth, Base: base},
		Auth:   authHandler,
		Tokens: &controller.Tokens{Tokens: a.Tokens, Accounts: a.Accounts},
		Admin:  &controller.Admin{Accounts: a.Accounts, Groups: a.Groups, Settings: a.Settings, Audit: a.Audit},
		Channels: &controller.Channels{Channels: a.Channels, Lister: a.Relay, Tester: a.Prober, HealthOf: a.Health, Fleet: a.Fleet, StepUp: a.Accounts,
			LastTests: channel.LastTests{Cache: a.Cache}},
		Metrics: a.metricsRoute(),
		Billing: &controller.Billing{Pricing: a.Pricing, Groups: a.Groups, Reader: usagelog.NewReader(a.Store), Settings: a.Settings, Tiers: a.Tiers},
		Invites: &controller.Invites{Invites: a.Invites},
		Relay:   a.Relay,
		Topups:  &controller.Topups{Payments: a.Payments, Base: base},
		Auther:  a.Accounts,
		SPA:     web.New(),
		Trusted: cfg.TrustedProxies,

		Redemptions: &controller.Redemptions{Redemptions: a.Redemptions},
		Tiers:       &controller.Tiers{Tiers: a.Tiers},
		Groups:      &controller.Groups{Groups: a.Groups, Sticky: a.Sticky, Routing: a.Routing},
		Breakers:    &controller.Breakers{Channels: a.Channels, Health: a.Health, Audit: a.Audit},
		Stats:       &controller.Stats{Stats: reports},
		Alerts:      &controller.Alerts{Alerts: a.Alerts},
		OAuth:       &controller.OAuth{OAuth: a.OAuth, Auth: authHandler, Base: base, Secure: cfg.CookieSecure},
		Signin:      &controller.Signin{Accounts: a.Accounts, Outbox: a.Outbox, Base: base},
		Routing: &controller.Routing{Configs: a.RoutingConfigs, Log: a.Decisions, Accounts: a.Accounts,
			Simulator: &routing.Simulator{Engine: a.Routing, User: a.Store.UserByID, Token: a.Store.TokenByID,
				MayUse: a.Groups.MayUse, SellPer1M: a.sellPer1M, ShowChannels: func() bool { return a.Settings.Get().ShowChannelToUsers }}},

		StepUp:           a.Accounts,
		Require2FAAdmins: func() bool { return a.Settings.Get().Require2FAAdmins },
	})
	ok = true
	return a, generated, nil
}

// Close flushes and closes everything in reverse order of opening.
func (a *App) Close(ctx context.Context) error {
	// Requests still settling (their finishing runs on the relay's finishers after the handler returned) use
	// the decision log, the routing book, the fleet, the alerts and the ledger closed below: let them end first.
	// Half of what is left of ctx at most, so that the closers below still get time of their own (the fleet
	// flushes its minutes with ctx) when a settlement hangs.
	if a.Logs != nil {
		wait := ctx
		if dl, ok := ctx.Deadline(); ok {
			var cancel context.CancelFunc
			wait, cancel = context.WithDeadline(ctx, time.Now().Add(time.Until(dl)/2))
			defer cancel()
		}
		a.Logs.AwaitSettling(wait)
	}
	if a.Relay != nil {
		a.Relay.Close()
	}
	var errs []error
	for i := len(a.closers) - 1; i >= 0; i-- {
		errs = append(errs, a.closers[i](ctx))
	}
	a.closers = nil
	return errors.Join(errs...)
}

// LogStart prints the effective configuration with secrets masked.
func LogStart(cfg config.Config) {
	slog.Info("tollgate starting", append([]any{"version", Version}, cfg.Masked()...)...)
}

// channelStates reports each channel's breaker state, "disabled" for channels an admin or the relay turned off.
func (a *App) channelStates() map[int64]string {
	out := map[int64]string{}
	states := a.Health.States()
	for id, ch := range a.Channels.Snapshot().ByID {
		st := string(health.StateClosed)
		if s, ok := states[id]; ok {
			st = string(s)
		}
		if ch.Status != model.StatusEnabled {
			st = "disabled"
		}
		out[id] = st
	}
	return out
}

// metricsRoute is /metrics on the public listener when a METRICS_TOKEN guards it; with METRICS_ADDR the
// metrics live on their own listener (see MetricsHandler) and the public route does not exist.
func (a *App) metricsRoute() gin.HandlerFunc {
	if a.Cfg.MetricsAddr != "" || a.Cfg.MetricsToken == "" {
		return nil
	}
	guard, h := middleware.MetricsToken(a.Cfg.MetricsToken), gin.WrapH(a.Metrics.Handler())
	return func(c *gin.Context) {
		if guard(c); c.IsAborted() {
			return
		}
		h(c)
	}
}

// sellPer1M is a model's sell price in USD per 1M tokens (mean of input and output) for the routing simulator.
func (a *App) sellPer1M(m string) (float64, bool) {
	p, ok := a.Pricing.Lookup(m)
	if !ok {
		return 0, false
	}
	in, _ := p.Input.Float64()
	out, _ := p.Output.Float64()
	return (in + out) / 2, true
}

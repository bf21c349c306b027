// Package setting serves site settings from an in-memory snapshot that every write refreshes on every node.
package setting

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"

	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/bus"
	"tollgate/service/secret"
)

// Topic is the bus topic of settings changes.
const Topic = "setting"

// PriceRow is a model price as decimal strings (USD per 1M tokens; per_call USD per call), and what is not
// tokens: USD per image (per_image_by_size per "1024x1024" or "1024x1024/hd"), per minute of audio in, per 1M
// characters of speech, per 1,000 rerank searches; tiers of token prices by prompt length.
type PriceRow struct {
	Model          string            `json:"model,omitempty"`
	Input          string            `json:"input"`
	Output         string            `json:"output"`
	CacheRead      string            `json:"cache_read"`
	CacheWrite     string            `json:"cache_write"`
	PerCall        string            `json:"per_call"`
	PerImage       string            `json:"per_image,omitempty"`
	PerImageBySize map[string]string `json:"per_image_by_size,omitempty"`
	PerAudioMinute string            `json:"per_audio_minute,omitempty"`
	Per1MChars     string            `json:"per_1m_chars,omitempty"`
	Per1KSearches  string            `json:"per_1k_searches,omitempty"`
	Tiers          []PriceTierRow    `json:"tiers,omitempty"`
}

// PriceTierRow is a token price for prompts longer than AbovePromptTokens (decimal USD per 1M tokens).
type PriceTierRow struct {
	AbovePromptTokens int64  `json:"above_prompt_tokens"`
	Input             string `json:"input"`
	Output            string `json:"output"`
}

// ErrorRule maps an upstream error answer to an error class: when the answer (optionally only with Status)
// contains Contains (case-insensitive) where the relay lets a rule look, the attempt gets Class. A rule reads
// the structured error fields always, but free text only where the caller cannot have written it (see
// ruleMatches in relay/classify.go and docs/API.md). Rules are tried in order, before the built-in
// classification.
type ErrorRule struct {
	Contains string `json:"contains"`
	Status   int    `json:"status,omitempty"`
	Class    string `json:"class"`
}

// ErrorClasses are the classes a rule may assign.
var ErrorClasses = map[string]bool{"rate_limited": true, "auth": true, "upstream_quota": true, "server": true,
	"timeout": true, "client": true, "model_unsupported": true, "bad_reply": true}

// Settings are the site-wide knobs an admin edits in the console.
type Settings struct {
	SiteName string `json:"site_name"`
	// PublicBaseURL is the site's public base URL ("https://api.example.com", no trailing slash; "" = the
	// request's scheme and host). PUBLIC_URL in the environment overrides it (controller.PublicBase).
	PublicBaseURL        string      `json:"public_base_url"`
	Notice               string      `json:"notice"`
	RegistrationOpen     bool        `json:"registration_open"`
	DefaultGroup         string      `json:"default_group"`
	NewUserQuota         int64       `json:"new_user_quota"`
	UnknownModelPolicy   string      `json:"unknown_model_policy"` // "refuse" or "default"
	DefaultPrice         PriceRow    `json:"default_price"`
	EstimateOutputTokens int         `json:"estimate_output_tokens"` // reserve this many output tokens when max_tokens is absent
	RetryBudget          int         `json:"retry_budget"`           // extra attempts after the first
	ChannelTestInterval  int         `json:"channel_test_interval"`  // seconds between recovery tests (0 = off)
	ErrorRules           []ErrorRule `json:"error_rules"`            // admin keyword rules for upstream errors
	RequestDeadline      int         `json:"request_deadline"`       // seconds one relay request may take across all attempts
	FirstByteBudget      int         `json:"first_byte_budget"`      // seconds until the first byte reaches the client, across attempts
	RecoveryRamp         int         `json:"recovery_ramp"`          // seconds a channel back from OPEN takes to ramp from 10 % to full weight
	SignupRateLimit      int         `json:"signup_rate_limit"`      // sign-ups per IP per hour (0 = unlimited)
	ShowChannelToUsers   bool        `json:"show_channel_to_users"`  // users see the channel name in their own logs
	Payment              Payment     `json:"payment"`                // top-up providers and order rules
	Invite               Invite      `json:"invite"`                 // invite rewards
	DisplayCurrency      string      `json:"display_currency"`       // how money is shown: "USD", "CNY" (at DisplayRate) or "units"
	DisplayRate          string      `json:"display_rate"`           // CNY per 1 USD when DisplayCurrency is "CNY" (decimal string)
	IPRPM                int         `json:"ip_rpm"`                 // /v1 requests per client IP per minute, sliding window (0 = off)
	LogRetentionDays     int         `json:"log_retention_days"`     // usage log rows older than this many days are deleted (0 = keep forever)
	// Uploads caps the multipart bodies of the image edit/variation and audio endpoints.
	Uploads Uploads `json:"uploads"`
	// CrossProtocol: a model is served by channels of any protocol (the relay translates); false keeps each
	// request on channels that speak the caller's protocol. PreferSameProtocol: within a priority tier,
	// channels speaking the caller's protocol are tried first (no translation); false weighs them all alike.
	CrossProtocol      bool `json:"cross_protocol"`
	PreferSameProtocol bool `json:"prefer_same_protocol"`
	// Alerts: webhooks, SMTP, cooldown and thresholds of service/alert (secrets sealed, shown masked).
	Alerts Alerts `json:"alerts"`
	// OAuth: sign-in with GitHub and OIDC providers (client secrets sealed, shown masked).
	OAuth OAuth `json:"oauth"`
	// EmailVerification: a sign-up needs a verified e-mail (code sent by mail) before the account works and
	// the new-user gift is paid. PasswordReset: "forgot password" sends a reset link. Both need alerts.smtp.
	EmailVerification bool `json:"email_verification"`
	PasswordReset     bool `json:"password_reset"`
	// Captcha on sign-up, sign-in after failures and password-reset requests (secret sealed, shown masked).
	Captcha Captcha `json:"captcha"`
	// Require2FAAdmins: admin and root accounts without two-factor sign-in are refused on the admin API (403
	// 2fa_enrolment_required) until they enrol.
	Require2FAAdmins bool `json:"require_2fa_admins"`
	// RoutingDecisionSample keeps 1 in N routed requests' decisions in routing_decisions (1 = every one; default
	// 100, since a row per request costs throughput);
	// RoutingDecisionRetentionDays is how long those rows stay.
	RoutingDecisionSample        int `json:"routing_decision_sample"`
	RoutingDecisionRetentionDays int `json:"routing_decision_retention_days"`
}

// Payment configures top-ups. Amounts and rates are decimal strings; Rate is provider currency per 1 USD of
// quota. Secrets (Epay Key, Stripe SecretKey and WebhookSecret) are stored encrypted and shown masked.
type Payment struct {
	Epay            EpaySettings   `json:"epay"`
	Stripe          StripeSettings `json:"stripe"`
	Presets         []string       `json:"presets"`           // preset amounts offered on the wallet page
	Bonus           []BonusTier    `json:"bonus"`             // pay at least MinAmount, get Percent extra
	OrderTTLMinutes int            `json:"order_ttl_minutes"` // a pending order expires after this (default 120)
}

// EpaySettings configure an Epay (易支付) merchant.
type EpaySettings struct {
	Enabled    bool     `json:"enabled"`
	GatewayURL string   `json:"gateway_url"` // the base the submit.php redirect is built on
	PID        string   `json:"pid"`
	Key        string   `json:"key"`
	Methods    []string `json:"methods"` // e.g. alipay, wxpay
	Currency   string   `json:"currency"`
	Rate       string   `json:"rate"`
	MinAmount  string   `json:"min_amount"`
	MaxAmount  string   `json:"max_amount"`
}

// StripeSettings configure Stripe Checkout.
type StripeSettings struct {
	Enabled       bool   `json:"enabled"`
	SecretKey     string `json:"secret_key"`
	WebhookSecret string `json:"webhook_secret"`
	Currency      string `json:"currency"`
	Rate          string `json:"rate"`
	MinAmount     string `json:"min_amount"`
	MaxAmount     string `json:"max_amount"`
}

// BonusTier gives Percent extra quota on a top-up of at least MinAmount (provider currency).
type BonusTier struct {
	MinAmount string `json:"min_amount"`
	Percent   string `json:"percent"`
}

// Invite configures invite rewards in units (0 = off) and the inviter's share of the invitee's first top-up.
type Invite struct {
	InviterReward     int64  `json:"inviter_reward"`
	InviteeReward     int64  `json:"invitee_reward"`
	FirstTopupPercent string `json:"first_topup_percent"`
}

// Defaults are what a fresh install starts with.
func Defaults() Settings {
	return Settings{
		SiteName: "Tollgate", RegistrationOpen: true, DefaultGroup: "default", UnknownModelPolicy: "refuse",
		DefaultPrice:         PriceRow{Input: "0", Output: "0", CacheRead: "0", CacheWrite: "0", PerCall: "0"},
		EstimateOutputTokens: 4096, RetryBudget: 3, CrossProtocol: true, PreferSameProtocol: true, ChannelTestInterval: 300,
		RequestDeadline: 600, FirstByteBudget: 300, RecoveryRamp: 60, SignupRateLimit: 10,
		Payment: Payment{OrderTTLMinutes: 120,
			Epay:   EpaySettings{Currency: "CNY", Rate: "7.3", Methods: []string{"alipay", "wxpay"}, MinAmount: "1", MaxAmount: "10000"},
			Stripe: StripeSettings{Currency: "USD", Rate: "1", MinAmount: "1", MaxAmount: "10000"}},
		Invite:          Invite{FirstTopupPercent: "0"},
		DisplayCurrency: "USD", DisplayRate: "7.3",
		Uploads:               Uploads{ImageMB: 50, AudioMB: 25},
		RoutingDecisionSample: 100, RoutingDecisionRetentionDays: 7,
		Alerts:  defaultAlerts(),
		Captcha: defaultCaptcha(),
	}
}

// Service reads and writes settings.
type Service struct {
	store *model.Store
	bus   bus.Bus
	cur   atomic.Pointer[Settings]
	keys  *secret.Keyring // seals payment secrets at rest (UseKeyring)
}

// New builds the service and subscribes to changes; call Load before serving.
func New(store *model.Store, b bus.Bus) *Service {
	s := &Service{store: store, bus: b}
	d := Defaults()
	s.cur.Store(&d)
	b.Subscribe(Topic, func(bus.Message) { _ = s.Load(context.Background()) })
	return s
}

// Get returns the current snapshot (never nil; do not modify it).
func (s *Service) Get() *Settings { return s.cur.Load() }

// Load reads settings from SQL into the snapshot.
func (s *Service) Load(ctx context.Context) error {
	opts, err := s.store.ListOptions(ctx)
	if err != nil {
		return fmt.Errorf("load settings: %w", err)
	}
	next := Defaults()
	m := map[string]json.RawMessage{}
	for _, o := range opts {
		m[o.Key] = json.RawMessage(o.Value)
	}
	b, _ := json.Marshal(m)
	if err := json.Unmarshal(b, &next); err != nil {
		return fmt.Errorf("decode settings: %w", err)
	}
	s.openSecrets(&next)
	s.openAlerts(&next.Alerts)
	s.openOAuth(&next.OAuth)
	s.openCaptcha(&next.Captcha)
	s.cur.Store(&next)
	return nil
}

// Update applies a partial JSON object of settings, validates the result and stores it.
func (s *Service) Update(ctx context.Context, patch map[string]json.RawMessage) (*Settings, error) {
	next := *s.Get()
	detach(&next) // json.Unmarshal reuses a slice's array: never write into the live snapshot's
	known := map[string]bool{}
	b, _ := json.Marshal(next)
	var cur map[string]json.RawMessage
	_ = json.Unmarshal(b, &cur)
	for k := range cur {
		known[k] = true
	}
	for k, v := range patch {
		if !known[k] {
			return nil, apperr.Field(k, "unknown setting")
		}
		cur[k] = v
	}
	b, _ = json.Marshal(cur)
	if err := json.Unmarshal(b, &next); err != nil {
		return nil, apperr.New(400, "invalid_json")
	}
	if err := keepMasked(&s.Get().Payment, &next.Payment); err != nil {
		return nil, err
	}
	if err := keepMaskedAlerts(&s.Get().Alerts, &next.Alerts); err != nil {
		return nil, err
	}
	if err := keepMaskedOAuth(&s.Get().OAuth, &next.OAuth); err != nil {
		return nil, err
	}
	if err := keepMaskedCaptcha(&s.Get().Captcha, &next.Captcha); err != nil {
		return nil, err
	}
	if err := validate(&next); err != nil {
		return nil, err
	}
	opts := make([]model.Option, 0, len(patch))
	for k := range patch {
		v, err := s.sealOptions(&next, k)
		if err != nil {
			return nil, err
		}
		opts = append(opts, model.Option{Key: k, Value: string(v)})
	}
	if err := s.store.UpsertOptions(ctx, opts); err != nil {
		return nil, fmt.Errorf("save settings: %w", err)
	}
	s.cur.Store(&next)
	_ = s.bus.Publish(ctx, Topic, "")
	return &next, nil
}

// detach gives st its own copies of the snapshot's slices.
func detach(st *Settings) {
	st.ErrorRules = append([]ErrorRule(nil), st.ErrorRules...)
	st.Payment.Presets = append([]string(nil), st.Payment.Presets...)
	st.Payment.Bonus = append([]BonusTier(nil), st.Payment.Bonus...)
	st.Payment.Epay.Methods = append([]string(nil), st.Payment.Epay.Methods...)
	detachAlerts(&st.Alerts)
	detachOAuth(&st.OAuth)
}

func field(s Settings, key string) json.RawMessage {
	b, _ := json.Marshal(s)
	var m map[string]json.RawMessage
	_ = json.Unmarshal(b, &m)
	return m[key]
}

func validate(s *Settings) error {
	switch {
	case len(s.SiteName) > 64:
		return apperr.Field("site_name", "at most 64 characters")
	case !validBaseURL(s.PublicBaseURL):
		return apperr.Field("public_base_url", "an http(s) URL like https://api.example.com, without path, query or fragment")
	case len(s.Notice) > 4000:
		return apperr.Field("notice", "at most 4000 characters")
	case s.UnknownModelPolicy != "refuse" && s.UnknownModelPolicy != "default":
		return apperr.Field("unknown_model_policy", `must be "refuse" or "default"`)
	case s.NewUserQuota < 0:
		return apperr.Field("new_user_quota", "must not be negative")
	case s.EstimateOutputTokens < 0 || s.EstimateOutputTokens > 1_000_000:
		return apperr.Field("estimate_output_tokens", "must be between 0 and 1000000")
	case s.RetryBudget < 0 || s.RetryBudget > 10:
		return apperr.Field("retry_budget", "must be between 0 and 10")
	case s.ChannelTestInterval < 0 || s.ChannelTestInterval > 86400:
		return apperr.Field("channel_test_interval", "seconds between 0 and 86400")
	case s.RequestDeadline < 1 || s.RequestDeadline > 86400:
		return apperr.Field("request_deadline", "seconds between 1 and 86400")
	case s.FirstByteBudget < 1 || s.FirstByteBudget > 86400:
		return apperr.Field("first_byte_budget", "seconds between 1 and 86400")
	case s.RecoveryRamp < 0 || s.RecoveryRamp > 3600:
		return apperr.Field("recovery_ramp", "seconds between 0 and 3600")
	case s.SignupRateLimit < 0 || s.SignupRateLimit > 100000:
		return apperr.Field("signup_rate_limit", "sign-ups per IP per hour between 0 and 100000")
	case len(s.ErrorRules) > 200:
		return apperr.Field("error_rules", "at most 200 rules")
	case s.DefaultGroup == "":
		return apperr.Field("default_group", "required")
	}
	if err := validatePayment(&s.Payment); err != nil {
		return err
	}
	if err := validateUploads(s); err != nil {
		return err
	}
	if err := validateRateLimits(s); err != nil {
		return err
	}
	if err := validateLogRetention(s); err != nil {
		return err
	}
	for _, r := range s.ErrorRules {
		if strings.TrimSpace(r.Contains) == "" || len(r.Contains) > 200 || !ErrorClasses[r.Class] || (r.Status != 0 && (r.Status < 100 || r.Status > 599)) {
			return apperr.Field("error_rules", "each rule needs contains (1-200 chars), a known class and an optional status 100-599")
		}
	}
	if err := validateInvite(s); err != nil {
		return err
	}
	if err := validateAlerts(&s.Alerts); err != nil {
		return err
	}
	if err := validateOAuth(&s.OAuth); err != nil {
		return err
	}
	return validateSignin(s)
}

// validBaseURL accepts "" or an absolute http(s) URL of a host (and port) alone: snippets append /v1 to it.
func validBaseURL(v string) bool {
	if v == "" {
		return true
	}
	u, err := url.Parse(v)
	return err == nil && len(v) <= 255 && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" &&
		u.User == nil && u.Path == "" && u.RawQuery == "" && u.Fragment == "" && !u.ForceQuery
}

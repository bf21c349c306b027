package channel

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/audit"
	"tollgate/service/pricing"
	"tollgate/service/secret"
)

// Input is a channel as the admin API reads it; nil fields stay unchanged on update.
type Input struct {
	Type              *string                 `json:"type"`
	Name              *string                 `json:"name"`
	BaseURL           *string                 `json:"base_url"`
	Keys              *[]string               `json:"keys"`
	KeyStrategy       *string                 `json:"key_strategy"`
	Models            *[]string               `json:"models"`
	ModelMapping      *map[string]string      `json:"model_mapping"`
	Groups            *[]string               `json:"groups"`
	Priority          *int64                  `json:"priority"`
	Weight            *int                    `json:"weight"`
	Status            *string                 `json:"status"`
	HeaderOverride    *map[string]string      `json:"header_override"`
	BodyOverride      *model.BodyOverride     `json:"body_override"`
	StatusCodeMapping *map[string]int         `json:"status_code_mapping"`
	TestModel         *string                 `json:"test_model"`
	Timeouts          *model.Timeouts         `json:"timeouts"`
	Tag               *string                 `json:"tag"`
	Breaker           *model.BreakerOverrides `json:"breaker"`
	HeaderPassthrough *[]string               `json:"header_passthrough"`
	// MaxConcurrency and KeyMaxConcurrency cap in-flight upstream requests per node (0 = none).
	MaxConcurrency    *int `json:"max_concurrency"`
	KeyMaxConcurrency *int `json:"key_max_concurrency"`
	// CostPrice is what the upstream charges (USD per 1M tokens / per call; all empty = none), CostRatio a
	// multiple of the sell price instead ("" = none), CostPrices per-model prices that override either.
	CostPrice  *pricing.CostPriceRow            `json:"cost_price"`
	CostRatio  *string                          `json:"cost_ratio"`
	CostPrices *map[string]pricing.CostPriceRow `json:"cost_prices"`
	// Config is the type-specific settings (azure, vertex, bedrock, preset); checked against the type.
	Config *model.ChannelConfig `json:"config"`
}

// View is a channel as the admin API shows it: keys masked.
type View struct {
	ID                int64                  `json:"id"`
	Type              string                 `json:"type"`
	Name              string                 `json:"name"`
	BaseURL           string                 `json:"base_url"`
	Keys              []string               `json:"keys"`
	KeyStrategy       string                 `json:"key_strategy"`
	Models            []string               `json:"models"`
	ModelMapping      map[string]string      `json:"model_mapping"`
	Groups            []string               `json:"groups"`
	Priority          int64                  `json:"priority"`
	Weight            int                    `json:"weight"`
	Status            string                 `json:"status"`
	HeaderOverride    map[string]string      `json:"header_override"`
	BodyOverride      model.BodyOverride     `json:"body_override"`
	StatusCodeMapping map[string]int         `json:"status_code_mapping"`
	TestModel         string                 `json:"test_model"`
	Timeouts          model.Timeouts         `json:"timeouts"`
	Tag               string                 `json:"tag"`
	Breaker           model.BreakerOverrides `json:"breaker"`
	HeaderPassthrough []string               `json:"header_passthrough"`
	MaxConcurrency    int                    `json:"max_concurrency"`
	KeyMaxConcurrency int                    `json:"key_max_concurrency"`
	// CostPrice and CostRatio are null when not set; CostPrices is {} without overrides.
	CostPrice  *model.CostPrice           `json:"cost_price"`
	CostRatio  *decimal.Decimal           `json:"cost_ratio"`
	CostPrices map[string]model.CostPrice `json:"cost_prices"`
	Config     model.ChannelConfig        `json:"config"`
	CreatedAt  time.Time                  `json:"created_at"`
	Health     any                        `json:"health,omitempty"`
}

// ViewOf renders a snapshot channel for the API.
func ViewOf(c *Channel) *View {
	v := &View{ID: c.ID, Type: c.Type, Name: c.Name, BaseURL: c.BaseURL, KeyStrategy: c.KeyStrategy,
		Models: nonNil(c.Models.V), ModelMapping: c.ModelMapping.V, Groups: nonNil(c.Groups.V), Priority: c.Priority,
		Weight: c.Weight, Status: c.Status, HeaderOverride: maskHeaders(c.HeaderOverride), BodyOverride: c.BodyOverride.V,
		StatusCodeMapping: c.StatusCodeMapping.V, TestModel: c.TestModel, Timeouts: c.Timeouts.V, Tag: c.Tag,
		Breaker: c.Breaker.V, HeaderPassthrough: nonNil(c.HeaderPassthrough.V), CreatedAt: c.CreatedAt,
		MaxConcurrency: c.MaxConcurrency, KeyMaxConcurrency: c.KeyMaxConcurrency, Config: c.Config.V}
	v.Keys = make([]string, len(c.Keys))
	for i, k := range c.Keys {
		v.Keys[i] = secret.Mask(k)
	}
	if v.ModelMapping == nil {
		v.ModelMapping = map[string]string{}
	}
	if v.StatusCodeMapping == nil {
		v.StatusCodeMapping = map[string]int{}
	}
	v.CostPrice, v.CostPrices = c.CostPrice.V, c.CostPrices.V
	if c.CostRatio.Valid {
		r := c.CostRatio.Decimal
		v.CostRatio = &r
	}
	if v.CostPrices == nil {
		v.CostPrices = map[string]model.CostPrice{}
	}
	return v
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func cleanList(field string, in []string, max, maxLen int) ([]string, error) {
	if len(in) > max {
		return nil, apperr.Field(field, fmt.Sprintf("at most %d entries", max))
	}
	seen := map[string]bool{}
	out := make([]string, 0, len(in))
	for _, s := range in {
		s = strings.TrimSpace(s)
		if s == "" || seen[s] {
			continue
		}
		if len(s) > maxLen {
			return nil, apperr.Field(field, fmt.Sprintf("each entry at most %d characters", maxLen))
		}
		seen[s] = true
		out = append(out, s)
	}
	return out, nil
}

// unmask replaces masked keys sent back unchanged with the stored keys they stand for, before duplicates are
// dropped: several stored keys can share one mask (same head and tail), so each stored key stands for one
// masked entry, in order. A mask that matches no stored key is left masked (and refused by the caller).
func unmask(in, old []string) []string {
	used := make([]bool, len(old))
	out := make([]string, len(in))
	for i, k := range in {
		out[i] = k
		k = strings.TrimSpace(k)
		if !strings.Contains(k, "****") {
			continue
		}
		match := -1
		for j, o := range old {
			if secret.Mask(o) == k && (match < 0 || (used[match] && !used[j])) {
				match = j
			}
		}
		if match >= 0 {
			out[i], used[match] = old[match], true
		}
	}
	return out
}

// apply validates in and writes it onto row; old and oldHeaders hold the clear keys and header values that
// masked entries stand for.
func (s *Service) apply(row *model.Channel, old []string, oldHeaders map[string]string, in Input) error {
	if in.Type != nil {
		if !slices.Contains(s.Types, *in.Type) {
			return apperr.Field("type", "must be one of "+strings.Join(s.Types, ", "))
		}
		row.Type = *in.Type
	}
	if in.Name != nil {
		n := strings.TrimSpace(*in.Name)
		if n == "" || len(n) > 128 {
			return apperr.Field("name", "1-128 characters")
		}
		row.Name = n
	}
	if in.BaseURL != nil && strings.TrimSpace(*in.BaseURL) == "" {
		row.BaseURL = "" // the type's default, if it has one (checkConfig)
	} else if in.BaseURL != nil {
		u, err := url.Parse(strings.TrimSpace(*in.BaseURL))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(*in.BaseURL) > 512 {
			return apperr.Field("base_url", "an http(s) URL")
		}
		row.BaseURL = strings.TrimRight(u.String(), "/")
	}
	clearKeys := old
	if in.Keys != nil {
		keys, err := cleanList("keys", unmask(*in.Keys, old), 1000, 8192)
		if err != nil {
			return err
		}
		sealed := make([]string, 0, len(keys))
		for _, k := range keys {
			if strings.Contains(k, "****") {
				return apperr.Field("keys", "a masked key does not match any stored key")
			}
			enc, err := s.keys.Encrypt(k)
			if err != nil {
				return err
			}
			sealed = append(sealed, enc)
		}
		row.KeysCipher.V, clearKeys = sealed, keys
	}
	if in.KeyStrategy != nil {
		if *in.KeyStrategy != "random" && *in.KeyStrategy != "round_robin" {
			return apperr.Field("key_strategy", `must be "random" or "round_robin"`)
		}
		row.KeyStrategy = *in.KeyStrategy
	}
	if in.Models != nil {
		ms, err := cleanList("models", *in.Models, 2000, 128)
		if err != nil {
			return err
		}
		row.Models.V = ms
	}
	if in.ModelMapping != nil {
		for k, v := range *in.ModelMapping {
			if k == "" || v == "" || len(k) > 128 || len(v) > 128 {
				return apperr.Field("model_mapping", "names of 1-128 characters")
			}
		}
		row.ModelMapping.V = *in.ModelMapping
	}
	if in.Groups != nil {
		gs, err := cleanList("groups", *in.Groups, 100, 64)
		if err != nil {
			return err
		}
		row.Groups.V = gs
	}
	if in.Priority != nil {
		row.Priority = *in.Priority
	}
	for _, f := range []struct {
		name string
		in   *int
		out  *int
	}{{"max_concurrency", in.MaxConcurrency, &row.MaxConcurrency}, {"key_max_concurrency", in.KeyMaxConcurrency, &row.KeyMaxConcurrency}} {
		if f.in != nil {
			if *f.in < 0 || *f.in > 100_000 {
				return apperr.Field(f.name, "between 0 (no cap) and 100000")
			}
			*f.out = *f.in
		}
	}
	if in.Weight != nil {
		if *in.Weight < 0 || *in.Weight > 10000 {
			return apperr.Field("weight", "between 0 and 10000")
		}
		row.Weight = *in.Weight
	}
	if in.Status != nil {
		if *in.Status != model.StatusEnabled && *in.Status != model.StatusDisabled {
			return apperr.Field("status", `must be "enabled" or "disabled"`)
		}
		row.Status = *in.Status
	}
	if in.HeaderOverride != nil {
		for k := range *in.HeaderOverride {
			if k == "" || strings.ContainsAny(k, " :\r\n") {
				return apperr.Field("header_override", "invalid header name")
			}
		}
		clear, err := unmaskHeaders(*in.HeaderOverride, oldHeaders)
		if err != nil {
			return err
		}
		if row.HeadersSealed.V, err = s.sealHeaders(clear); err != nil {
			return err
		}
	}
	if in.HeaderPassthrough != nil {
		names, err := passthroughNames(*in.HeaderPassthrough)
		if err != nil {
			return err
		}
		row.HeaderPassthrough.V = names
	}
	if in.BodyOverride != nil {
		row.BodyOverride.V = *in.BodyOverride
	}
	if in.StatusCodeMapping != nil {
		for k, v := range *in.StatusCodeMapping {
			if n, err := strconv.Atoi(k); err != nil || n < 100 || n > 599 || v < 100 || v > 599 {
				return apperr.Field("status_code_mapping", "HTTP status codes 100-599")
			}
		}
		row.StatusCodeMapping.V = *in.StatusCodeMapping
	}
	if in.TestModel != nil {
		row.TestModel = strings.TrimSpace(*in.TestModel)
	}
	if in.Timeouts != nil {
		t := *in.Timeouts
		for _, v := range []int{t.ConnectMs, t.FirstByteMs, t.IdleMs, t.TotalMs} {
			if v < 0 || v > 3_600_000 {
				return apperr.Field("timeouts", "milliseconds between 0 and 3600000")
			}
		}
		row.Timeouts.V = t
	}
	if b := in.Breaker; b != nil {
		if b.MinRequests < 0 || b.ConsecutiveFails < 0 || b.BaseCooldownMs < 0 || b.MaxCooldownMs < 0 ||
			b.HalfOpenProbes < 0 || b.CloseAfter < 0 || b.FailureRatio < 0 || b.FailureRatio > 1 ||
			b.MinRequests > 100000 || b.ConsecutiveFails > 100000 || b.HalfOpenProbes > 1000 || b.CloseAfter > 1000 ||
			b.BaseCooldownMs > 86_400_000 || b.MaxCooldownMs > 86_400_000 {
			return apperr.Field("breaker", "non-negative thresholds, failure_ratio between 0 and 1, cooldowns up to a day")
		}
		row.Breaker.V = *b
	}
	if in.Tag != nil {
		if len(*in.Tag) > 64 {
			return apperr.Field("tag", "at most 64 characters")
		}
		row.Tag = *in.Tag
	}
	if in.Config != nil {
		row.Config.V = *in.Config
	}
	if err := s.checkConfig(row, clearKeys); err != nil {
		return err
	}
	return applyCost(row, in)
}

// applyCost validates and writes the upstream cost terms: a price for every model or a ratio of the sell
// price (not both), and per-model prices (at most 2000 models, names of 1-128 characters).
func applyCost(row *model.Channel, in Input) error {
	if in.CostPrice != nil {
		p, err := pricing.ParseCostPrice("cost_price", *in.CostPrice)
		if err != nil {
			return err
		}
		row.CostPrice.V = nil
		if !pricing.IsZeroCost(p) {
			row.CostPrice.V = &p
		}
	}
	if in.CostRatio != nil {
		r, err := pricing.ParseCostRatio("cost_ratio", *in.CostRatio)
		if err != nil {
			return err
		}
		row.CostRatio = r
	}
	if row.CostPrice.V != nil && row.CostRatio.Valid {
		return apperr.Field("cost_ratio", "either cost_price or cost_ratio, not both (send the other one empty)")
	}
	if in.CostPrices != nil {
		if len(*in.CostPrices) > 2000 {
			return apperr.Field("cost_prices", "at most 2000 models")
		}
		out := make(map[string]model.CostPrice, len(*in.CostPrices))
		for name, r := range *in.CostPrices {
			if name == "" || len(name) > 128 || strings.TrimSpace(name) != name {
				return apperr.Field("cost_prices", "model names of 1-128 characters, without surrounding spaces")
			}
			p, err := pricing.ParseCostPrice("cost_prices."+name, r)
			if err != nil {
				return err
			}
			out[name] = p
		}
		row.CostPrices.V = out
	}
	return nil
}

// Create adds a channel.
func (s *Service) Create(ctx context.Context, actor audit.Actor, in Input) (*View, error) {
	for f, missing := range map[string]bool{"type": in.Type == nil, "name": in.Name == nil, "keys": in.Keys == nil || len(*in.Keys) == 0} {
		if missing {
			return nil, apperr.Field(f, "required")
		}
	}
	row := &model.Channel{KeyStrategy: "random", Weight: 1, Status: model.StatusEnabled}
	row.Groups.V = []string{"default"}
	if err := s.apply(row, nil, nil, in); err != nil {
		return nil, err
	}
	if len(row.KeysCipher.V) == 0 {
		return nil, apperr.Field("keys", "required")
	}
	if err := s.store.SaveChannel(ctx, row); err != nil {
		return nil, fmt.Errorf("create channel: %w", err)
	}
	s.audit.Record(ctx, actor, "channel.create", row.Name, map[string]any{"id": row.ID, "type": row.Type, "base_url": row.BaseURL})
	s.changed(ctx, row.ID)
	return s.Get(ctx, row.ID)
}

// Get returns one channel from the snapshot.
func (s *Service) Get(_ context.Context, id int64) (*View, error) {
	c, ok := s.Snapshot().ByID[id]
	if !ok {
		return nil, apperr.New(http.StatusNotFound, "channel_not_found")
	}
	return ViewOf(c), nil
}

// Update edits a channel.
func (s *Service) Update(ctx context.Context, actor audit.Actor, id int64, in Input) (*View, error) {
	row, err := s.store.ChannelByID(ctx, id)
	if errors.Is(err, model.ErrNotFound) {
		return nil, apperr.New(http.StatusNotFound, "channel_not_found")
	} else if err != nil {
		return nil, err
	}
	var old []string
	var oldHeaders map[string]string
	if c, ok := s.Snapshot().ByID[id]; ok {
		old, oldHeaders = c.Keys, c.HeaderOverride
	}
	if err := s.apply(row, old, oldHeaders, in); err != nil {
		return nil, err
	}
	if len(row.KeysCipher.V) == 0 {
		return nil, apperr.Field("keys", "at least one key")
	}
	if err := s.store.SaveChannel(ctx, row); err != nil {
		return nil, fmt.Errorf("update channel %d: %w", id, err)
	}
	s.audit.Record(ctx, actor, "channel.update", row.Name, map[string]any{"id": id})
	s.changed(ctx, id)
	return s.Get(ctx, id)
}

// SetStatus changes a channel's status (admin toggle or automatic disable) and tells every node.
func (s *Service) SetStatus(ctx context.Context, id int64, status string) error {
	if err := s.store.SetChannelStatus(ctx, id, status); err != nil {
		return err
	}
	s.changed(ctx, id)
	return nil
}

// Delete removes a channel.
func (s *Service) Delete(ctx context.Context, actor audit.Actor, id int64) error {
	if err := s.store.DeleteChannel(ctx, id); errors.Is(err, model.ErrNotFound) {
		return apperr.New(http.StatusNotFound, "channel_not_found")
	} else if err != nil {
		return err
	}
	s.audit.Record(ctx, actor, "channel.delete", strconv.FormatInt(id, 10), nil)
	s.changed(ctx, id)
	return nil
}

// Filter narrows List; Group and Model are matched on the snapshot.
type Filter struct {
	model.ChannelFilter
	Group, Model string
}

// List returns channels matching f, paged.
func (s *Service) List(ctx context.Context, f Filter, p model.Page) ([]*View, int64, error) {
	rows, err := s.store.ListChannels(ctx, f.ChannelFilter)
	if err != nil {
		return nil, 0, err
	}
	snap := s.Snapshot()
	var out []*View
	for _, r := range rows {
		c, ok := snap.ByID[r.ID]
		if !ok {
			continue
		}
		if f.Model != "" && !c.Serves(f.Model) {
			continue
		}
		if f.Group != "" && !contains(c.Groups.V, f.Group) {
			continue
		}
		out = append(out, ViewOf(c))
	}
	total := int64(len(out))
	lo := min(p.Offset(), len(out))
	hi := min(lo+p.Size, len(out))
	return out[lo:hi], total, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// neverPassed are the client headers a channel may not forward: the caller's credentials for the gateway
// (the upstream gets the channel's own), cookies, and what the HTTP client sets itself.
var neverPassed = []string{"Authorization", "X-Api-Key", "X-Goog-Api-Key", "Api-Key", "Cookie", "Proxy-Authorization",
	"Host", "Content-Length", "Content-Type", "Content-Encoding", "Transfer-Encoding", "Connection", "Keep-Alive",
	"Upgrade", "Te", "Trailer", "Accept-Encoding", "X-Forwarded-For", "X-Real-Ip", "Forwarded"}

// passthroughNames validates a header pass-through allowlist: header names (at most 32, each once, case
// folded), none of neverPassed.
func passthroughNames(in []string) ([]string, error) {
	if len(in) > 32 {
		return nil, apperr.Field("header_passthrough", "at most 32 headers")
	}
	out := []string{}
	for _, n := range in {
		n = strings.TrimSpace(n)
		if n == "" || len(n) > 64 || strings.ContainsFunc(n, func(r rune) bool {
			return r <= ' ' || r >= 0x7f || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", r)
		}) {
			return nil, apperr.Field("header_passthrough", "invalid header name")
		}
		c := http.CanonicalHeaderKey(n)
		if slices.Contains(neverPassed, c) {
			return nil, apperr.Field("header_passthrough", c+" is never forwarded")
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

package routing

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/audit"
	"tollgate/service/book"
	"tollgate/service/bus"
)

// Strategies by name.
const (
	StrategyPriority    = "priority"
	StrategyPerformance = "performance"
	StrategyCost        = "cost"
	StrategyBalanced    = "balanced"
	StrategyRoundRobin  = "round_robin"
	StrategyLeastBusy   = "least_busy"
)

// Strategies lists every strategy name.
var Strategies = []string{StrategyPriority, StrategyPerformance, StrategyCost, StrategyBalanced, StrategyRoundRobin, StrategyLeastBusy}

func knownStrategy(s string) bool {
	for _, x := range Strategies {
		if x == s {
			return true
		}
	}
	return false
}

// Defaults are the built-in tuning under the global row (group and model "*").
var Defaults = model.RouteTuning{
	Strategy:         StrategyPriority,
	Weights:          model.RouteWeights{Latency: 0.3, Success: 0.4, Cost: 0.3},
	MinSamples:       20,
	FailureThreshold: 0.5,
	RecoveryS:        60,
	TopK:             3,
	MinShare:         0.05,
	Temperature:      0.05,
	Explore:          0.1,
	LatencyRefMs:     1000,
	CostRef:          10,
	LiveWeight:       0.3,
}

// Any is the group and model of the global row.
const Any = "*"

// ConfigTopic is the bus topic of routing configuration changes.
const ConfigTopic = "routing_config"

// Configs is the per group × model routing configuration, served from a snapshot every node reloads.
type Configs struct {
	store *model.Store
	bus   bus.Bus
	audit *audit.Log
	book  *book.Book[model.RoutingConfig]
	rows  atomic.Pointer[rowIndex]
}

// rowIndex is the book keyed without string building (Tuning runs on the request path).
type rowIndex struct {
	of   *map[string]model.RoutingConfig
	rows map[[2]string]model.RouteTuning
}

func configKey(group, m string) string { return group + "\x00" + m }

// NewConfigs builds the book; call Load before serving.
func NewConfigs(store *model.Store, b bus.Bus, a *audit.Log) *Configs {
	c := &Configs{store: store, bus: b, audit: a}
	c.book = book.New("routing configs", b, ConfigTopic, store.ListRoutingConfigs,
		func(x *model.RoutingConfig) string { return configKey(x.Group, x.Model) })
	return c
}

// Load refreshes the snapshot from SQL.
func (c *Configs) Load(ctx context.Context) error { return c.book.Load(ctx) }

// List returns every row.
func (c *Configs) List(ctx context.Context) ([]model.RoutingConfig, error) {
	return c.store.ListRoutingConfigs(ctx)
}

// Tuning is the effective configuration for group × model: the row's fields over group × "*", "*" × model,
// the global row and the built-in Defaults, field by field.
func (c *Configs) Tuning(group, m string) model.RouteTuning {
	t := Defaults
	if c == nil {
		return t
	}
	cur := c.book.Current()
	ix := c.rows.Load()
	if ix == nil || ix.of != cur {
		ix = &rowIndex{of: cur, rows: make(map[[2]string]model.RouteTuning, len(*cur))}
		for _, r := range *cur {
			ix.rows[[2]string{r.Group, r.Model}] = r.Tuning.V
		}
		c.rows.Store(ix)
	}
	if len(ix.rows) == 0 {
		return t
	}
	for _, k := range [...][2]string{{Any, Any}, {Any, m}, {group, Any}, {group, m}} {
		if row, ok := ix.rows[k]; ok {
			overlay(&t, row)
		}
	}
	return t
}

func overlay(t *model.RouteTuning, o model.RouteTuning) {
	if o.Strategy != "" {
		t.Strategy = o.Strategy
	}
	if w := o.Weights; w.Latency+w.Success+w.Cost > 0 {
		t.Weights = w
	}
	setInt := func(dst *int, v int) {
		if v > 0 {
			*dst = v
		}
	}
	setF := func(dst *float64, v float64) {
		if v > 0 {
			*dst = v
		}
	}
	setInt(&t.MinSamples, o.MinSamples)
	setF(&t.FailureThreshold, o.FailureThreshold)
	setInt(&t.RecoveryS, o.RecoveryS)
	setInt(&t.MaxAttempts, o.MaxAttempts)
	setInt(&t.TopK, o.TopK)
	setF(&t.MinShare, o.MinShare)
	setF(&t.Temperature, o.Temperature)
	setF(&t.Explore, o.Explore)
	setF(&t.LatencyRefMs, o.LatencyRefMs)
	setF(&t.CostRef, o.CostRef)
	setF(&t.LiveWeight, o.LiveWeight)
}

// Validate checks a tuning row; errors name the field.
func Validate(t model.RouteTuning) error {
	if t.Strategy != "" && !knownStrategy(t.Strategy) {
		return apperr.Field("strategy", "one of priority, performance, cost, balanced, round_robin, least_busy")
	}
	for name, v := range map[string]float64{"weights.latency": t.Weights.Latency, "weights.success": t.Weights.Success,
		"weights.cost": t.Weights.Cost, "failure_threshold": t.FailureThreshold, "min_share": t.MinShare,
		"explore": t.Explore, "live_weight": t.LiveWeight} {
		if v < 0 || v > 1 {
			return apperr.Field(name, "0 … 1")
		}
	}
	for name, v := range map[string]int{"min_samples": t.MinSamples, "recovery_s": t.RecoveryS, "max_attempts": t.MaxAttempts, "top_k": t.TopK} {
		if v < 0 || v > 100000 {
			return apperr.Field(name, "0 … 100000")
		}
	}
	if t.MaxAttempts > 10 {
		return apperr.Field("max_attempts", "0 … 10")
	}
	if t.TopK > 0 && float64(t.TopK)*t.MinShare > 1 {
		return apperr.Field("min_share", "top_k × min_share ≤ 1")
	}
	if t.Temperature < 0 || t.Temperature > 10 {
		return apperr.Field("temperature", "0 … 10")
	}
	if t.LatencyRefMs < 0 || t.LatencyRefMs > 3600000 {
		return apperr.Field("latency_ref_ms", "0 … 3600000")
	}
	if t.CostRef < 0 || t.CostRef > 1e6 {
		return apperr.Field("cost_ref", "0 … 1000000")
	}
	return nil
}

// Put saves group × model's tuning ("*" for either means every group or model).
func (c *Configs) Put(ctx context.Context, actor audit.Actor, group, m string, t model.RouteTuning) (*model.RoutingConfig, error) {
	if group == "" || len(group) > 64 {
		return nil, apperr.Field("group", "1-64 characters, or *")
	}
	if m == "" || len(m) > 128 {
		return nil, apperr.Field("model", "1-128 characters, or *")
	}
	if err := Validate(t); err != nil {
		return nil, err
	}
	row := &model.RoutingConfig{Group: group, Model: m, Tuning: model.JSON[model.RouteTuning]{V: t}, UpdatedAt: time.Now().UTC()}
	if err := c.store.SaveRoutingConfig(ctx, row); err != nil {
		return nil, err
	}
	c.changed(ctx, actor, "routing.config.put", group+"/"+m, t)
	return row, nil
}

// Delete removes group × model's row.
func (c *Configs) Delete(ctx context.Context, actor audit.Actor, group, m string) error {
	if _, ok := c.book.Get(configKey(group, m)); !ok {
		return apperr.New(http.StatusNotFound, "not_found")
	}
	if err := c.store.DeleteRoutingConfig(ctx, group, m); err != nil {
		return err
	}
	c.changed(ctx, actor, "routing.config.delete", group+"/"+m, nil)
	return nil
}

func (c *Configs) changed(ctx context.Context, actor audit.Actor, action, target string, detail any) {
	if c.audit != nil {
		c.audit.Record(ctx, actor, action, target, detail)
	}
	_ = c.Load(ctx)
	_ = c.bus.Publish(ctx, ConfigTopic, "")
}

package controller

import (
	"context"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"tollgate/middleware"
	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/audit"
	"tollgate/service/channel"
	"tollgate/service/fleet"
	"tollgate/service/health"
	"tollgate/service/secret"
)

// ChannelTester runs channel tests (implemented by the relay's prober).
type ChannelTester interface {
	TestChannel(ctx context.Context, ch *channel.Channel, model string, key int, actorID int64) channel.TestResult
	StartJob(chs []*channel.Channel, actorID int64) *channel.TestJob
	Job(id string) *channel.TestJob
}

// HealthReader reports live channel health (implemented by service/health).
type HealthReader interface {
	Snapshot(channelID int64, keys int) health.ChannelHealth
}

// healthSummary is what the channel list shows per row.
type healthSummary struct {
	State       string  `json:"state"`
	SuccessRate float64 `json:"success_rate"`
	LatencyMs   float64 `json:"latency_ms"`
	// Requests1h is how many calls (failed tests included) this node saw on the channel in the last hour: with 0 the
	// success rate (1) and latency (0) mean "no data", not "healthy".
	Requests1h int64 `json:"requests_1h"`
	// LastTest is the channel's latest test (any node), shown when there is no live traffic to go by.
	LastTest      *channel.LastTest `json:"last_test,omitempty"`
	FirstByteMs   float64           `json:"first_byte_ms"`
	Active        int64             `json:"active"`
	KeysCooling   int               `json:"keys_cooling"`
	KeysDisabled  int               `json:"keys_disabled"`
	CooldownUntil any               `json:"cooldown_until,omitempty"`
	// Fleet is every node's traffic on the channel over the last hour (service/fleet).
	Fleet *fleet.Stats `json:"fleet_1h,omitempty"`
}

func summarize(ch *channel.Channel, h health.ChannelHealth) healthSummary {
	s := healthSummary{State: string(h.State), SuccessRate: h.Metrics.SuccessRate, LatencyMs: h.Metrics.LatencyEWMAms,
		FirstByteMs: h.Metrics.FirstByteEWMAms, Active: h.Metrics.Active, Requests1h: h.Metrics.Counts["1h"].Total}
	if h.CooldownUntil != nil {
		s.CooldownUntil = h.CooldownUntil
	}
	if ch.Status != model.StatusEnabled {
		s.State = "disabled"
	}
	for _, k := range h.Keys {
		switch k.State {
		case "cooling":
			s.KeysCooling++
		case "disabled":
			s.KeysDisabled++
		}
	}
	return s
}

func (h *Channels) channelOr404(c *gin.Context) (*channel.Channel, bool) {
	return channelOr404(c, h.Channels)
}

// channelOr404 finds the :id channel in the routing snapshot or answers 404.
func channelOr404(c *gin.Context, svc *channel.Service) (*channel.Channel, bool) {
	id, ok := idParam(c, "channel_not_found")
	if !ok {
		return nil, false
	}
	ch, found := svc.Snapshot().ByID[id]
	if !found {
		middleware.Fail(c, apperr.New(http.StatusNotFound, "channel_not_found"))
		return nil, false
	}
	return ch, true
}

// Test handles POST /api/admin/channels/:id/test {model?, key?}.
func (h *Channels) Test(c *gin.Context) {
	ch, ok := h.channelOr404(c)
	if !ok {
		return
	}
	in := struct {
		Model string `json:"model"`
		Key   *int   `json:"key"`
	}{}
	if c.Request.ContentLength != 0 && !middleware.Bind(c, &in) {
		return
	}
	key := -1
	if in.Key != nil {
		if *in.Key < 0 || *in.Key >= len(ch.Keys) {
			middleware.Fail(c, apperr.Field("key", "no such key index"))
			return
		}
		key = *in.Key
	}
	c.JSON(http.StatusOK, h.Tester.TestChannel(c.Request.Context(), ch, in.Model, key, middleware.User(c).ID))
}

// TestMany handles POST /api/admin/channels/test {ids?, status?}: a background job with progress.
func (h *Channels) TestMany(c *gin.Context) {
	in := struct {
		IDs    []int64 `json:"ids"`
		Status string  `json:"status"`
	}{}
	if c.Request.ContentLength != 0 && !middleware.Bind(c, &in) {
		return
	}
	snap := h.Channels.Snapshot()
	var chs []*channel.Channel
	if len(in.IDs) > 0 {
		for _, id := range in.IDs {
			if ch, ok := snap.ByID[id]; ok {
				chs = append(chs, ch)
			}
		}
	} else {
		for _, ch := range snap.ByID {
			if in.Status == "" || ch.Status == in.Status {
				chs = append(chs, ch)
			}
		}
	}
	c.JSON(http.StatusAccepted, h.Tester.StartJob(chs, middleware.User(c).ID))
}

// TestJob handles GET /api/admin/channels/test/:job.
func (h *Channels) TestJob(c *gin.Context) {
	j := h.Tester.Job(c.Param("job"))
	if j == nil {
		middleware.Fail(c, apperr.New(http.StatusNotFound, "not_found"))
		return
	}
	c.JSON(http.StatusOK, j)
}

// Health handles GET /api/admin/channels/:id/health.
func (h *Channels) Health(c *gin.Context) {
	ch, ok := h.channelOr404(c)
	if !ok {
		return
	}
	v := healthView(ch, h.HealthOf.Snapshot(ch.ID, len(ch.Keys)))
	if f := fleetOf(c.Request.Context(), h.Fleet, ch.ID); f != nil {
		v["fleet"] = f
	}
	c.JSON(http.StatusOK, v)
}

// healthView is the health drawer's shape: the tracker's snapshot with masked keys and the channel's status.
func healthView(ch *channel.Channel, snap health.ChannelHealth) gin.H {
	keys := make([]gin.H, len(snap.Keys))
	for i, k := range snap.Keys {
		masked := ""
		if k.Index >= 0 && k.Index < len(ch.Keys) {
			masked = secret.Mask(ch.Keys[k.Index])
		}
		keys[i] = gin.H{"index": k.Index, "masked": masked, "state": k.State, "cooldown_until": k.CooldownUntil,
			"last_error": k.LastError, "forced": k.Forced, "metrics": k.Metrics}
	}
	out := gin.H{"state": snap.State, "cooldown_until": snap.CooldownUntil, "trips": snap.Trips, "keys": keys,
		"metrics": snap.Metrics, "unsupported_models": snap.UnsupportedModels, "status": ch.Status,
		"forced": snap.Forced, "recovered_at": snap.RecoveredAt}
	if ch.Status != model.StatusEnabled {
		out["state"] = "disabled"
	}
	return out
}

// BreakerControl forces breakers and reports the result (implemented by service/health).
type BreakerControl interface {
	HealthReader
	Force(channelID int64, key int, action string) error
}

// Breakers serves the admin's breaker control.
type Breakers struct {
	Channels *channel.Service
	Health   BreakerControl
	Audit    *audit.Log
}

// Force handles POST /api/admin/channels/:id/breaker {action: open|close|half_open|reset, key_index?}: the
// channel's breaker, or one key's with key_index, on every node; answers the channel's health view.
func (h *Breakers) Force(c *gin.Context) {
	ch, ok := channelOr404(c, h.Channels)
	if !ok {
		return
	}
	in := struct {
		Action   string `json:"action"`
		KeyIndex *int   `json:"key_index"`
	}{}
	if !middleware.Bind(c, &in) {
		return
	}
	if !health.ValidForce(in.Action) {
		middleware.Fail(c, apperr.Field("action", "must be open, close, half_open or reset"))
		return
	}
	key := -1
	if in.KeyIndex != nil {
		if *in.KeyIndex < 0 || *in.KeyIndex >= len(ch.Keys) {
			middleware.Fail(c, apperr.Field("key_index", "no such key index"))
			return
		}
		key = *in.KeyIndex
	}
	if err := h.Health.Force(ch.ID, key, in.Action); err != nil {
		middleware.Fail(c, err)
		return
	}
	h.Audit.Record(c.Request.Context(), middleware.Actor(c), "channel.breaker", strconv.FormatInt(ch.ID, 10),
		gin.H{"action": in.Action, "key_index": in.KeyIndex})
	c.JSON(http.StatusOK, healthView(ch, h.Health.Snapshot(ch.ID, len(ch.Keys))))
}

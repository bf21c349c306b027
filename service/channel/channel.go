// Package channel manages upstream channels and serves them, with a routing index (group × model → channels
// by priority tier), from a snapshot that every write rebuilds on every node through the bus.
package channel

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	"tollgate/model"
	"tollgate/service/audit"
	"tollgate/service/bus"
	"tollgate/service/secret"
)

// Topic is the bus topic of channel changes.
const Topic = "channel"

// Types of upstream protocol a channel speaks.
const (
	TypeOpenAI           = "openai"
	TypeOpenAICompatible = "openai-compatible"
	TypeAnthropic        = "anthropic"
	TypeGemini           = "gemini" // Google AI Studio (the Gemini API)
)

// Channel is a channel as the relay sees it: the row with decrypted keys and lookup sets.
type Channel struct {
	model.Channel
	Keys []string
	// HeaderOverride is header name → clear value, opened from the sealed column.
	HeaderOverride map[string]string
	models         map[string]bool
	rr             atomic.Uint64
}

// UpstreamModel maps a public model name through the channel's mapping.
func (c *Channel) UpstreamModel(public string) string {
	if m, ok := c.ModelMapping.V[public]; ok && m != "" {
		return m
	}
	return public
}

// Serves reports whether the channel lists the model.
func (c *Channel) Serves(model string) bool { return c.models[model] }

// PickKey chooses a key index by the channel's strategy, skipping indexes in skip.
func (c *Channel) PickKey(rnd func(int) int, skip func(int) bool) (int, bool) {
	n := len(c.Keys)
	if n == 0 {
		return 0, false
	}
	start := rnd(n)
	if c.KeyStrategy == "round_robin" {
		start = int(c.rr.Add(1) % uint64(n))
	}
	for i := 0; i < n; i++ {
		k := (start + i) % n
		if skip == nil || !skip(k) {
			return k, true
		}
	}
	return 0, false
}

// Snapshot is an immutable view of every channel plus the routing index.
type Snapshot struct {
	ByID  map[int64]*Channel
	index map[string]map[string][]*Channel // group → model → enabled channels, priority desc
	known map[string]bool                  // group + "\x00" + model served by any channel, enabled or not
}

// Known reports whether any channel of the group lists the model, even a disabled one (the model exists
// for the caller but is unavailable right now).
func (s *Snapshot) Known(group, model string) bool { return s.known[group+"\x00"+model] }

// Route returns the enabled channels serving model for group, highest priority first.
func (s *Snapshot) Route(group, model string) []*Channel { return s.index[group][model] }

// Models returns the models routable for group, sorted.
func (s *Snapshot) Models(group string) []string {
	out := make([]string, 0, len(s.index[group]))
	for m := range s.index[group] {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// Service is the channel book.
type Service struct {
	// Types are the channel types an admin may create: the adaptor registry's (app/app.go declares each type
	// once, with its adaptor).
	Types []string
	// Presets are the OpenAI-compatible vendor presets (name → default base URL), from the openai adaptor's
	// table (app/app.go), like Types.
	Presets map[string]string
	store   *model.Store
	bus     bus.Bus
	keys    *secret.Keyring
	audit   *audit.Log
	snap    atomic.Pointer[Snapshot]
	onLoad  func(*Snapshot)
	// Loads run at once (an admin change and the bus message it sends, another node's change): loads counts
	// those started, and installed is the start number of the snapshot in force, so a load that read SQL
	// earlier never replaces one that started later (a channel just created then read back as not found).
	loads     atomic.Uint64
	installMu sync.Mutex
	installed uint64
}

// OnLoad registers fn to run after every snapshot rebuild (e.g. to hand per-channel breaker thresholds to the
// health tracker). Set it before Load.
func (s *Service) OnLoad(fn func(*Snapshot)) { s.onLoad = fn }

// New builds the service; call Load before serving.
func New(store *model.Store, b bus.Bus, keys *secret.Keyring, a *audit.Log) *Service {
	s := &Service{store: store, bus: b, keys: keys, audit: a}
	s.snap.Store(&Snapshot{ByID: map[int64]*Channel{}, index: map[string]map[string][]*Channel{}, known: map[string]bool{}})
	b.Subscribe(Topic, func(bus.Message) {
		if err := s.Load(context.Background()); err != nil {
			slog.Error("reload channels", "err", err)
		}
	})
	return s
}

// Snapshot returns the current view (hot path: one atomic load).
func (s *Service) Snapshot() *Snapshot { return s.snap.Load() }

// Load rebuilds the snapshot from SQL.
func (s *Service) Load(ctx context.Context) error {
	seq := s.loads.Add(1)
	rows, err := s.store.AllChannels(ctx)
	if err != nil {
		return fmt.Errorf("load channels: %w", err)
	}
	next := &Snapshot{ByID: make(map[int64]*Channel, len(rows)), index: map[string]map[string][]*Channel{}, known: map[string]bool{}}
	for i := range rows {
		c := &Channel{Channel: rows[i], models: map[string]bool{}}
		for _, sealed := range rows[i].KeysCipher.V {
			k, err := s.keys.Decrypt(sealed)
			if err != nil {
				slog.Error("channel key does not decrypt (SECRET_KEY changed?)", "channel", c.ID)
				continue
			}
			c.Keys = append(c.Keys, k)
		}
		c.HeaderOverride = s.openHeaders(c.ID, rows[i].HeadersSealed.V)
		for _, m := range c.Models.V {
			c.models[m] = true
		}
		next.ByID[c.ID] = c
		for _, g := range c.Groups.V {
			for m := range c.models {
				next.known[g+"\x00"+m] = true
			}
		}
		if c.Status != model.StatusEnabled {
			continue
		}
		for _, g := range c.Groups.V {
			if next.index[g] == nil {
				next.index[g] = map[string][]*Channel{}
			}
			for m := range c.models {
				next.index[g][m] = append(next.index[g][m], c)
			}
		}
	}
	for _, byModel := range next.index {
		for _, list := range byModel {
			sort.SliceStable(list, func(i, j int) bool {
				if list[i].Priority != list[j].Priority {
					return list[i].Priority > list[j].Priority
				}
				return list[i].ID < list[j].ID
			})
		}
	}
	s.installMu.Lock()
	defer s.installMu.Unlock()
	if seq < s.installed {
		return nil // a load that started later is in force already
	}
	s.installed = seq
	s.snap.Store(next)
	if s.onLoad != nil {
		s.onLoad(next)
	}
	return nil
}

func (s *Service) changed(ctx context.Context, id int64) {
	if err := s.Load(ctx); err != nil {
		slog.Error("reload channels", "err", err)
	}
	_ = s.bus.Publish(ctx, Topic, strconv.FormatInt(id, 10))
}

package relay

import (
	"context"
	"errors"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"tollgate/model"
	"tollgate/relay/adaptor"
	"tollgate/service/token"
)

// apiKey reads the sk- key from Authorization: Bearer or x-api-key (Anthropic SDKs send either), and on
// Gemini's routes also from x-goog-api-key or the key query parameter, as Google's clients send it.
func apiKey(c *gin.Context) string {
	if h := c.GetHeader("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	if k := strings.TrimSpace(c.GetHeader("x-api-key")); k != "" {
		return k
	}
	if !strings.HasPrefix(c.Request.URL.Path, geminiPrefix) {
		return ""
	}
	if k := strings.TrimSpace(c.GetHeader("x-goog-api-key")); k != "" {
		return k
	}
	return strings.TrimSpace(c.Query("key"))
}

// caller is an authenticated key and its owner.
type caller struct {
	tok   *token.Cached
	user  *model.User
	group string // the key's group, or its owner's
	// groups are the groups a request may be served by, in order: group, then the key's fallbacks the
	// owner may still use.
	groups []string
}

// authenticate resolves the key and checks key, owner and client IP (all from per-node caches).
func (r *Relay) authenticate(c *gin.Context) (*caller, *relayError) {
	key := apiKey(c)
	if key == "" {
		return nil, newErr(http.StatusUnauthorized, "missing_api_key")
	}
	ctx := c.Request.Context()
	tok, err := r.Tokens.Lookup(ctx, key)
	if errors.Is(err, model.ErrNotFound) {
		return nil, newErr(http.StatusUnauthorized, "invalid_api_key")
	} else if err != nil {
		return nil, newErr(http.StatusServiceUnavailable, "store_unavailable")
	}
	if tok.Status != model.StatusEnabled {
		return nil, newErr(http.StatusUnauthorized, "key_disabled")
	}
	if tok.ExpiresAt != nil && time.Now().After(*tok.ExpiresAt) {
		return nil, newErr(http.StatusUnauthorized, "key_expired")
	}
	user, err := r.Accounts.Cached(ctx, tok.UserID)
	if err != nil {
		return nil, newErr(http.StatusUnauthorized, "invalid_api_key")
	}
	if user.Status != model.StatusEnabled {
		return nil, newErr(http.StatusForbidden, "user_disabled")
	}
	if len(tok.Nets) > 0 {
		ip := net.ParseIP(c.ClientIP())
		allowed := false
		for _, n := range tok.Nets {
			if ip != nil && n.Contains(ip) {
				allowed = true
				break
			}
		}
		if !allowed {
			return nil, newErr(http.StatusForbidden, "ip_not_allowed", c.ClientIP())
		}
	}
	g := tok.Group
	if g == "" {
		g = user.Group
	}
	if row, ok := r.Routing.Group(g); ok && row.Status == model.StatusDisabled {
		return nil, newErr(http.StatusForbidden, "group_disabled", g)
	}
	if tok.Group != "" && r.Tokens.GroupRevoked(&tok.Token, user) {
		// The owner was moved out of the key's group (or it was closed to them): the key must not keep that
		// group's routing and price ratio. Both views come from per-node snapshots, no SQL.
		return nil, newErr(http.StatusForbidden, "group_revoked", tok.Group)
	}
	k := &caller{tok: tok, user: user, group: g, groups: []string{g}}
	for _, fb := range tok.FallbackGroups.V {
		if fb != g && r.Groups.MayUse(user, fb) && !slices.Contains(k.groups, fb) {
			k.groups = append(k.groups, fb)
		}
	}
	return k, nil
}

// modelAllowed applies the key's model allowlist.
func (k *caller) modelAllowed(m string) bool {
	if len(k.tok.Models.V) == 0 {
		return true
	}
	for _, a := range k.tok.Models.V {
		if a == m {
			return true
		}
	}
	return false
}

// limit enforces the key's and the owner's rpm and tpm (ratelimit.go) and the key's concurrency; the returned
// func releases the concurrency slot.
func (r *Relay) limit(ctx context.Context, k *caller, at time.Time) (func(), *relayError) {
	if rerr := r.limitRate(ctx, k, at); rerr != nil {
		return nil, rerr
	}
	id := strconv.FormatInt(k.tok.ID, 10)
	if k.tok.Concurrency <= 0 {
		return func() {}, nil
	}
	key := "conc:" + id
	n, err := r.Cache.Incr(ctx, key, 1, time.Hour)
	if err != nil {
		return nil, newErr(http.StatusServiceUnavailable, "cache_unavailable")
	}
	release := func() { _, _ = r.Cache.Incr(context.WithoutCancel(ctx), key, -1, time.Hour) }
	if n > int64(k.tok.Concurrency) {
		release()
		return nil, newErr(http.StatusTooManyRequests, "concurrency_limited")
	}
	return release, nil
}

// callableModels authenticates a model-list request and lists what its key may call (false: refused, the
// refusal is written in proto's shape).
func (r *Relay) callableModels(c *gin.Context, proto adaptor.Protocol) ([]string, bool) {
	if rerr := r.limitIP(c); rerr != nil {
		fail(c, proto, rerr)
		return nil, false
	}
	k, rerr := r.authenticate(c)
	if rerr != nil {
		fail(c, proto, rerr)
		return nil, false
	}
	ids := []string{}
	for _, m := range r.Routing.Models(k.groups) {
		if k.modelAllowed(m) {
			ids = append(ids, m)
		}
	}
	return ids, true
}

// models answers GET /v1/models with what this key may call, in the caller's protocol.
func (r *Relay) models(c *gin.Context) {
	proto := adaptor.OpenAI
	if c.GetHeader("anthropic-version") != "" || (c.GetHeader("x-api-key") != "" && c.GetHeader("Authorization") == "") {
		proto = adaptor.Anthropic
	}
	ids, ok := r.callableModels(c, proto)
	if !ok {
		return
	}
	created := time.Now().Unix()
	if proto == adaptor.Anthropic {
		data := make([]gin.H, len(ids))
		for i, id := range ids {
			data[i] = gin.H{"type": "model", "id": id, "display_name": id, "created_at": time.Unix(created, 0).UTC().Format(time.RFC3339)}
		}
		out := gin.H{"data": data, "has_more": false, "first_id": nil, "last_id": nil}
		if len(ids) > 0 {
			out["first_id"], out["last_id"] = ids[0], ids[len(ids)-1]
		}
		c.JSON(http.StatusOK, out)
		return
	}
	data := make([]gin.H, len(ids))
	for i, id := range ids {
		data[i] = gin.H{"id": id, "object": "model", "created": created, "owned_by": "tollgate"}
	}
	c.JSON(http.StatusOK, gin.H{"object": "list", "data": data})
}

// Package sticky keeps a conversation on the channel that served it well: prompt caches stay warm and
// multi-turn state stays put. Bindings live in the shared cache (memory or Redis), so they hold across nodes;
// they are written only after a success, so a failing channel is never glued on.
package sticky

import (
	"context"
	"hash/fnv"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"tollgate/service/cache"
)

// Kind is how strong the identifier behind a binding is.
type Kind string

// Kinds, strongest first.
const (
	Conversation Kind = "conversation"
	Session      Kind = "session"
	UserModel    Kind = "user_model"
	Bucket       Kind = "bucket"
)

// Buckets is how many hash buckets the last-resort kind spreads a key's traffic over.
const Buckets = 16

// Key identifies one sticky binding.
type Key struct {
	Kind Kind
	ID   string
}

// TTLs per kind (defaults: 2 h, 2 h, 30 min, 10 min).
type TTLs map[Kind]time.Duration

// DefaultTTLs are the binding lifetimes when the admin set none.
func DefaultTTLs() TTLs {
	return TTLs{Conversation: 2 * time.Hour, Session: 2 * time.Hour, UserModel: 30 * time.Minute, Bucket: 10 * time.Minute}
}

// Derive picks the strongest identifier present in a request: a conversation id, a session id (Claude Code's
// metadata.user_id, OpenAI's prompt_cache_key, a session_id header), an end-user id with the model, or, as
// the last resort, a hash bucket of the API key and the first message.
func Derive(body []byte, h http.Header, tokenID int64, model string) Key {
	f := gjson.GetManyBytes(body, "conversation", "conversation.id", "metadata.conversation_id",
		"metadata.user_id", "prompt_cache_key", "user", "safety_identifier", "messages.0.content", "input")
	if id := firstNonEmpty(h.Get("X-Conversation-Id"), f[1].String(), str(f[0]), f[2].String()); id != "" {
		return Key{Conversation, id}
	}
	if id := firstNonEmpty(h.Get("Session_id"), h.Get("X-Session-Id"), f[3].String(), f[4].String()); id != "" {
		return Key{Session, id}
	}
	if id := firstNonEmpty(f[5].String(), f[6].String()); id != "" {
		return Key{UserModel, id + "|" + model}
	}
	hs := fnv.New32a()
	first := f[7].Raw
	if first == "" {
		first = f[8].Raw
	}
	if len(first) > 512 {
		first = first[:512]
	}
	hs.Write([]byte(first))
	return Key{Bucket, strconv.FormatInt(tokenID, 10) + "|" + model + "|" + strconv.Itoa(int(hs.Sum32()%Buckets))}
}

func str(r gjson.Result) string {
	if r.Type == gjson.String {
		return r.String()
	}
	return ""
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v = strings.TrimSpace(v); v != "" {
			if len(v) > 200 {
				v = v[:200]
			}
			return v
		}
	}
	return ""
}

// Store reads and writes bindings.
type Store struct {
	c    cache.Cache
	ttls TTLs
	now  func() time.Time
}

// New builds a binding store.
func New(c cache.Cache, ttls TTLs, now func() time.Time) *Store {
	if ttls == nil {
		ttls = DefaultTTLs()
	}
	return &Store{c: c, ttls: ttls, now: now}
}

func (s *Store) cacheKey(group, model string, k Key) string {
	return "sticky:" + group + ":" + model + ":" + string(k.Kind) + ":" + k.ID
}

// Binding is a stored channel choice.
type Binding struct {
	ChannelID int64
	Since     time.Time
}

// Get returns the binding for k, if any.
func (s *Store) Get(ctx context.Context, group, model string, k Key) (Binding, bool) {
	v, ok, err := s.c.Get(ctx, s.cacheKey(group, model, k))
	if err != nil || !ok {
		return Binding{}, false
	}
	parts := strings.SplitN(string(v), ":", 2)
	id, err1 := strconv.ParseInt(parts[0], 10, 64)
	if err1 != nil || len(parts) != 2 {
		return Binding{}, false
	}
	ts, _ := strconv.ParseInt(parts[1], 10, 64)
	return Binding{ChannelID: id, Since: time.Unix(ts, 0)}, true
}

// Bind records a success on channelID. An existing binding to the same channel is refreshed only when a
// quarter of its TTL has passed, so a busy conversation costs one cache write per few minutes, not per call.
func (s *Store) Bind(ctx context.Context, group, model string, k Key, prev Binding, hadPrev bool, channelID int64) {
	ttl := s.ttls[k.Kind]
	if ttl <= 0 {
		return
	}
	now := s.now()
	if hadPrev && prev.ChannelID == channelID && now.Sub(prev.Since) < ttl/4 {
		return
	}
	v := strconv.FormatInt(channelID, 10) + ":" + strconv.FormatInt(now.Unix(), 10)
	_ = s.c.Set(ctx, s.cacheKey(group, model, k), []byte(v), ttl)
}

// Forget drops a binding (its channel failed).
func (s *Store) Forget(ctx context.Context, group, model string, k Key) {
	_ = s.c.Del(ctx, s.cacheKey(group, model, k))
}

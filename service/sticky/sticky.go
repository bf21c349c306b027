// Package sticky keeps a conversation on the channel that served it well: prompt caches stay warm and
// multi-turn state stays put. Bindings live in the shared cache (memory or Redis), so they hold across nodes;
// they are written only after a success, so a failing channel is never glued on.
package sticky

import (
	"context"
	"errors"
	"hash/fnv"
	"net/http"
	"slices"
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

// Kinds are every kind, strongest first.
var Kinds = []Kind{Conversation, Session, UserModel, Bucket}

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

// Derive picks the strongest identifier present in a request among the allowed levels (nil: every kind): a
// conversation id, a session id (Claude Code's metadata.user_id, OpenAI's prompt_cache_key, a session_id
// header), an end-user id with the model, or, as the last resort, a hash bucket of the API key and the first
// message. ok is false when no allowed level applies.
func Derive(body []byte, h http.Header, tokenID int64, model string, levels []Kind) (Key, bool) {
	allowed := func(k Kind) bool { return levels == nil || slices.Contains(levels, k) }
	f := gjson.GetManyBytes(body, "conversation", "conversation.id", "metadata.conversation_id",
		"metadata.user_id", "prompt_cache_key", "user", "safety_identifier", "messages.0.content", "input")
	if allowed(Conversation) {
		if id := firstNonEmpty(h.Get("X-Conversation-Id"), f[1].String(), str(f[0]), f[2].String()); id != "" {
			return Key{Conversation, id}, true
		}
	}
	if allowed(Session) {
		if id := firstNonEmpty(h.Get("Session_id"), h.Get("X-Session-Id"), f[3].String(), f[4].String()); id != "" {
			return Key{Session, id}, true
		}
	}
	if allowed(UserModel) {
		if id := firstNonEmpty(f[5].String(), f[6].String()); id != "" {
			return Key{UserModel, id + "|" + model}, true
		}
	}
	if !allowed(Bucket) {
		return Key{}, false
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
	return Key{Bucket, strconv.FormatInt(tokenID, 10) + "|" + model + "|" + strconv.Itoa(int(hs.Sum32()%Buckets))}, true
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

// TTL is how long a binding of kind lives: own (a group's ttl_s, seconds per kind) when it names the kind,
// else the store's default.
func (s *Store) TTL(kind Kind, own map[string]int) time.Duration {
	if v, ok := own[string(kind)]; ok {
		return time.Duration(v) * time.Second
	}
	return s.ttls[kind]
}

func cacheKey(group, model string, k Key) string {
	return prefix(group, model) + string(k.Kind) + ":" + k.ID
}

func prefix(group, model string) string { return "sticky:" + group + ":" + model + ":" }

// Binding is a stored choice: the route, the channel and the upstream key that served the session, and
// when it was written.
type Binding struct {
	Group     string // the group that served: the key's own, or one of its fallbacks
	Route     string
	ChannelID int64
	Key       int // -1: none recorded (a binding written before keys were sticky)
	Since     time.Time
}

// same says whether b names the same route, channel and key as o.
func (b Binding) same(o Binding) bool {
	return b.Group == o.Group && b.Route == o.Route && b.ChannelID == o.ChannelID && b.Key == o.Key
}

// encode writes "channel:unix:key:group:route" (group and route names hold no ':'); decode also reads the
// older "channel:unix".
func (b Binding) encode() []byte {
	return []byte(strconv.FormatInt(b.ChannelID, 10) + ":" + strconv.FormatInt(b.Since.Unix(), 10) + ":" +
		strconv.Itoa(b.Key) + ":" + b.Group + ":" + b.Route)
}

func decode(v []byte) (Binding, bool) {
	parts := strings.SplitN(string(v), ":", 5)
	id, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil || len(parts) < 2 {
		return Binding{}, false
	}
	ts, _ := strconv.ParseInt(parts[1], 10, 64)
	b := Binding{ChannelID: id, Since: time.Unix(ts, 0), Key: -1}
	if len(parts) == 5 {
		if k, err := strconv.Atoi(parts[2]); err == nil {
			b.Key = k
		}
		b.Group, b.Route = parts[3], parts[4]
	}
	return b, true
}

// Get returns the binding for k, if any.
func (s *Store) Get(ctx context.Context, group, model string, k Key) (Binding, bool) {
	v, ok, err := s.c.Get(ctx, cacheKey(group, model, k))
	if err != nil || !ok {
		return Binding{}, false
	}
	return decode(v)
}

// Bind records a success on next for ttl (0: not kept). An existing binding to the same route, channel and
// key is refreshed only when a quarter of its TTL has passed, so a busy conversation costs one cache write
// per few minutes, not per call.
func (s *Store) Bind(ctx context.Context, group, model string, k Key, prev Binding, hadPrev bool, next Binding, ttl time.Duration) {
	if ttl <= 0 {
		return
	}
	now := s.now()
	if hadPrev && prev.same(next) && now.Sub(prev.Since) < ttl/4 {
		return
	}
	next.Since = now
	_ = s.c.Set(ctx, cacheKey(group, model, k), next.encode(), ttl)
}

// Forget drops a binding (its channel failed).
func (s *Store) Forget(ctx context.Context, group, model string, k Key) {
	_ = s.c.Del(ctx, cacheKey(group, model, k))
}

// Listed is one binding as an admin sees it.
type Listed struct {
	Kind      Kind      `json:"kind"`
	Group     string    `json:"group"`
	Route     string    `json:"route"`
	ChannelID int64     `json:"channel_id"`
	KeyIndex  int       `json:"key_index"`
	Since     time.Time `json:"since"`
}

// ErrNoScan: the cache cannot list its keys.
var ErrNoScan = errors.New("sticky: the cache cannot list bindings")

// List returns up to limit live bindings of group and model (model "" = every model of the group), for the
// admin view; it scans the cache, so it is not for the request path. The session ids stay hidden.
func (s *Store) List(ctx context.Context, group, model string, limit int) ([]Listed, error) {
	sc, ok := s.c.(cache.Scanner)
	if !ok {
		return nil, ErrNoScan
	}
	p := "sticky:" + group + ":"
	if model != "" {
		p = prefix(group, model)
	}
	es, err := sc.Scan(ctx, p, limit)
	if err != nil {
		return nil, err
	}
	out := make([]Listed, 0, len(es))
	for _, e := range es {
		b, ok := decode(e.Val)
		if !ok {
			continue
		}
		rest := strings.TrimPrefix(e.Key, p)
		if model == "" { // "<model>:<kind>:<id>"; model names hold no ':' in practice, kinds never do
			if i := strings.Index(rest, ":"); i >= 0 {
				rest = rest[i+1:]
			}
		}
		kind, _, _ := strings.Cut(rest, ":")
		out = append(out, Listed{Kind: Kind(kind), Group: b.Group, Route: b.Route, ChannelID: b.ChannelID, KeyIndex: b.Key, Since: b.Since})
	}
	return out, nil
}

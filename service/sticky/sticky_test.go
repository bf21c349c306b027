package sticky

import (
	"context"
	"net/http"
	"testing"
	"time"

	"tollgate/service/cache"
)

func TestDerive_PicksTheStrongestIdentifier(t *testing.T) {
	h := func(k, v string) http.Header { x := http.Header{}; x.Set(k, v); return x }
	cases := []struct {
		name string
		body string
		h    http.Header
		kind Kind
	}{
		{"conversation header", `{"metadata":{"user_id":"u"}}`, h("X-Conversation-Id", "c1"), Conversation},
		{"responses conversation", `{"conversation":"conv_1"}`, http.Header{}, Conversation},
		{"claude code session", `{"metadata":{"user_id":"user_abc_session_1"}}`, http.Header{}, Session},
		{"prompt cache key", `{"prompt_cache_key":"pk"}`, http.Header{}, Session},
		{"session header", `{}`, h("Session_id", "s"), Session},
		{"end user", `{"user":"enduser-7"}`, http.Header{}, UserModel},
		{"nothing: bucket", `{"messages":[{"role":"user","content":"hi"}]}`, http.Header{}, Bucket},
	}
	for _, tc := range cases {
		if got, _ := Derive([]byte(tc.body), tc.h, 1, "m", nil); got.Kind != tc.kind {
			t.Errorf("%s: got %s want %s", tc.name, got.Kind, tc.kind)
		}
	}
	a, _ := Derive([]byte(`{"messages":[{"content":"x"}]}`), http.Header{}, 1, "m", nil)
	b, _ := Derive([]byte(`{"messages":[{"content":"x"}]}`), http.Header{}, 1, "m", nil)
	if a != b {
		t.Fatal("bucket must be deterministic")
	}
}

func TestStore_BindOnlyRefreshesAfterAQuarterTTL(t *testing.T) {
	now := time.Unix(1000, 0)
	s := New(cache.NewMemory(), nil, func() time.Time { return now })
	ctx := context.Background()
	k := Key{Session, "s"}
	if _, ok := s.Get(ctx, "g", "m", k); ok {
		t.Fatal("empty store has no binding")
	}
	ttl := s.TTL(k.Kind, nil)
	s.Bind(ctx, "g", "m", k, Binding{}, false, Binding{ChannelID: 7, Key: 1, Route: "r"}, ttl)
	b, ok := s.Get(ctx, "g", "m", k)
	if !ok || b.ChannelID != 7 || b.Key != 1 || b.Route != "r" {
		t.Fatalf("got %+v %v", b, ok)
	}
	now = now.Add(10 * time.Minute)
	s.Bind(ctx, "g", "m", k, b, true, Binding{ChannelID: 7, Key: 1, Route: "r"}, ttl)
	if b2, _ := s.Get(ctx, "g", "m", k); !b2.Since.Equal(b.Since) {
		t.Fatal("refresh before a quarter TTL must not rewrite")
	}
	now = now.Add(time.Hour)
	s.Bind(ctx, "g", "m", k, b, true, Binding{ChannelID: 7, Key: 1, Route: "r"}, ttl)
	if b3, _ := s.Get(ctx, "g", "m", k); b3.Since.Equal(b.Since) {
		t.Fatal("refresh after a quarter TTL must rewrite")
	}
	s.Forget(ctx, "g", "m", k)
	if _, ok := s.Get(ctx, "g", "m", k); ok {
		t.Fatal("forget drops the binding")
	}
}

// A group's levels restrict what binds: with only "session" allowed, a request with a conversation id binds
// by its session, and one with neither does not bind at all.
func TestDerive_OnlyTheGroupsLevels(t *testing.T) {
	body := []byte(`{"conversation":"c","metadata":{"user_id":"s1"}}`)
	if k, ok := Derive(body, http.Header{}, 1, "m", []Kind{Session}); !ok || k.Kind != Session || k.ID != "s1" {
		t.Fatalf("got %+v %v", k, ok)
	}
	if _, ok := Derive([]byte(`{"messages":[]}`), http.Header{}, 1, "m", []Kind{Session}); ok {
		t.Fatal("no session id and no other level allowed: no binding")
	}
}

// A change of key on the same channel is written at once (the session moved keys), a group's own TTL
// overrides the default, an old "channel:unix" value still reads, and List shows bindings per group.
func TestStore_KeyMovesListAndOldValues(t *testing.T) {
	now := time.Unix(1000, 0)
	c := cache.NewMemory()
	s := New(c, nil, func() time.Time { return now })
	ctx := context.Background()
	if got := s.TTL(Session, map[string]int{"session": 90}); got != 90*time.Second {
		t.Fatalf("own ttl = %v", got)
	}
	k := Key{Session, "s"}
	s.Bind(ctx, "g", "m", k, Binding{}, false, Binding{ChannelID: 7, Key: 0, Route: "a"}, time.Hour)
	b, _ := s.Get(ctx, "g", "m", k)
	s.Bind(ctx, "g", "m", k, b, true, Binding{ChannelID: 7, Key: 2, Route: "a"}, time.Hour)
	if b2, _ := s.Get(ctx, "g", "m", k); b2.Key != 2 {
		t.Fatalf("key move not written: %+v", b2)
	}
	_ = c.Set(ctx, "sticky:g:m:conversation:old", []byte("9:1000"), time.Hour)
	if old, ok := s.Get(ctx, "g", "m", Key{Conversation, "old"}); !ok || old.ChannelID != 9 || old.Key != -1 {
		t.Fatalf("old value = %+v %v", old, ok)
	}
	_ = c.Set(ctx, "sticky:g:m:session:bad", []byte("x:y"), time.Hour)
	s.Bind(ctx, "other", "m", k, Binding{}, false, Binding{ChannelID: 8, Route: "b"}, time.Hour)
	ls, err := s.List(ctx, "g", "", 100)
	if err != nil || len(ls) != 2 {
		t.Fatalf("list = %+v %v", ls, err)
	}
	for _, l := range ls {
		if l.Kind != Session && l.Kind != Conversation {
			t.Fatalf("kind %q", l.Kind)
		}
	}
}

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
		if got := Derive([]byte(tc.body), tc.h, 1, "m"); got.Kind != tc.kind {
			t.Errorf("%s: got %s want %s", tc.name, got.Kind, tc.kind)
		}
	}
	a := Derive([]byte(`{"messages":[{"content":"x"}]}`), http.Header{}, 1, "m")
	b := Derive([]byte(`{"messages":[{"content":"x"}]}`), http.Header{}, 1, "m")
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
	s.Bind(ctx, "g", "m", k, Binding{}, false, 7)
	b, ok := s.Get(ctx, "g", "m", k)
	if !ok || b.ChannelID != 7 {
		t.Fatalf("got %+v %v", b, ok)
	}
	now = now.Add(10 * time.Minute)
	s.Bind(ctx, "g", "m", k, b, true, 7)
	if b2, _ := s.Get(ctx, "g", "m", k); !b2.Since.Equal(b.Since) {
		t.Fatal("refresh before a quarter TTL must not rewrite")
	}
	now = now.Add(time.Hour)
	s.Bind(ctx, "g", "m", k, b, true, 7)
	if b3, _ := s.Get(ctx, "g", "m", k); b3.Since.Equal(b.Since) {
		t.Fatal("refresh after a quarter TTL must rewrite")
	}
	s.Forget(ctx, "g", "m", k)
	if _, ok := s.Get(ctx, "g", "m", k); ok {
		t.Fatal("forget drops the binding")
	}
}

package bus

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// inbox records delivered messages.
type inbox struct {
	mu   sync.Mutex
	msgs []Message
}

func (b *inbox) handle(m Message) {
	b.mu.Lock()
	b.msgs = append(b.msgs, m)
	b.mu.Unlock()
}

func (b *inbox) all() []Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Message(nil), b.msgs...)
}

// wait returns the messages once cond holds for them, failing after 2 s.
func (b *inbox) wait(t *testing.T, what string, cond func([]Message) bool) []Message {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		ms := b.all()
		if cond(ms) {
			return ms
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: got %+v", what, ms)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func hasPayload(p string) func([]Message) bool {
	return func(ms []Message) bool {
		for _, m := range ms {
			if m.Payload == p {
				return true
			}
		}
		return false
	}
}

func TestMemoryBus_DeliversToEverySubscriberOfTheTopic(t *testing.T) {
	b := NewMemory()
	var users1, users2, tokens inbox
	b.Subscribe("user", users1.handle)
	b.Subscribe("user", users2.handle)
	b.Subscribe("token", tokens.handle)
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	_ = b.Publish(ctx, "user", "7")
	_ = b.Publish(ctx, "user", "")
	_ = b.Publish(ctx, "token", "abc")
	_ = b.Publish(ctx, "nobody-listens", "x")

	want := []Message{{"user", 1, "7"}, {"user", 2, ""}}
	for _, in := range []*inbox{&users1, &users2} {
		if got := in.all(); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Fatalf("user subscriber got %+v, want %+v (synchronously, versions counting up)", got, want)
		}
	}
	if got := tokens.all(); len(got) != 1 || got[0] != (Message{"token", 1, "abc"}) {
		t.Fatalf("token subscriber got %+v", got)
	}
}

func TestMemoryBus_ConcurrentPublishIsSafe(t *testing.T) {
	b := NewMemory()
	var in inbox
	b.Subscribe("t", in.handle)
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				_ = b.Publish(context.Background(), "t", "p")
			}
		}()
	}
	wg.Wait()
	seen := map[int64]bool{}
	for _, m := range in.all() {
		seen[m.Version] = true
	}
	if len(seen) != 200 {
		t.Fatalf("%d distinct versions for 200 publishes", len(seen))
	}
}

// redisEnv gives a client and a fresh prefix on REDIS_URL (or 127.0.0.1:6379 DB 15), skipping without Redis.
func redisEnv(t *testing.T) (*redis.Client, string) {
	t.Helper()
	url := os.Getenv("REDIS_URL")
	if url == "" {
		url = "redis://127.0.0.1:6379/15"
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		if os.Getenv("TOLLGATE_TEST_REDIS_URL") != "" {
			t.Fatalf("redis %s: %v", url, err)
		}
		t.Skipf("no Redis at %s (%v): the Redis bus tests did not run", url, err)
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	prefix := "tgbus" + hex.EncodeToString(b) + ":"
	t.Cleanup(func() {
		keys, _ := c.Keys(context.Background(), prefix+"*").Result()
		if len(keys) > 0 {
			c.Del(context.Background(), keys...)
		}
		c.Close()
	})
	return c, prefix
}

// node starts a Redis bus with its own client (as a separate process would have) subscribed to topic.
func node(t *testing.T, prefix, topic string, poll time.Duration) (*Redis, *inbox) {
	t.Helper()
	url := os.Getenv("REDIS_URL")
	if url == "" {
		url = "redis://127.0.0.1:6379/15"
	}
	opt, _ := redis.ParseURL(url)
	c := redis.NewClient(opt)
	b := NewRedis(c, prefix, poll)
	in := &inbox{}
	b.Subscribe(topic, in.handle)
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
		c.Close()
	})
	return b, in
}

func TestRedisBus_DeliversAcrossNodesIncludingThePublisher(t *testing.T) {
	_, prefix := redisEnv(t)
	a, inA := node(t, prefix, "user", time.Hour)
	_, inB := node(t, prefix, "user", time.Hour)
	_, other := node(t, prefix, "token", time.Hour)
	ctx := context.Background()

	if err := a.Publish(ctx, "user", "42"); err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string]*inbox{"publisher": inA, "other node": inB} {
		ms := in.wait(t, name+" receives user 42", hasPayload("42"))
		if ms[0] != (Message{Topic: "user", Version: 1, Payload: "42"}) {
			t.Fatalf("%s got %+v", name, ms[0])
		}
	}
	_ = a.Publish(ctx, "user", "43")
	ms := inB.wait(t, "other node receives user 43", hasPayload("43"))
	if ms[len(ms)-1].Version != 2 {
		t.Fatalf("second message = %+v, want version 2", ms[len(ms)-1])
	}
	time.Sleep(50 * time.Millisecond)
	if got := other.all(); len(got) != 0 {
		t.Fatalf("a token subscriber got user messages: %+v", got)
	}
	// Another prefix (another deployment) hears nothing.
	_, foreign := node(t, prefix+"x:", "user", time.Hour)
	_ = a.Publish(ctx, "user", "44")
	inB.wait(t, "other node receives user 44", hasPayload("44"))
	if got := foreign.all(); len(got) != 0 {
		t.Fatalf("a bus on another prefix got %+v", got)
	}
}

func TestRedisBus_VersionGapTriggersAFullReload(t *testing.T) {
	rc, prefix := redisEnv(t)
	a, _ := node(t, prefix, "token", time.Hour) // no poller: only the gap check can notice
	_, inB := node(t, prefix, "token", time.Hour)
	ctx := context.Background()

	_ = a.Publish(ctx, "token", "h1")
	inB.wait(t, "first message", hasPayload("h1"))
	// Two messages are lost: the version moves on without B hearing them.
	rc.IncrBy(ctx, prefix+"ver:token", 2)
	_ = a.Publish(ctx, "token", "h4")
	ms := inB.wait(t, "a message after the gap", func(ms []Message) bool { return len(ms) == 2 })
	if got := ms[1]; got.Version != 4 || got.Payload != "" {
		t.Fatalf("after a gap B got %+v, want version 4 with an empty payload (reload everything)", got)
	}
	// Back in step: the next message is delivered as is.
	_ = a.Publish(ctx, "token", "h5")
	ms = inB.wait(t, "next message", func(ms []Message) bool { return len(ms) == 3 })
	if ms[2].Payload != "h5" {
		t.Fatalf("after catching up B got %+v", ms[2])
	}
}

func TestRedisBus_PollerReloadsWhenAMessageNeverArrives(t *testing.T) {
	rc, prefix := redisEnv(t)
	_, inB := node(t, prefix, "group", 30*time.Millisecond)
	ctx := context.Background()

	// A publish whose pub/sub message was lost: only the version counter moved.
	rc.Incr(ctx, prefix+"ver:group")
	ms := inB.wait(t, "poller notices the missed version", func(ms []Message) bool { return len(ms) >= 1 })
	if ms[0] != (Message{Topic: "group", Version: 1}) {
		t.Fatalf("poller delivered %+v, want a reload (empty payload) at version 1", ms[0])
	}
	// Redis lost the counter (restart): a version going backwards reloads too.
	rc.Del(ctx, prefix+"ver:group")
	ms = inB.wait(t, "poller notices the counter reset", func(ms []Message) bool { return len(ms) >= 2 })
	if ms[1].Payload != "" || ms[1].Version != 0 {
		t.Fatalf("after a counter reset got %+v", ms[1])
	}
	time.Sleep(100 * time.Millisecond)
	if n := len(inB.all()); n != 2 {
		t.Fatalf("%d messages while nothing changed, want 2", n)
	}
}

func TestRedisBus_IgnoresGarbageOnTheChannel(t *testing.T) {
	rc, prefix := redisEnv(t)
	a, inB := node(t, prefix, "user", time.Hour)
	ctx := context.Background()
	rc.Publish(ctx, prefix+"bus", "not json")
	_ = a.Publish(ctx, "user", "ok")
	ms := inB.wait(t, "the real message", hasPayload("ok"))
	if len(ms) != 1 {
		t.Fatalf("got %+v", ms)
	}
	raw, _ := json.Marshal(ms[0])
	if string(raw) != `{"t":"user","v":1,"p":"ok"}` {
		t.Fatalf("wire shape = %s", raw)
	}
}

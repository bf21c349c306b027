package bus

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a Bus over Redis pub/sub. Every topic also has a version counter; a poller compares it with the
// last version seen and, when a node missed messages (Redis restart, network blip), delivers a reload.
type Redis struct {
	c        redis.UniversalClient
	prefix   string
	poll     time.Duration
	mu       sync.Mutex
	handlers map[string][]Handler
	seen     map[string]int64
	pubsub   *redis.PubSub
	cancel   context.CancelFunc
	done     chan struct{}
}

// NewRedis builds a Redis bus; poll is how often versions are compared (e.g. 2 s).
func NewRedis(c redis.UniversalClient, prefix string, poll time.Duration) *Redis {
	return &Redis{c: c, prefix: prefix, poll: poll, handlers: map[string][]Handler{}, seen: map[string]int64{}}
}

func (r *Redis) channel() string            { return r.prefix + "bus" }
func (r *Redis) versionKey(t string) string { return r.prefix + "ver:" + t }

// Publish implements Bus.
func (r *Redis) Publish(ctx context.Context, topic, payload string) error {
	v, err := r.c.Incr(ctx, r.versionKey(topic)).Result()
	if err != nil {
		return fmt.Errorf("bus version %s: %w", topic, err)
	}
	b, _ := json.Marshal(Message{Topic: topic, Version: v, Payload: payload})
	if err := r.c.Publish(ctx, r.channel(), b).Err(); err != nil {
		return fmt.Errorf("bus publish %s: %w", topic, err)
	}
	return nil
}

// Subscribe implements Bus.
func (r *Redis) Subscribe(topic string, fn Handler) {
	r.mu.Lock()
	r.handlers[topic] = append(r.handlers[topic], fn)
	r.mu.Unlock()
}

// Start implements Bus: it subscribes, records the current versions and starts the listener and poller.
func (r *Redis) Start(ctx context.Context) error {
	r.pubsub = r.c.Subscribe(ctx, r.channel())
	if _, err := r.pubsub.Receive(ctx); err != nil {
		return fmt.Errorf("bus subscribe: %w", err)
	}
	r.mu.Lock()
	for t := range r.handlers {
		v, _ := r.c.Get(ctx, r.versionKey(t)).Int64()
		r.seen[t] = v
	}
	r.mu.Unlock()
	ctx, r.cancel = context.WithCancel(context.Background())
	r.done = make(chan struct{})
	go r.listen(ctx)
	return nil
}

func (r *Redis) listen(ctx context.Context) {
	defer close(r.done)
	ch := r.pubsub.Channel()
	tick := time.NewTicker(r.poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case m, ok := <-ch:
			if !ok {
				return
			}
			var msg Message
			if json.Unmarshal([]byte(m.Payload), &msg) != nil {
				continue
			}
			r.deliver(msg)
		case <-tick.C:
			r.checkVersions(ctx)
		}
	}
}

// deliver calls the handlers; a gap in versions means messages were lost, so a full reload follows.
func (r *Redis) deliver(msg Message) {
	r.mu.Lock()
	last := r.seen[msg.Topic]
	if msg.Version > last {
		r.seen[msg.Topic] = msg.Version
	}
	hs := r.handlers[msg.Topic]
	r.mu.Unlock()
	if msg.Version > last+1 { // Start recorded every topic's version, so a gap is a loss even from zero
		slog.Warn("bus: missed messages, reloading", "topic", msg.Topic, "seen", last, "got", msg.Version)
		msg.Payload = ""
	}
	for _, h := range hs {
		h(msg)
	}
}

func (r *Redis) checkVersions(ctx context.Context) {
	r.mu.Lock()
	topics := make([]string, 0, len(r.handlers))
	for t := range r.handlers {
		topics = append(topics, t)
	}
	r.mu.Unlock()
	for _, t := range topics {
		v, err := r.c.Get(ctx, r.versionKey(t)).Int64()
		if err != nil && err != redis.Nil {
			continue
		}
		r.mu.Lock()
		last := r.seen[t]
		hs := r.handlers[t]
		if v != last {
			r.seen[t] = v
		}
		r.mu.Unlock()
		if v != last { // missed (v > last) or Redis lost the counter (v < last): reload either way
			for _, h := range hs {
				h(Message{Topic: t, Version: v})
			}
		}
	}
}

// Close implements Bus.
func (r *Redis) Close() error {
	if r.cancel != nil {
		r.cancel()
		_ = r.pubsub.Close()
		<-r.done
	}
	return nil
}

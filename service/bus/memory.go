package bus

import (
	"context"
	"sync"
)

// Memory is the in-process Bus: Publish calls the handlers synchronously.
type Memory struct {
	mu       sync.RWMutex
	handlers map[string][]Handler
	versions map[string]int64
}

// NewMemory returns an in-process bus.
func NewMemory() *Memory {
	return &Memory{handlers: map[string][]Handler{}, versions: map[string]int64{}}
}

// Publish implements Bus.
func (m *Memory) Publish(_ context.Context, topic, payload string) error {
	m.mu.Lock()
	m.versions[topic]++
	v := m.versions[topic]
	hs := append([]Handler(nil), m.handlers[topic]...)
	m.mu.Unlock()
	for _, h := range hs {
		h(Message{Topic: topic, Version: v, Payload: payload})
	}
	return nil
}

// Subscribe implements Bus.
func (m *Memory) Subscribe(topic string, fn Handler) {
	m.mu.Lock()
	m.handlers[topic] = append(m.handlers[topic], fn)
	m.mu.Unlock()
}

// Start implements Bus.
func (m *Memory) Start(context.Context) error { return nil }

// Close implements Bus.
func (m *Memory) Close() error { return nil }

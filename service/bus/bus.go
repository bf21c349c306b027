// Package bus carries versioned invalidations between nodes: in-process for one node, Redis pub/sub for many.
package bus

import (
	"context"
)

// Message is one invalidation. An empty Payload means "reload everything of this topic" (sent when a node
// notices by version that it missed messages).
type Message struct {
	Topic   string `json:"t"`
	Version int64  `json:"v"`
	Payload string `json:"p"`
}

// Handler reacts to a message; it must be quick and must not block on the network.
type Handler func(Message)

// Bus publishes invalidations to every node, including the publisher itself.
type Bus interface {
	// Publish bumps the topic's version and delivers payload to every subscriber on every node.
	Publish(ctx context.Context, topic, payload string) error
	// Subscribe registers fn for topic; call before Start.
	Subscribe(topic string, fn Handler)
	// Start begins delivery; it returns when the bus is listening.
	Start(ctx context.Context) error
	// Close stops delivery.
	Close() error
}

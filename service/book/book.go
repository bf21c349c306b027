// Package book is the shape every named config book shares: rows loaded from SQL into a map by name, replaced
// whole (readers load one pointer, never lock), reloaded on every node when the bus says the book changed.
package book

import (
	"context"
	"fmt"
	"sync/atomic"

	"tollgate/service/bus"
)

// Book is a by-name snapshot of rows of type T.
type Book[T any] struct {
	what string
	list func(context.Context) ([]T, error)
	name func(*T) string
	snap atomic.Pointer[map[string]T]
}

// New builds an empty book of what (for errors), filled by list and keyed by name, and subscribes it to topic
// on b (call before b.Start); call Load before serving.
func New[T any](what string, b bus.Bus, topic string, list func(context.Context) ([]T, error), name func(*T) string) *Book[T] {
	k := &Book[T]{what: what, list: list, name: name}
	empty := map[string]T{}
	k.snap.Store(&empty)
	b.Subscribe(topic, func(bus.Message) { _ = k.Load(context.Background()) })
	return k
}

// Load replaces the snapshot with what SQL holds now.
func (k *Book[T]) Load(ctx context.Context) error {
	rows, err := k.list(ctx)
	if err != nil {
		return fmt.Errorf("load %s: %w", k.what, err)
	}
	m := make(map[string]T, len(rows))
	for i := range rows {
		m[k.name(&rows[i])] = rows[i]
	}
	k.snap.Store(&m)
	return nil
}

// Get returns one row from the snapshot.
func (k *Book[T]) Get(name string) (T, bool) {
	v, ok := (*k.snap.Load())[name]
	return v, ok
}

// Current is the snapshot itself (read only); a new pointer after every reload.
func (k *Book[T]) Current() *map[string]T { return k.snap.Load() }

package token

import (
	"strconv"
	"testing"
)

func TestKeyHashes_RemembersAndStartsOverWhenFull(t *testing.T) {
	var k keyHashes
	if _, ok := k.get("sk-a"); ok {
		t.Fatal("an empty memo found a key")
	}
	k.put("sk-a", "h-a")
	if h, ok := k.get("sk-a"); !ok || h != "h-a" {
		t.Fatalf("got %q %v, want h-a", h, ok)
	}
	for i := range maxKeyHashes {
		k.put("sk-"+strconv.Itoa(i), "h")
	}
	if len(k.m) > maxKeyHashes {
		t.Fatalf("memo holds %d keys, bound %d", len(k.m), maxKeyHashes)
	}
	if _, ok := k.get("sk-a"); ok {
		t.Fatal("the memo did not start over when full")
	}
}

func BenchmarkKeyHashes(b *testing.B) {
	var k keyHashes
	key := "sk-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL"
	k.put(key, "hash")
	for b.Loop() {
		_, _ = k.get(key)
	}
}

func TestKeyHashes_Forget(t *testing.T) {
	var k keyHashes
	k.put("sk-a", "h-a")
	k.forget("sk-a")
	if _, ok := k.get("sk-a"); ok {
		t.Fatal("a forgotten key is still remembered")
	}
}

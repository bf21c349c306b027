package account

import (
	"strings"
	"testing"
)

func TestLoginKeys_StayShortForAHugeUsername(t *testing.T) {
	k := keysFor(strings.Repeat("A", 1<<20), "203.0.113.7")
	for _, key := range []string{k.user, k.wait} {
		if len(key) > 128 {
			t.Fatalf("cache key of %d bytes for a 1 MiB username", len(key))
		}
	}
	if a, b := keysFor("Alice", "ip"), keysFor("alice", "ip"); a != b {
		t.Fatalf("case variants count apart: %+v vs %+v", a, b)
	}
}

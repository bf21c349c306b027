package cache

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"
)

// Both caches list what lives under a prefix, leave out other prefixes and expired entries, stop at the
// limit, and read a prefix holding glob characters literally.
func TestScan_BothCachesListAPrefix(t *testing.T) {
	rc, prefix := testRedis(t)
	for _, c := range []interface {
		Cache
		Scanner
	}{NewMemory(), NewRedis(rc, prefix)} {
		t.Run(c.Kind(), func(t *testing.T) {
			ctx := context.Background()
			for i := range 30 {
				_ = c.Set(ctx, fmt.Sprintf("sticky:g*1:m:%02d", i), []byte(fmt.Sprint(i)), time.Minute)
			}
			_ = c.Set(ctx, "sticky:g:m:other", []byte("x"), time.Minute)
			_ = c.Set(ctx, "sticky:g*1:m:gone", []byte("x"), time.Millisecond)
			time.Sleep(20 * time.Millisecond)
			got, err := c.Scan(ctx, "sticky:g*1:", 1000)
			if err != nil {
				t.Fatal(err)
			}
			keys := make([]string, 0, len(got))
			for _, e := range got {
				keys = append(keys, e.Key)
			}
			sort.Strings(keys)
			if len(keys) != 30 || keys[0] != "sticky:g*1:m:00" || keys[29] != "sticky:g*1:m:29" {
				t.Fatalf("scan = %d keys %v", len(keys), keys)
			}
			if few, _ := c.Scan(ctx, "sticky:g*1:", 5); len(few) != 5 {
				t.Fatalf("limit 5 gave %d", len(few))
			}
		})
	}
}

package invite

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tollgate/model"
	"tollgate/model/modeltest"
)

// testStore is a migrated store on this pass's shape (SQLite, or a fresh MariaDB database).
func testStore(t *testing.T) *model.Store {
	t.Helper()
	dsn, path := "", filepath.Join(t.TempDir(), "invite.db")
	if os.Getenv(modeltest.EnvDSN) != "" {
		dsn, path = modeltest.FreshMySQL(t, "tg_invite"), ""
	}
	st, err := model.Open(dsn, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestEnsureCode_DrawsAgainWhenTheCodeIsTaken(t *testing.T) {
	st := testStore(t)
	ctx := context.Background()
	holder := &model.User{Username: "holder", PasswordHash: "x", Role: model.RoleUser, Group: "default", Status: model.StatusEnabled}
	other := &model.User{Username: "other", PasswordHash: "x", Role: model.RoleUser, Group: "default", Status: model.StatusEnabled}
	for _, u := range []*model.User{holder, other} {
		if err := st.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	taken := strings.Repeat("A", CodeLen) // byte 8 is 'A'
	if set, err := st.SetAffCode(ctx, holder.ID, taken); !set || err != nil {
		t.Fatalf("seed code: %v %v", set, err)
	}
	// The first draw is the taken code, the second "22222222".
	s := &Service{store: st, random: bytes.NewReader(append(bytes.Repeat([]byte{8}, CodeLen), bytes.Repeat([]byte{32}, CodeLen)...))}
	got, err := s.ensureCode(ctx, other.ID)
	if err != nil || got != strings.Repeat("2", CodeLen) {
		t.Fatalf("ensureCode after a collision = %q, %v; want 22222222", got, err)
	}
	// A user with a code keeps it (and draws nothing that lands).
	s.random = bytes.NewReader(bytes.Repeat([]byte{9}, CodeLen))
	if got, err := s.ensureCode(ctx, holder.ID); err != nil || got != taken {
		t.Fatalf("ensureCode of a user with a code = %q, %v; want %s", got, err, taken)
	}
	// Only collisions: a bounded number of tries, then an error, and the user still has no code.
	third := &model.User{Username: "third", PasswordHash: "x", Role: model.RoleUser, Group: "default", Status: model.StatusEnabled}
	if err := st.CreateUser(ctx, third); err != nil {
		t.Fatal(err)
	}
	s.random = bytes.NewReader(bytes.Repeat([]byte{8 + 64}, CodeLen*codeTries))
	if got, err := s.ensureCode(ctx, third.ID); err == nil {
		t.Fatalf("ensureCode with every draw taken = %q, want an error", got)
	}
	if u, _ := st.UserByID(ctx, third.ID); u.AffCode != nil {
		t.Fatalf("third got code %s", *u.AffCode)
	}
}

func TestNewCode_UsesTheWholeAlphabetWithoutBias(t *testing.T) {
	all := make([]byte, 256*CodeLen)
	for i := range all {
		all[i] = byte(i / CodeLen)
	}
	s := &Service{random: bytes.NewReader(all)}
	seen := map[rune]int{}
	for range 256 {
		c, err := s.newCode()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range c {
			seen[r]++
		}
	}
	if len(seen) != len(Alphabet) {
		t.Fatalf("%d distinct symbols, want %d", len(seen), len(Alphabet))
	}
	for r, n := range seen {
		if n != 256*CodeLen/len(Alphabet) {
			t.Fatalf("symbol %q drawn %d times of %d: biased", r, n, 256*CodeLen)
		}
	}
}

func TestMaskAndNormalize(t *testing.T) {
	for in, want := range map[string]string{"alice": "a***e", "bob": "b***b", "ab": "***", "张三丰": "张***丰"} {
		if got := Mask(in); got != want {
			t.Errorf("Mask(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Normalize("  abcd2345\t"); got != "ABCD2345" {
		t.Errorf("Normalize = %q", got)
	}
}

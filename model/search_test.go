package model_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"tollgate/model"
)

// storeForPass opens a migrated store on this pass's shape (MariaDB on the second pass, else SQLite).
func storeForPass(t *testing.T) *model.Store {
	t.Helper()
	var s *model.Store
	if os.Getenv("TOLLGATE_TEST_MYSQL_DSN") != "" {
		s = open(t, freshMySQL(t), "")
	} else {
		s = open(t, "", filepath.Join(t.TempDir(), "s.db"))
	}
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestListUsers_SearchTreatsWildcardsLiterally(t *testing.T) {
	s := storeForPass(t)
	ctx := context.Background()
	for _, name := range []string{"bob_1", "bobx1", "a%b", "ab", "x!y"} {
		if err := s.CreateUser(ctx, &model.User{Username: name, PasswordHash: "x", Role: "user", Group: "default", Status: "enabled"}); err != nil {
			t.Fatal(err)
		}
	}
	cases := map[string][]string{"bob_1": {"bob_1"}, "%": {"a%b"}, "_": {"bob_1"}, "!": {"x!y"}, "bob": {"bobx1", "bob_1"}}
	for q, want := range cases {
		got, n, err := s.ListUsers(ctx, model.UserFilter{Query: q}, model.Page{Page: 1, Size: 20})
		if err != nil {
			t.Fatalf("q=%q: %v", q, err)
		}
		if int(n) != len(want) || len(got) != len(want) {
			t.Errorf("q=%q: got %d rows (total %d), want %v", q, len(got), n, want)
		}
	}
}

package model_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"tollgate/model"
	"tollgate/model/modeltest"
)

// freshMySQL creates an empty database for this test (dropped at the end), or skips on the SQLite pass.
func freshMySQL(t *testing.T) string { return modeltest.FreshMySQL(t, "tg_model") }

func open(t *testing.T, dsn, sqlitePath string) *model.Store {
	t.Helper()
	s, err := model.Open(dsn, sqlitePath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// tables are every table the schema must have after Migrate.
var tables = []any{&model.User{}, &model.Token{}, &model.Group{}, &model.Option{}, &model.AuditLog{}, &model.Session{}}

// checkSchema asserts the tables and the unique lookup indexes exist and that data survives.
func checkSchema(t *testing.T, s *model.Store) {
	t.Helper()
	m := s.DB.Migrator()
	for _, tb := range tables {
		if !m.HasTable(tb) {
			t.Fatalf("table for %T is missing", tb)
		}
	}
	for _, ix := range []struct {
		model any
		field string
	}{{&model.User{}, "Username"}, {&model.Token{}, "KeyHash"}, {&model.Session{}, "Hash"}, {&model.Token{}, "idx_tokens_user"}} {
		if !m.HasIndex(ix.model, ix.field) {
			t.Fatalf("index on %T.%s is missing", ix.model, ix.field)
		}
	}
}

func migrateTwiceKeepsSchemaAndData(t *testing.T, s *model.Store) {
	ctx := context.Background()
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("first migrate: %v", err)
	}
	checkSchema(t, s)
	if err := s.EnsureDefaultGroup(ctx); err != nil {
		t.Fatal(err)
	}
	u := &model.User{Username: "keeper", PasswordHash: "x", Role: model.RoleUser, Group: "default", Status: model.StatusEnabled}
	if err := s.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("second migrate: %v", err)
	}
	if err := s.EnsureDefaultGroup(ctx); err != nil {
		t.Fatalf("second EnsureDefaultGroup: %v", err)
	}
	checkSchema(t, s)
	if got, err := s.UserByUsername(ctx, "keeper"); err != nil || got.ID != u.ID {
		t.Fatalf("a row did not survive a re-migration: %+v, %v", got, err)
	}
	gs, err := s.ListGroups(ctx)
	if err != nil || len(gs) != 1 || gs[0].Name != "default" || gs[0].Ratio.String() != "1" {
		t.Fatalf("groups after two starts = %+v, %v", gs, err)
	}
	if err := s.CreateUser(ctx, &model.User{Username: "keeper", PasswordHash: "y"}); err != model.ErrDuplicate {
		t.Fatalf("duplicate username: %v, want ErrDuplicate (the unique index survived)", err)
	}
}

func TestMigrate_IsIdempotentOnSQLite(t *testing.T) {
	s := open(t, "", filepath.Join(t.TempDir(), "sub", "m.db"))
	if s.Kind != "sqlite" {
		t.Fatalf("Kind = %q", s.Kind)
	}
	migrateTwiceKeepsSchemaAndData(t, s)
}

func TestMigrate_IsIdempotentOnMySQL(t *testing.T) {
	s := open(t, freshMySQL(t), "")
	if s.Kind != "mysql" {
		t.Fatalf("Kind = %q", s.Kind)
	}
	migrateTwiceKeepsSchemaAndData(t, s)
}

func TestMigrate_TwoNodesStartingAtOnceOnMySQL(t *testing.T) {
	dsn := freshMySQL(t)
	const nodes = 3
	stores := make([]*model.Store, nodes)
	for i := range stores {
		stores[i] = open(t, dsn, "")
	}
	ctx := context.Background()
	errs := make([]error, nodes)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if errs[i] = s.Migrate(ctx); errs[i] == nil {
				errs[i] = s.EnsureDefaultGroup(ctx)
			}
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
	}
	checkSchema(t, stores[0])
	gs, err := stores[1].ListGroups(ctx)
	if err != nil || len(gs) != 1 {
		t.Fatalf("groups after concurrent starts = %+v, %v", gs, err)
	}
	if err := stores[2].Migrate(ctx); err != nil {
		t.Fatalf("migrate after the race: %v", err)
	}
}

func TestMigrate_MySQLTablesUseBinaryUTF8MB4(t *testing.T) {
	dsn := freshMySQL(t)
	s := open(t, dsn, "")
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	var rows []struct{ Tbl, Coll string }
	if err := s.DB.Raw(`SELECT table_name AS tbl, table_collation AS coll FROM information_schema.tables
		WHERE table_schema = DATABASE()`).Scan(&rows).Error; err != nil || len(rows) < len(tables) {
		t.Fatalf("tables: %+v, %v", rows, err)
	}
	for _, r := range rows {
		if r.Coll != "utf8mb4_bin" {
			t.Errorf("table %s has collation %s, want utf8mb4_bin (case-sensitive keys and names)", r.Tbl, r.Coll)
		}
	}
}

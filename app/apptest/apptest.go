// Package apptest starts whole Tollgate nodes for integration tests, on SQLite + memory or, when
// TOLLGATE_TEST_MYSQL_DSN and TOLLGATE_TEST_REDIS_URL are set (make test's second pass), on a fresh MariaDB
// database + Redis with a fresh key prefix.
package apptest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"tollgate/app"
	"tollgate/config"
	"tollgate/model/modeltest"
)

// RootPassword is root's password in every test node.
const RootPassword = "rootpass123"

// Env is a shared SQL + cache environment that one or more nodes run on.
type Env struct {
	Cfg    config.Config
	Prefix string
	Shape  string // "sqlite" or "mysql"
	// Options adjust the nodes started on this env (e.g. Health for small breaker cooldowns); BcryptCost and
	// RedisPrefix are filled in by Start when left zero.
	Options app.Options
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Shape reports which shape the tests run on this pass.
func Shape() string {
	if os.Getenv("TOLLGATE_TEST_MYSQL_DSN") != "" {
		return "mysql"
	}
	return "sqlite"
}

// NewEnv prepares a fresh database (and Redis prefix) for this test.
func NewEnv(t testing.TB) *Env {
	t.Helper()
	e := &Env{Prefix: "tgt" + randHex(4) + ":", Shape: Shape()}
	env := map[string]string{"SECRET_KEY": "test-secret-key-0123456789", "ROOT_PASSWORD": RootPassword, "DATA_DIR": t.TempDir()}
	if e.Shape == "mysql" {
		env["SQL_DSN"] = modeltest.FreshMySQL(t, "tg_test")
		env["REDIS_URL"] = os.Getenv("TOLLGATE_TEST_REDIS_URL")
	} else {
		env["SQLITE_PATH"] = filepath.Join(env["DATA_DIR"], "t.db")
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	e.Cfg = cfg
	return e
}

// Node is one running Tollgate on an Env.
type Node struct {
	App    *app.App
	Server *httptest.Server
	URL    string
}

// Start runs a node on env; it is closed when the test ends.
func (e *Env) Start(t testing.TB) *Node {
	t.Helper()
	opt := e.Options
	if opt.BcryptCost == 0 {
		opt.BcryptCost = bcrypt.MinCost
	}
	if opt.RedisPrefix == "" {
		opt.RedisPrefix = e.Prefix
	}
	a, _, err := app.New(context.Background(), e.Cfg, opt)
	if err != nil {
		t.Fatalf("start node: %v", err)
	}
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(func() {
		srv.Close()
		if err := a.Close(context.Background()); err != nil {
			t.Logf("close node: %v", err)
		}
	})
	return &Node{App: a, Server: srv, URL: srv.URL}
}

// New starts one node on a fresh env.
func New(t testing.TB) *Node { return NewEnv(t).Start(t) }

// Describe names the shape for test logs.
func (e *Env) Describe() string { return fmt.Sprintf("%s (prefix %s)", e.Shape, e.Prefix) }

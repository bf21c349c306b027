package tier_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/shopspring/decimal"

	"tollgate/model"
	"tollgate/model/modeltest"
	"tollgate/service/apperr"
	"tollgate/service/audit"
	"tollgate/service/bus"
	"tollgate/service/tier"
)

var root = audit.Actor{ID: 1, Name: "root", IP: "127.0.0.1"}

// env is one database shared by the nodes of a test; on the MySQL pass it is a fresh MariaDB database and the
// nodes talk over Redis, otherwise a SQLite file and one in-process bus.
type env struct {
	dsn, sqlite string
	redisURL    string
	prefix      string
	mem         *bus.Memory
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{}
	if os.Getenv(modeltest.EnvDSN) != "" {
		e.dsn = modeltest.FreshMySQL(t, "tg_tier")
		e.redisURL = os.Getenv("TOLLGATE_TEST_REDIS_URL")
		e.prefix = "tgtier" + strings.ReplaceAll(t.Name(), "/", "_") + time.Now().Format("150405.000000") + ":"
	} else {
		e.sqlite = filepath.Join(t.TempDir(), "tiers.db")
		e.mem = bus.NewMemory()
	}
	return e
}

// node opens its own store handle and bus on the env and returns a loaded tier service.
func (e *env) node(t *testing.T) (*tier.Service, *model.Store) {
	t.Helper()
	ctx := context.Background()
	s, err := model.Open(e.dsn, e.sqlite)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureDefaultTier(ctx); err != nil {
		t.Fatal(err)
	}
	var b bus.Bus = e.mem
	if e.redisURL != "" {
		opt, err := redis.ParseURL(e.redisURL)
		if err != nil {
			t.Fatal(err)
		}
		c := redis.NewClient(opt)
		t.Cleanup(func() { c.Close() })
		b = bus.NewRedis(c, e.prefix, 100*time.Millisecond)
	}
	svc := tier.New(s, b, audit.New(s))
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if e.redisURL != "" {
		t.Cleanup(func() { b.Close() })
	}
	if err := svc.Load(ctx); err != nil {
		t.Fatal(err)
	}
	return svc, s
}

func ptr(s string) *string { return &s }

func wantCode(t *testing.T, err error, status int, code, field string) {
	t.Helper()
	e, ok := apperr.As(err)
	if !ok || e.Status != status || e.Code != code || e.Field != field {
		t.Fatalf("err = %v (%+v), want %d %s field %q", err, e, status, code, field)
	}
}

func TestRatio_OneForUnknownOrEmptyAndTheTiersOwnOtherwise(t *testing.T) {
	svc, _ := newEnv(t).node(t)
	ctx := context.Background()
	for _, name := range []string{"", "nope", "default"} {
		if r := svc.Ratio(name); !r.Equal(decimal.NewFromInt(1)) {
			t.Fatalf("Ratio(%q) = %s, want 1", name, r)
		}
	}
	if _, err := svc.Create(ctx, root, tier.Input{Name: "vip", Ratio: ptr("0.8")}); err != nil {
		t.Fatal(err)
	}
	if r := svc.Ratio("vip"); r.String() != "0.8" {
		t.Fatalf("Ratio(vip) = %s right after create, want 0.8", r)
	}
	if _, err := svc.Update(ctx, root, "vip", tier.Input{Ratio: ptr("0.65")}); err != nil {
		t.Fatal(err)
	}
	if r := svc.Ratio("vip"); r.String() != "0.65" {
		t.Fatalf("Ratio(vip) = %s right after update, want 0.65", r)
	}
	// The shared "one" must not be changed by callers doing arithmetic with it.
	_ = svc.Ratio("nope").Mul(decimal.NewFromInt(7))
	if r := svc.Ratio("nope"); r.String() != "1" {
		t.Fatalf("Ratio(nope) = %s after a caller multiplied it, want 1", r)
	}
}

func TestRatio_DoesNotAllocate(t *testing.T) {
	svc, _ := newEnv(t).node(t)
	if _, err := svc.Create(context.Background(), root, tier.Input{Name: "vip", Ratio: ptr("0.8")}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"vip", "nope", ""} {
		if n := testing.AllocsPerRun(1000, func() { _ = svc.Ratio(name) }); n != 0 {
			t.Fatalf("Ratio(%q) allocates %v times per call, want 0", name, n)
		}
	}
}

func BenchmarkRatio(b *testing.B) {
	s, err := model.Open("", filepath.Join(b.TempDir(), "b.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	svc := tier.New(s, bus.NewMemory(), audit.New(s))
	if _, err := svc.Create(ctx, root, tier.Input{Name: "vip", Ratio: ptr("0.8")}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_ = svc.Ratio("vip")
		}
	})
}

func TestCreate_RefusesBadInputNamingTheField(t *testing.T) {
	svc, store := newEnv(t).node(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		in    tier.Input
		field string
	}{
		{"missing name", tier.Input{Ratio: ptr("1")}, "name"},
		{"name with a space", tier.Input{Name: "v i p", Ratio: ptr("1")}, "name"},
		{"name too long", tier.Input{Name: strings.Repeat("t", 65), Ratio: ptr("1")}, "name"},
		{"missing ratio", tier.Input{Name: "t1"}, "ratio"},
		{"ratio not a number", tier.Input{Name: "t1", Ratio: ptr("abc")}, "ratio"},
		{"negative ratio", tier.Input{Name: "t1", Ratio: ptr("-0.1")}, "ratio"},
		{"ratio too large", tier.Input{Name: "t1", Ratio: ptr("1000.0001")}, "ratio"},
		{"description too long", tier.Input{Name: "t1", Ratio: ptr("1"), Description: ptr(strings.Repeat("d", 256))}, "description"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svc.Create(ctx, root, tc.in)
			wantCode(t, err, 400, "validation_failed", tc.field)
		})
	}
	for _, ok := range []string{"0", "1000", "0.000001"} {
		if _, err := svc.Create(ctx, root, tier.Input{Name: "r" + strings.ReplaceAll(ok, ".", "_"), Ratio: ptr(ok)}); err != nil {
			t.Fatalf("ratio %s refused: %v", ok, err)
		}
	}
	_, err := svc.Create(ctx, root, tier.Input{Name: "default", Ratio: ptr("2")})
	wantCode(t, err, 409, "tier_exists", "")
	if r := svc.Ratio("default"); r.String() != "1" {
		t.Fatalf("a refused duplicate changed default to %s", r)
	}
	ts, _ := store.ListTiers(ctx)
	if len(ts) != 4 {
		t.Fatalf("%d tiers, want 4 (default and three good ones): %+v", len(ts), ts)
	}
	_, err = svc.Update(ctx, root, "nope", tier.Input{Ratio: ptr("1")})
	wantCode(t, err, 404, "tier_not_found", "")
	_, err = svc.Update(ctx, root, "default", tier.Input{Ratio: ptr("x")})
	wantCode(t, err, 400, "validation_failed", "ratio")
}

func TestDelete_RefusesDefaultAndTiersWithUsers(t *testing.T) {
	svc, store := newEnv(t).node(t)
	ctx := context.Background()
	wantCode(t, svc.Delete(ctx, root, "default"), 409, "tier_default", "")
	if _, err := svc.Create(ctx, root, tier.Input{Name: "vip", Ratio: ptr("0.8"), Description: ptr("big")}); err != nil {
		t.Fatal(err)
	}
	u := &model.User{Username: "alice", PasswordHash: "x", Tier: "vip"}
	if err := store.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	vs, err := svc.List(ctx)
	if err != nil || len(vs) != 2 || vs[1].Name != "vip" || vs[1].Users != 1 || vs[0].Users != 0 {
		t.Fatalf("list = %+v, %v; want default (0 users), vip (1 user)", vs, err)
	}
	wantCode(t, svc.Delete(ctx, root, "vip"), 409, "tier_in_use", "")
	if !svc.Exists("vip") {
		t.Fatal("a refused delete dropped vip from the snapshot")
	}
	if err := store.UpdateUserFields(ctx, u.ID, map[string]any{"user_tier": "default"}); err != nil {
		t.Fatal(err)
	}
	if err := svc.Delete(ctx, root, "vip"); err != nil {
		t.Fatalf("delete unused vip: %v", err)
	}
	if svc.Exists("vip") || !svc.Ratio("vip").Equal(decimal.NewFromInt(1)) {
		t.Fatal("the snapshot still has the deleted tier")
	}
	wantCode(t, svc.Delete(ctx, root, "vip"), 404, "tier_not_found", "")

	logs, _, err := store.ListAudit(ctx, model.AuditFilter{}, model.Page{Page: 1, Size: 50})
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, l := range logs {
		if strings.HasPrefix(l.Action, "tier.") {
			actions = append(actions, l.Action+":"+l.Target)
			if l.ActorName != "root" || l.IP != "127.0.0.1" {
				t.Fatalf("audit row %+v lacks the actor", l)
			}
		}
	}
	if got := strings.Join(actions, ","); got != "tier.delete:vip,tier.create:vip" && got != "tier.create:vip,tier.delete:vip" {
		t.Fatalf("tier audit rows = %s, want one create and one delete (refusals are not audited)", got)
	}
}

// A change made on one node reaches the other node's snapshot through the bus, without a restart.
func TestChange_ReachesEveryNode(t *testing.T) {
	e := newEnv(t)
	a, _ := e.node(t)
	b, _ := e.node(t)
	ctx := context.Background()
	eventually := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(3 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("node B never saw %s", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if _, err := a.Create(ctx, root, tier.Input{Name: "vip", Ratio: ptr("0.8")}); err != nil {
		t.Fatal(err)
	}
	eventually("the new tier", func() bool { return b.Ratio("vip").String() == "0.8" })
	if _, err := a.Update(ctx, root, "vip", tier.Input{Ratio: ptr("0.7")}); err != nil {
		t.Fatal(err)
	}
	eventually("the new ratio", func() bool { return b.Ratio("vip").String() == "0.7" })
	if err := a.Delete(ctx, root, "vip"); err != nil {
		t.Fatal(err)
	}
	eventually("the delete", func() bool { return !b.Exists("vip") })
}

func TestUpdate_KeepsFieldsNotSent(t *testing.T) {
	svc, _ := newEnv(t).node(t)
	ctx := context.Background()
	if _, err := svc.Create(ctx, root, tier.Input{Name: "vip", Ratio: ptr("0.8"), Description: ptr("big")}); err != nil {
		t.Fatal(err)
	}
	got, err := svc.Update(ctx, root, "vip", tier.Input{Description: ptr("bigger")})
	if err != nil || got.Ratio.String() != "0.8" || got.Description != "bigger" {
		t.Fatalf("update description = %+v, %v", got, err)
	}
	got, err = svc.Update(ctx, root, "vip", tier.Input{Ratio: ptr("0.5")})
	if err != nil || got.Ratio.String() != "0.5" || got.Description != "bigger" {
		t.Fatalf("update ratio = %+v, %v", got, err)
	}
}

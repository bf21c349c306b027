package main

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"path/filepath"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"
)

// Where the MariaDB + Redis shape looks for its services.
const (
	mysqlAddr  = "127.0.0.1:3306"
	redisAddr  = "127.0.0.1:6379"
	benchDB    = "tollgate_bench"
	benchRedis = 9
)

// sqliteShape is the embedded default: SQLite file + in-process cache.
func sqliteShape(dir string) shapeEnv {
	return shapeEnv{name: "sqlite", env: []string{"SQLITE_PATH=" + filepath.Join(dir, "bench.db")}}
}

// mysqlShape prepares a fresh database and an empty Redis db, or reports errSkipped when either service is
// not reachable.
func mysqlShape(ctx context.Context) (shapeEnv, error) {
	for _, addr := range []string{mysqlAddr, redisAddr} {
		c, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
		if err != nil {
			return shapeEnv{}, fmt.Errorf("%w: %s not reachable", errSkipped, addr)
		}
		c.Close()
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	db, err := sql.Open("mysql", "root:@tcp("+mysqlAddr+")/?timeout=3s")
	if err != nil {
		return shapeEnv{}, err
	}
	defer db.Close()
	for _, q := range []string{
		"DROP DATABASE IF EXISTS " + benchDB,
		"CREATE DATABASE " + benchDB + " CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return shapeEnv{}, fmt.Errorf("prepare MariaDB (%s): %w", q, err)
		}
	}
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr, DB: benchRedis})
	defer rdb.Close()
	if err := rdb.FlushDB(ctx).Err(); err != nil {
		return shapeEnv{}, fmt.Errorf("flush redis db %d: %w", benchRedis, err)
	}
	return shapeEnv{name: "mysql", env: []string{
		"SQL_DSN=root:@tcp(" + mysqlAddr + ")/" + benchDB + "?parseTime=true&charset=utf8mb4",
		fmt.Sprintf("REDIS_URL=redis://%s/%d", redisAddr, benchRedis),
	}}, nil
}

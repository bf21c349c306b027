// Package modeltest creates throwaway MariaDB databases for tests on the MySQL pass of `make test`.
package modeltest

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// EnvDSN names the variable that points the MySQL pass at a server, e.g. root:@tcp(127.0.0.1:3306)/.
const EnvDSN = "TOLLGATE_TEST_MYSQL_DSN"

// FreshMySQL creates an empty database named prefix_<random> on the server in TOLLGATE_TEST_MYSQL_DSN, drops
// it when the test ends, and returns its DSN. It skips the test on the SQLite pass.
func FreshMySQL(t testing.TB, prefix string) string {
	t.Helper()
	base := os.Getenv(EnvDSN)
	if base == "" {
		t.Skip("MySQL pass only (" + EnvDSN + " is not set)")
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := prefix + "_" + hex.EncodeToString(b)
	admin, err := gorm.Open(mysql.Open(base+"?parseTime=true"), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatalf("mysql: %v", err)
	}
	if err := admin.Exec("CREATE DATABASE " + name + " CHARACTER SET utf8mb4").Error; err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		admin.Exec("DROP DATABASE IF EXISTS " + name)
		if db, err := admin.DB(); err == nil {
			db.Close()
		}
	})
	return strings.TrimSuffix(base, "/") + "/" + name
}

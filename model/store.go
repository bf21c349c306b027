// Package model holds Tollgate's gorm models, their queries and the schema migration, for MySQL and SQLite alike.
package model

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/glebarez/sqlite"
	"gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// ErrNotFound is returned when a row does not exist.
var ErrNotFound = errors.New("not found")

// ErrDuplicate is returned when a unique key is taken.
var ErrDuplicate = errors.New("duplicate")

// Store is the SQL store: one gorm handle over MySQL or SQLite.
type Store struct {
	DB   *gorm.DB
	Kind string // "mysql" or "sqlite"
}

// Open connects to MySQL when dsn is non-empty, else to the SQLite file at sqlitePath.
func Open(dsn, sqlitePath string) (*Store, error) {
	cfg := &gorm.Config{TranslateError: true, Logger: logger.Discard, NowFunc: func() time.Time { return time.Now().UTC() }}
	if dsn != "" {
		db, err := gorm.Open(mysql.Open(withMySQLDefaults(dsn)), cfg)
		if err != nil {
			return nil, fmt.Errorf("open mysql: %w", err)
		}
		sqlDB, _ := db.DB()
		sqlDB.SetMaxOpenConns(64)
		sqlDB.SetMaxIdleConns(32)
		sqlDB.SetConnMaxLifetime(30 * time.Minute)
		return &Store{DB: db, Kind: "mysql"}, nil
	}
	if dir := filepath.Dir(sqlitePath); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("create sqlite dir: %w", err)
		}
	}
	// WAL lets readers proceed during the batched writer's commits; busy_timeout absorbs brief write overlaps.
	dsnSQLite := sqlitePath + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"
	db, err := gorm.Open(sqlite.Open(dsnSQLite), cfg)
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", sqlitePath, err)
	}
	sqlDB, _ := db.DB()
	// One writer at a time is what SQLite allows; a single connection avoids SQLITE_BUSY storms.
	sqlDB.SetMaxOpenConns(1)
	return &Store{DB: db, Kind: "sqlite"}, nil
}

func withMySQLDefaults(dsn string) string {
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	if !strings.Contains(dsn, "parseTime=") {
		dsn += sep + "parseTime=true"
		sep = "&"
	}
	if !strings.Contains(dsn, "charset=") {
		dsn += sep + "charset=utf8mb4"
		sep = "&"
	}
	if !strings.Contains(dsn, "loc=") {
		dsn += sep + "loc=UTC"
	}
	return dsn
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	sqlDB, err := s.DB.DB()
	if err != nil {
		return err
	}
	return sqlDB.PingContext(ctx)
}

// Close closes the connection pool.
func (s *Store) Close() error {
	sqlDB, err := s.DB.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

// allModels lists every table, in creation order.
func allModels() []any {
	return []any{&User{}, &Token{}, &Group{}, &Option{}, &AuditLog{}, &Session{}, &Channel{}, &Price{}, &UsageLog{}}
}

// Migrate creates or updates the schema. It is idempotent; on MySQL a named lock makes two nodes starting
// at once take turns.
func (s *Store) Migrate(ctx context.Context) error {
	if s.Kind != "mysql" {
		if err := backfillUsernameLower(s.DB.WithContext(ctx)); err != nil {
			return err
		}
		return s.DB.WithContext(ctx).AutoMigrate(allModels()...)
	}
	return s.DB.WithContext(ctx).Connection(func(tx *gorm.DB) error {
		var got int
		if err := tx.Raw("SELECT GET_LOCK('tollgate_migrate', 120)").Scan(&got).Error; err != nil {
			return fmt.Errorf("migration lock: %w", err)
		}
		if got != 1 {
			return errors.New("migration lock: timed out waiting for another node")
		}
		defer tx.Exec("SELECT RELEASE_LOCK('tollgate_migrate')")
		if err := backfillUsernameLower(tx); err != nil {
			return err
		}
		return tx.Set("gorm:table_options", "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin").AutoMigrate(allModels()...)
	})
}

// backfillUsernameLower adds users.username_lower to a database made before usernames were case-insensitive
// and fills it, so that AutoMigrate can then build its unique index. Names that already collide in lower case
// keep signing in by their exact spelling: every row after the oldest of a collision gets "name#id", which no
// sign-up can take (usernames cannot contain '#').
func backfillUsernameLower(db *gorm.DB) error {
	m := db.Migrator()
	if !m.HasTable(&User{}) || m.HasColumn(&User{}, "UsernameLower") {
		return nil
	}
	if err := db.Exec("ALTER TABLE users ADD COLUMN username_lower varchar(64) NOT NULL DEFAULT ''").Error; err != nil {
		return fmt.Errorf("add users.username_lower: %w", err)
	}
	if err := db.Exec("UPDATE users SET username_lower = LOWER(username)").Error; err != nil {
		return fmt.Errorf("fill users.username_lower: %w", err)
	}
	var rows []struct {
		ID            int64
		UsernameLower string
	}
	if err := db.Raw("SELECT id, username_lower FROM users ORDER BY id").Scan(&rows).Error; err != nil {
		return fmt.Errorf("read usernames: %w", err)
	}
	seen := make(map[string]bool, len(rows))
	for _, r := range rows {
		if !seen[r.UsernameLower] {
			seen[r.UsernameLower] = true
			continue
		}
		if err := db.Exec("UPDATE users SET username_lower = ? WHERE id = ?", fmt.Sprintf("%s#%d", r.UsernameLower, r.ID), r.ID).Error; err != nil {
			return fmt.Errorf("disambiguate username %d: %w", r.ID, err)
		}
	}
	return nil
}

// translate maps gorm's not-found to ErrNotFound and duplicates to ErrDuplicate.
func translate(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, gorm.ErrRecordNotFound):
		return ErrNotFound
	case errors.Is(err, gorm.ErrDuplicatedKey):
		return ErrDuplicate
	}
	return err
}

// Page is a 1-based page request.
type Page struct{ Page, Size int }

// newestPage counts the rows q selects and loads one page of them, newest (highest id) first.
func newestPage[T any](q *gorm.DB, p Page) ([]T, int64, error) {
	var total int64
	if err := q.Count(&total).Error; err != nil {
		return nil, 0, err
	}
	var out []T
	err := q.Order("id DESC").Offset(p.Offset()).Limit(p.Size).Find(&out).Error
	return out, total, err
}

// Offset returns the SQL offset of the page.
func (p Page) Offset() int { return (p.Page - 1) * p.Size }

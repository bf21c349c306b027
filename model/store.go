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

	"github.com/libtnb/sqlite"
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
	logs *Store // usage logs' own database (LOG_SQL_DSN, AttachLogs); nil: logs live in DB
	// stmts prepares the hot writes (the log insert); nil (a Store built by hand) runs them unprepared.
	stmts *stmtCache
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
		return &Store{DB: db, Kind: "mysql", stmts: newStmtCache(db)}, nil
	}
	if dir := filepath.Dir(sqlitePath); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("create sqlite dir: %w", err)
		}
	}
	if err := privateFiles(sqlitePath); err != nil {
		return nil, err
	}
	// WAL lets readers proceed during the batched writer's commits; busy_timeout absorbs brief write overlaps;
	// temp_store in memory keeps each log batch's statement journal off a temp file (a pwrite per page).
	dsnSQLite := sqlitePath + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_pragma=temp_store(MEMORY)&_time_format=sqlite&_texttotime=0&_inttotime=0"
	db, err := gorm.Open(sqlite.Open(dsnSQLite), cfg)
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", sqlitePath, err)
	}
	sqlDB, _ := db.DB()
	// One writer at a time is what SQLite allows; a single connection avoids SQLITE_BUSY storms.
	sqlDB.SetMaxOpenConns(1)
	return &Store{DB: db, Kind: "sqlite", stmts: newStmtCache(db)}, nil
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
		sep = "&"
	}
	// The driver otherwise sends prepare, execute and close for every statement with arguments: one round trip
	// and one parse too many. Interpolation is safe with utf8mb4; the hot writes are prepared once (stmtCache).
	if !strings.Contains(dsn, "interpolateParams=") {
		dsn += sep + "interpolateParams=true"
	}
	return dsn
}

// insertIgnore is the dialect's INSERT that skips a row whose key is already stored.
func (s *Store) insertIgnore() string {
	if s.Kind == "sqlite" {
		return "INSERT OR IGNORE INTO"
	}
	return "INSERT IGNORE INTO"
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
	s.stmts.close()
	sqlDB, err := s.DB.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

// allModels lists every table, in creation order.
func allModels() []any {
	return []any{&User{}, &Token{}, &Group{}, &Option{}, &AuditLog{}, &Session{}, &Channel{}, &Price{}, &UsageLog{}, &Credit{}, &TopupOrder{}, &Redemption{}, &Tier{}, &AlertLog{}, &FleetBucket{}, &UsageDailyKey{}, &UsageDailyChannel{}, &UserIdentity{}, &EmailToken{}, &BackupCode{}, &RoutingConfig{}, &RoutingDecision{}, &MoneyBatch{}}
}

// Migrate creates or updates the schema. It is idempotent; on MySQL a named lock makes two nodes starting
// at once take turns.
func (s *Store) Migrate(ctx context.Context) error {
	if s.Kind != "mysql" {
		return migrate(s.DB.WithContext(ctx))
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
		return migrate(tx.Set("gorm:table_options", "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"))
	})
}

// migrate runs the steps that must precede AutoMigrate, AutoMigrate itself, and the backfills of new tables.
func migrate(db *gorm.DB) error {
	if err := backfillUsernameLower(db); err != nil {
		return err
	}
	hadUsers, hadCredits := db.Migrator().HasTable(&User{}), db.Migrator().HasTable(&Credit{})
	hadDaily := db.Migrator().HasTable(&UsageDailyKey{})
	if err := db.AutoMigrate(allModels()...); err != nil {
		return err
	}
	if !hadDaily {
		if err := backfillDaily(db); err != nil {
			return err
		}
	}
	if hadUsers && !hadCredits {
		return openingCredits(db)
	}
	return nil
}

// openingCredits gives every user of a database made before the credits table one "opening" credit of
// quota + used_quota, so that Σ credits − Σ spend = balance holds for balances granted before credits were
// recorded.
func openingCredits(db *gorm.DB) error {
	key := "'opening:' || id"
	if db.Dialector.Name() == "mysql" {
		key = "CONCAT('opening:', id)"
	}
	err := db.Exec(`INSERT INTO credits (user_id, units, source, ref, idem_key, actor_id, note, created_at)
		SELECT id, quota + used_quota, ?, '', `+key+`, 0, 'balance before credits were recorded', ?
		FROM users WHERE quota + used_quota <> 0`, CreditOpening, time.Now()).Error
	if err != nil {
		return fmt.Errorf("opening credits: %w", err)
	}
	return nil
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

// privateFiles makes the SQLite file (created here when missing) and its -wal and -shm companions readable by
// the owner only: they hold password hashes, sealed keys and every user's usage. SQLite creates -wal and -shm
// with the mode of the database file, so a 0600 database keeps them 0600 too; files of an older install that
// were left 0644 are tightened.
func privateFiles(sqlitePath string) error {
	f, err := os.OpenFile(sqlitePath, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open sqlite %s: %w", sqlitePath, err)
	}
	_ = f.Close()
	for _, p := range []string{sqlitePath, sqlitePath + "-wal", sqlitePath + "-shm"} {
		st, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return fmt.Errorf("stat %s: %w", p, err)
		}
		if st.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(p, st.Mode().Perm()&0o700); err != nil {
				return fmt.Errorf("make %s private: %w", p, err)
			}
		}
	}
	return nil
}

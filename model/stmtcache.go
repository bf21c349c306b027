package model

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"
)

// stmtCacheMost bounds how many statements one cache prepares: the hot writes are a handful of texts (the
// log insert at each batch size it meets); anything beyond runs unprepared. MySQL counts prepared statements
// per connection against max_prepared_stmt_count, so the bound matters.
const stmtCacheMost = 32

// stmtCache prepares the hot writes once per database (and, through database/sql, once per connection) so the
// server does not parse the same text again for every batch: SQLite's driver otherwise prepares on every
// Exec, and MySQL's driver sends prepare, execute and close for every statement with arguments.
//
// A statement is prepared in the background the first time its text is met (that call runs unprepared): the
// caller is usually inside a transaction, and on SQLite the transaction holds the only connection, so preparing
// on the database there and then would wait for itself.
type stmtCache struct {
	db      *sql.DB
	mu      sync.Mutex
	m       map[string]*sql.Stmt // nil value: being prepared, or the prepare failed (not tried again)
	closed  bool
	pending sync.WaitGroup
	used    atomic.Int64 // executions through a prepared statement (tests)
}

func newStmtCache(db *gorm.DB) *stmtCache {
	sqlDB, err := db.DB()
	if err != nil {
		return nil
	}
	return &stmtCache{db: sqlDB, m: map[string]*sql.Stmt{}}
}

// stmt returns the prepared statement for q, or nil while there is none (first use, cache full, prepare failed).
func (c *stmtCache) stmt(q string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m[q]; ok || c.closed || len(c.m) >= stmtCacheMost {
		return st
	}
	c.m[q] = nil
	c.pending.Add(1)
	go func() {
		defer c.pending.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		st, err := c.db.PrepareContext(ctx, q)
		c.mu.Lock()
		defer c.mu.Unlock()
		if err == nil && c.closed {
			_ = st.Close()
			return
		}
		if err == nil {
			c.m[q] = st
		}
	}()
	return nil
}

// exec runs q with args on pool (gorm's connection: the database or a transaction of it) through the prepared
// statement when there is one for this database, else as it would run without the cache. A nil cache is
// valid and prepares nothing.
func (c *stmtCache) exec(ctx context.Context, pool gorm.ConnPool, q string, args ...any) (sql.Result, error) {
	if c != nil {
		switch p := pool.(type) {
		case *sql.Tx:
			if st := c.stmt(q); st != nil {
				c.used.Add(1)
				return p.StmtContext(ctx, st).ExecContext(ctx, args...)
			}
		case *sql.DB:
			if p == c.db {
				if st := c.stmt(q); st != nil {
					c.used.Add(1)
					return st.ExecContext(ctx, args...)
				}
			}
		}
	}
	return pool.ExecContext(ctx, q, args...)
}

// close releases the prepared statements (before the database closes; a prepare still running finishes first).
func (c *stmtCache) close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.pending.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, st := range c.m {
		if st != nil {
			_ = st.Close()
		}
		delete(c.m, q)
	}
}

package apptest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// StoreHolds closes n (so SQLite checkpoints its WAL) and reports where the store holds any of needles, as
// place and needle: a SQLite file (the database, -wal or -shm), or a text-like column of any MySQL table.
// Empty place means nowhere. It fails the test when the store is too small to be the real database.
func (e *Env) StoreHolds(t testing.TB, n *Node, needles ...string) (place, needle string) {
	t.Helper()
	if e.Shape == "sqlite" {
		n.Server.Close()
		if err := n.App.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		files, _ := filepath.Glob(e.Cfg.SQLitePath + "*")
		total := 0
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			total += len(b)
			for _, s := range needles {
				if bytes.Contains(b, []byte(s)) {
					return filepath.Base(f), s
				}
			}
		}
		if total < 4096 {
			t.Fatalf("database files at %s hold only %d bytes: not the real database?", e.Cfg.SQLitePath, total)
		}
		return "", ""
	}
	db := n.App.Store.DB
	var cols []struct{ Tbl, Col string }
	err := db.Raw(`SELECT table_name AS tbl, column_name AS col FROM information_schema.columns
		WHERE table_schema = DATABASE() AND data_type IN ('char','varchar','tinytext','text','mediumtext','longtext',
		'binary','varbinary','tinyblob','blob','mediumblob','longblob','json','enum','set')`).Scan(&cols).Error
	if err != nil || len(cols) < 10 {
		t.Fatalf("text columns: %d (%v)", len(cols), err)
	}
	for _, c := range cols {
		for _, s := range needles {
			var hits int64
			q := fmt.Sprintf("SELECT COUNT(*) FROM `%s` WHERE `%s` LIKE ?", c.Tbl, c.Col)
			if err := db.Raw(q, "%"+s+"%").Scan(&hits).Error; err != nil {
				t.Fatalf("%s.%s: %v", c.Tbl, c.Col, err)
			}
			if hits > 0 {
				return c.Tbl + "." + c.Col, s
			}
		}
	}
	return "", ""
}

package config

import (
	"errors"
	"path/filepath"
	"testing"
)

func TestLoad_LogDatabaseAndSpool(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	c, err := Load(env(map[string]string{"DATA_DIR": "/d"}))
	if err != nil || c.LogSQLDSN != "" || c.LogSpoolDir != filepath.Join("/d", "log-spool") || c.LogSpoolMaxBytes != 1<<30 {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	c, err = Load(env(map[string]string{"LOG_SQL_DSN": "u:p@tcp(db:3306)/logs", "LOG_SPOOL_DIR": "/s", "LOG_SPOOL_MAX_BYTES": "2097152"}))
	if err != nil || c.LogSQLDSN != "u:p@tcp(db:3306)/logs" || c.LogSpoolDir != "/s" || c.LogSpoolMaxBytes != 2097152 {
		t.Fatalf("set: %+v %v", c, err)
	}
	for name, kv := range map[string]map[string]string{
		"LOG_SQL_DSN":         {"LOG_SQL_DSN": "logs.db"},
		"LOG_SPOOL_MAX_BYTES": {"LOG_SPOOL_MAX_BYTES": "10"},
	} {
		_, err := Load(env(kv))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Var != name {
			t.Fatalf("%v: %v", kv, err)
		}
	}
	if m := (Config{LogSQLDSN: "u:secret@tcp(db)/logs"}).Masked(); !containsMasked(m) {
		t.Fatalf("masked: %v", m)
	}
}

func containsMasked(kv []any) bool {
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i] == "log_sql_dsn" {
			return kv[i+1] == "u:****@tcp(db)/logs"
		}
	}
	return false
}

// Package config reads Tollgate's configuration once from the environment and validates it.
package config

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Config is the typed, validated configuration of one Tollgate process.
type Config struct {
	Port           int
	SQLDSN         string // MySQL DSN; empty means SQLite
	SQLitePath     string
	RedisURL       string // empty means in-process cache and bus
	SecretKey      string
	SecretKeyFile  string // where a generated key was stored, empty when SECRET_KEY was given
	RootPassword   string
	LogLevel       slog.Level
	TrustedProxies []string
	DataDir        string
	MetricsToken   string
	MetricsAddr    string // when set, /metrics is served only on this (internal) listen address
	CookieSecure   CookieSecure
	PublicURL      string // the site's public base URL for payment notify/return URLs; empty: from the request
	StripeAPIBase  string // Stripe API base URL (a proxy, or a fake in tests); empty: https://api.stripe.com
	// LogSQLDSN puts usage logs and their daily sums in their own MySQL database (empty: the main one);
	// LogSpoolDir and LogSpoolMaxBytes bound the on-disk spool that holds log rows while it is down.
	LogSQLDSN        string
	LogSpoolDir      string
	LogSpoolMaxBytes int64
	// GCHeadroomMB is the garbage the collector may let pile up on a small live heap while the process is busy
	// (GC_HEADROOM_MB, default 48; 0 turns the pacing off, and so does a GOGC the operator set). See gcpace.
	GCHeadroomMB int
}

// CookieSecure says when the console's refresh cookie carries the Secure flag (COOKIE_SECURE).
type CookieSecure string

// COOKIE_SECURE values: auto sets Secure when the request came over HTTPS (TLS, or a trusted proxy saying
// X-Forwarded-Proto: https); true always (the browser then drops the cookie over plain HTTP); false never.
const (
	CookieSecureAuto   CookieSecure = "auto"
	CookieSecureAlways CookieSecure = "true"
	CookieSecureNever  CookieSecure = "false"
)

// StoreKind names the SQL store in use ("sqlite" or "mysql").
func (c Config) StoreKind() string {
	if c.SQLDSN == "" {
		return "sqlite"
	}
	return "mysql"
}

// CacheKind names the cache in use ("memory" or "redis").
func (c Config) CacheKind() string {
	if c.RedisURL == "" {
		return "memory"
	}
	return "redis"
}

// FieldError names the variable that stopped start-up and why.
type FieldError struct {
	Var    string
	Reason string
}

func (e *FieldError) Error() string { return e.Var + ": " + e.Reason }

// Load reads the configuration from getenv (os.Getenv in production). A bad value returns a *FieldError.
func Load(getenv func(string) string) (Config, error) {
	c := Config{DataDir: "./data", LogLevel: slog.LevelInfo, CookieSecure: CookieSecureAuto}
	if v := getenv("DATA_DIR"); v != "" {
		c.DataDir = v
	}
	port := getenv("PORT")
	if port == "" {
		c.Port = 3000
	} else {
		p, err := strconv.Atoi(port)
		if err != nil || p < 1 || p > 65535 {
			return c, &FieldError{"PORT", fmt.Sprintf("%q is not a TCP port (1-65535)", port)}
		}
		c.Port = p
	}
	c.SQLDSN = strings.TrimSpace(getenv("SQL_DSN"))
	if c.SQLDSN != "" && !strings.Contains(c.SQLDSN, "@") && !strings.Contains(c.SQLDSN, "/") {
		return c, &FieldError{"SQL_DSN", "expected a MySQL DSN like user:pass@tcp(host:3306)/db?parseTime=true"}
	}
	c.LogSQLDSN = strings.TrimSpace(getenv("LOG_SQL_DSN"))
	if c.LogSQLDSN != "" && !strings.Contains(c.LogSQLDSN, "@") && !strings.Contains(c.LogSQLDSN, "/") {
		return c, &FieldError{"LOG_SQL_DSN", "expected a MySQL DSN like user:pass@tcp(host:3306)/logs (MySQL only)"}
	}
	c.LogSpoolDir = getenv("LOG_SPOOL_DIR")
	if c.LogSpoolDir == "" {
		c.LogSpoolDir = filepath.Join(c.DataDir, "log-spool")
	}
	c.LogSpoolMaxBytes = 1 << 30
	if v := strings.TrimSpace(getenv("LOG_SPOOL_MAX_BYTES")); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1<<20 {
			return c, &FieldError{"LOG_SPOOL_MAX_BYTES", "bytes, at least 1048576 (1 MiB)"}
		}
		c.LogSpoolMaxBytes = n
	}
	c.GCHeadroomMB = 48
	if v := strings.TrimSpace(getenv("GC_HEADROOM_MB")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 4096 {
			return c, &FieldError{"GC_HEADROOM_MB", "MiB, 0 (off) to 4096"}
		}
		c.GCHeadroomMB = n
	}
	if strings.TrimSpace(getenv("GOGC")) != "" {
		c.GCHeadroomMB = 0 // the operator paces the collector
	}
	c.SQLitePath = getenv("SQLITE_PATH")
	if c.SQLitePath == "" {
		c.SQLitePath = filepath.Join(c.DataDir, "tollgate.db")
	}
	c.RedisURL = strings.TrimSpace(getenv("REDIS_URL"))
	if c.RedisURL != "" {
		u, err := url.Parse(c.RedisURL)
		if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
			return c, &FieldError{"REDIS_URL", "expected redis://[user:pass@]host:port[/db]"}
		}
	}
	c.SecretKey = getenv("SECRET_KEY")
	if c.SecretKey != "" && len(c.SecretKey) < 16 {
		return c, &FieldError{"SECRET_KEY", "must be at least 16 characters"}
	}
	if c.SecretKey == "" && c.SQLDSN != "" {
		return c, &FieldError{"SECRET_KEY", "is required when SQL_DSN points at MySQL (every node must share it)"}
	}
	c.RootPassword = getenv("ROOT_PASSWORD")
	if c.RootPassword != "" && len(c.RootPassword) < 8 {
		return c, &FieldError{"ROOT_PASSWORD", "must be at least 8 characters"}
	}
	switch strings.ToLower(getenv("LOG_LEVEL")) {
	case "", "info":
	case "debug":
		c.LogLevel = slog.LevelDebug
	case "warn", "warning":
		c.LogLevel = slog.LevelWarn
	case "error":
		c.LogLevel = slog.LevelError
	default:
		return c, &FieldError{"LOG_LEVEL", "must be debug, info, warn or error"}
	}
	if v := strings.TrimSpace(getenv("TRUSTED_PROXIES")); v != "" {
		for _, p := range strings.Split(v, ",") {
			p = strings.TrimSpace(p)
			if p == "" {
				continue
			}
			if net.ParseIP(p) == nil {
				if _, _, err := net.ParseCIDR(p); err != nil {
					return c, &FieldError{"TRUSTED_PROXIES", fmt.Sprintf("%q is neither an IP nor a CIDR", p)}
				}
			}
			c.TrustedProxies = append(c.TrustedProxies, p)
		}
	}
	switch v := CookieSecure(strings.ToLower(strings.TrimSpace(getenv("COOKIE_SECURE")))); v {
	case "":
	case CookieSecureAuto, CookieSecureAlways, CookieSecureNever:
		c.CookieSecure = v
	default:
		return c, &FieldError{"COOKIE_SECURE", "must be auto, true or false"}
	}
	c.MetricsToken = getenv("METRICS_TOKEN")
	c.MetricsAddr = strings.TrimSpace(getenv("METRICS_ADDR"))
	if c.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			return c, &FieldError{"METRICS_ADDR", "expected host:port, e.g. 127.0.0.1:9090"}
		}
	}
	for _, v := range []struct {
		name string
		dst  *string
	}{{"PUBLIC_URL", &c.PublicURL}, {"STRIPE_API_BASE", &c.StripeAPIBase}} {
		raw := strings.TrimRight(strings.TrimSpace(getenv(v.name)), "/")
		if raw == "" {
			continue
		}
		if u, err := url.Parse(raw); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return c, &FieldError{v.name, "expected an http(s) URL like https://example.com"}
		}
		*v.dst = raw
	}
	return c, nil
}

// EnsureSecret generates and persists SECRET_KEY under DataDir when none was given.
// It returns true when a key was generated on this start.
func (c *Config) EnsureSecret() (bool, error) {
	if c.SecretKey != "" {
		return false, nil
	}
	path := filepath.Join(c.DataDir, "secret.key")
	if b, err := os.ReadFile(path); err == nil {
		c.SecretKey = strings.TrimSpace(string(b))
		c.SecretKeyFile = path
		if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 {
			// A key file others can read (an older install, a copied file) is tightened to the owner.
			if err := os.Chmod(path, 0o600); err != nil {
				return false, &FieldError{"SECRET_KEY", "cannot make " + path + " private: " + err.Error()}
			}
		}
		if len(c.SecretKey) < 16 {
			return false, &FieldError{"SECRET_KEY", path + " holds a key shorter than 16 characters"}
		}
		return false, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, &FieldError{"SECRET_KEY", "cannot read " + path + ": " + err.Error()}
	}
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return false, &FieldError{"DATA_DIR", err.Error()}
	}
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return false, err
	}
	c.SecretKey = hex.EncodeToString(buf)
	if err := os.WriteFile(path, []byte(c.SecretKey+"\n"), 0o600); err != nil {
		return false, &FieldError{"SECRET_KEY", "cannot write " + path + ": " + err.Error()}
	}
	c.SecretKeyFile = path
	return true, nil
}

// Masked returns the configuration as printable key/values with secrets hidden.
func (c Config) Masked() []any {
	return []any{
		"port", c.Port, "store", c.StoreKind(), "sql_dsn", maskDSN(c.SQLDSN), "sqlite_path", c.SQLitePath,
		"cache", c.CacheKind(), "redis_url", maskURL(c.RedisURL), "secret_key", mask(c.SecretKey),
		"root_password", mask(c.RootPassword), "log_level", c.LogLevel.String(),
		"trusted_proxies", strings.Join(c.TrustedProxies, ","), "metrics_token", mask(c.MetricsToken), "metrics_addr", c.MetricsAddr,
		"cookie_secure", string(c.CookieSecure),
		"public_url", c.PublicURL, "stripe_api_base", c.StripeAPIBase,
		"log_sql_dsn", maskDSN(c.LogSQLDSN), "log_spool_dir", c.LogSpoolDir, "log_spool_max_bytes", c.LogSpoolMaxBytes,
		"gc_headroom_mb", c.GCHeadroomMB,
	}
}

func mask(s string) string {
	if s == "" {
		return ""
	}
	return "****"
}

func maskDSN(dsn string) string {
	at := strings.LastIndex(dsn, "@")
	if at < 0 {
		return dsn
	}
	user := dsn[:at]
	if i := strings.Index(user, ":"); i >= 0 {
		user = user[:i] + ":****"
	}
	return user + dsn[at:]
}

func maskURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "****")
	}
	return u.String()
}

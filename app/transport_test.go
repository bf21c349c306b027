package app_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"tollgate/app"
	"tollgate/app/apptest"
	"tollgate/config"
)

// get sends a request to base+path with extra header pairs through client (the default one when nil).
func get(t *testing.T, client *http.Client, method, url string, body string, hdr ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	if client == nil {
		client = http.DefaultClient
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}

func TestSecurityHeaders_OnConsoleAPIAndRelayAnswers(t *testing.T) {
	n := apptest.New(t)
	for _, c := range []struct {
		method, path string
		console      bool
	}{
		{"GET", "/", true},
		{"GET", "/console/logs", true},
		{"GET", "/api/status", false},
		{"GET", "/api/nope", false},
		{"GET", "/api/user/self", false},
		{"POST", "/v1/chat/completions", false},
		{"GET", "/v1/models", false},
		{"GET", "/healthz", false},
	} {
		res := get(t, nil, c.method, n.URL+c.path, "", "X-Forwarded-Proto", "https")
		h := res.Header
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" || h.Get("X-Frame-Options") != "DENY" {
			t.Fatalf("%s %s (%d): headers %v", c.method, c.path, res.StatusCode, h)
		}
		csp := h.Get("Content-Security-Policy")
		if !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Fatalf("%s %s: CSP %q lacks frame-ancestors 'none'", c.method, c.path, csp)
		}
		if c.console != strings.Contains(csp, "script-src 'self'") {
			t.Fatalf("%s %s: CSP %q (console page: %v)", c.method, c.path, csp, c.console)
		}
		// Plain HTTP, and X-Forwarded-Proto from a peer that is not a trusted proxy: no HSTS.
		if v := h.Get("Strict-Transport-Security"); v != "" {
			t.Fatalf("%s %s: HSTS %q over plain HTTP from an untrusted peer", c.method, c.path, v)
		}
	}
}

// loginCookie signs root in and returns the refresh cookie's Set-Cookie line and the HSTS header.
func loginCookie(t *testing.T, client *http.Client, base string, hdr ...string) (string, string) {
	t.Helper()
	res := get(t, client, "POST", base+"/api/auth/login", `{"username":"root","password":"`+apptest.RootPassword+`"}`, hdr...)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("login: %d", res.StatusCode)
	}
	for _, line := range res.Header.Values("Set-Cookie") {
		if strings.HasPrefix(line, "tollgate_refresh=") {
			return line, res.Header.Get("Strict-Transport-Security")
		}
	}
	t.Fatalf("login set no refresh cookie: %v", res.Header)
	return "", ""
}

func secureCookie(line string) bool {
	for _, part := range strings.Split(line, ";") {
		if strings.EqualFold(strings.TrimSpace(part), "Secure") {
			return true
		}
	}
	return false
}

func TestHTTPS_TrustedProxyOrTLS_GetsHSTSAndSecureCookie(t *testing.T) {
	for _, c := range []struct {
		name     string
		mode     config.CookieSecure
		trusted  []string
		tls      bool
		hdr      []string
		secure   bool
		wantHSTS bool
	}{
		{"auto, plain http", config.CookieSecureAuto, nil, false, nil, false, false},
		{"auto, forwarded https from an untrusted peer", config.CookieSecureAuto, nil, false, []string{"X-Forwarded-Proto", "https"}, false, false},
		{"auto, forwarded https from a trusted proxy", config.CookieSecureAuto, []string{"127.0.0.1/32"}, false, []string{"X-Forwarded-Proto", "https"}, true, true},
		{"auto, forwarded http from a trusted proxy", config.CookieSecureAuto, []string{"127.0.0.1"}, false, []string{"X-Forwarded-Proto", "http"}, false, false},
		{"auto, tls", config.CookieSecureAuto, nil, true, nil, true, true},
		{"false, tls", config.CookieSecureNever, nil, true, nil, false, true},
		{"true, plain http", config.CookieSecureAlways, nil, false, nil, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := apptest.NewEnv(t)
			e.Cfg.CookieSecure, e.Cfg.TrustedProxies = c.mode, c.trusted
			n := e.Start(t)
			base, client := n.URL, http.DefaultClient
			if c.tls {
				srv := httptest.NewTLSServer(n.App.Handler)
				t.Cleanup(srv.Close)
				base, client = srv.URL, srv.Client()
			}
			line, hsts := loginCookie(t, client, base, c.hdr...)
			if secureCookie(line) != c.secure {
				t.Fatalf("refresh cookie %q: Secure = %v, want %v", line, secureCookie(line), c.secure)
			}
			if (hsts != "") != c.wantHSTS || (hsts != "" && !strings.Contains(hsts, "max-age=")) {
				t.Fatalf("HSTS = %q, want present: %v", hsts, c.wantHSTS)
			}
		})
	}
}

// perm is a file's permission bits.
func perm(t *testing.T, path string) os.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

func TestDataFiles_AreOwnerOnly(t *testing.T) {
	root := t.TempDir()
	dataDir := filepath.Join(root, "data")
	start := func() (*app.App, config.Config) {
		t.Helper()
		// Always SQLite here: the files are the subject, whatever the pass's shape.
		cfg, err := config.Load(func(k string) string {
			return map[string]string{"DATA_DIR": dataDir, "ROOT_PASSWORD": apptest.RootPassword}[k]
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cfg.EnsureSecret(); err != nil {
			t.Fatal(err)
		}
		a, _, err := app.New(context.Background(), cfg, app.Options{BcryptCost: bcrypt.MinCost})
		if err != nil {
			t.Fatal(err)
		}
		return a, cfg
	}
	a, cfg := start()
	// Write through the store so the WAL and shared-memory files exist while the node runs.
	if _, err := a.Channels.SealHeaderOverrides(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := a.Store.DB.Exec("CREATE TABLE perm_probe (x TEXT)").Error; err != nil {
		t.Fatal(err)
	}
	if got := perm(t, dataDir); got != 0o700 {
		t.Fatalf("data dir mode %o, want 700", got)
	}
	files := []string{cfg.SQLitePath, cfg.SQLitePath + "-wal", cfg.SQLitePath + "-shm", filepath.Join(dataDir, "secret.key")}
	for _, f := range files {
		if got := perm(t, f); got != 0o600 {
			t.Fatalf("%s mode %o, want 600", filepath.Base(f), got)
		}
	}
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	// An older install left the files readable by others: the next start tightens them.
	for _, f := range []string{cfg.SQLitePath, filepath.Join(dataDir, "secret.key")} {
		if err := os.Chmod(f, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dataDir, "secret.key"))
	a, _ = start()
	defer a.Close(context.Background())
	for _, f := range files {
		if _, err := os.Stat(f); err == nil {
			if got := perm(t, f); got != 0o600 {
				t.Fatalf("after restart %s mode %o, want 600", filepath.Base(f), got)
			}
		}
	}
	if b2, _ := os.ReadFile(filepath.Join(dataDir, "secret.key")); !bytes.Equal(b, b2) {
		t.Fatal("the secret changed on restart")
	}
}

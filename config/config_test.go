package config

import (
	"errors"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoad_DefaultsRunWithNothingInstalled(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Port != 3000 || c.StoreKind() != "sqlite" || c.CacheKind() != "memory" || !strings.HasSuffix(c.SQLitePath, "tollgate.db") {
		t.Fatalf("unexpected defaults: %+v", c)
	}
}

func TestLoad_BadValueNamesTheVariable(t *testing.T) {
	cases := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"PORT": "abc"}, "PORT"},
		{map[string]string{"PORT": "70000"}, "PORT"},
		{map[string]string{"REDIS_URL": "localhost:6379"}, "REDIS_URL"},
		{map[string]string{"SQL_DSN": "root:@tcp(127.0.0.1:3306)/test"}, "SECRET_KEY"},
		{map[string]string{"SECRET_KEY": "short"}, "SECRET_KEY"},
		{map[string]string{"LOG_LEVEL": "loud"}, "LOG_LEVEL"},
		{map[string]string{"TRUSTED_PROXIES": "10.0.0.0/8,nope"}, "TRUSTED_PROXIES"},
		{map[string]string{"ROOT_PASSWORD": "123"}, "ROOT_PASSWORD"},
		{map[string]string{"COOKIE_SECURE": "yes"}, "COOKIE_SECURE"},
		{map[string]string{"STRIPE_API_BASE": "api.stripe.com"}, "STRIPE_API_BASE"},
		{map[string]string{"PUBLIC_URL": "ftp://example.com"}, "PUBLIC_URL"},
	}
	for _, tc := range cases {
		_, err := Load(env(tc.env))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Var != tc.want {
			t.Errorf("%v: got %v, want error naming %s", tc.env, err, tc.want)
		}
	}
}

func TestEnsureSecret_GeneratesOnceAndKeepsIt(t *testing.T) {
	dir := t.TempDir()
	c, _ := Load(env(map[string]string{"DATA_DIR": dir}))
	gen, err := c.EnsureSecret()
	if err != nil || !gen || len(c.SecretKey) < 32 {
		t.Fatalf("first start: gen=%v err=%v key=%q", gen, err, c.SecretKey)
	}
	c2, _ := Load(env(map[string]string{"DATA_DIR": dir}))
	gen2, err := c2.EnsureSecret()
	if err != nil || gen2 || c2.SecretKey != c.SecretKey {
		t.Fatalf("second start must reuse the key: gen=%v err=%v", gen2, err)
	}
}

func TestMasked_HidesSecrets(t *testing.T) {
	c, _ := Load(env(map[string]string{"SQL_DSN": "u:hunter2@tcp(db:3306)/x", "SECRET_KEY": "0123456789abcdefXYZ", "REDIS_URL": "redis://:pw@r:6379/0"}))
	out := strings.ToLower(strings.Join(func() []string {
		var s []string
		for _, v := range c.Masked() {
			s = append(s, strings.TrimSpace(strings.ReplaceAll(toString(v), "\n", "")))
		}
		return s
	}(), " "))
	for _, secret := range []string{"hunter2", "0123456789abcdefxyz", ":pw@"} {
		if strings.Contains(out, secret) {
			t.Fatalf("masked config leaks %q: %s", secret, out)
		}
	}
}

func toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	default:
		return ""
	}
}

func TestLoad_CookieSecureDefaultsToAuto(t *testing.T) {
	for in, want := range map[string]CookieSecure{"": CookieSecureAuto, "auto": CookieSecureAuto, "TRUE": CookieSecureAlways, " false ": CookieSecureNever} {
		c, err := Load(env(map[string]string{"COOKIE_SECURE": in}))
		if err != nil || c.CookieSecure != want {
			t.Errorf("COOKIE_SECURE=%q: %q, %v; want %q", in, c.CookieSecure, err, want)
		}
	}
}

func TestLoad_PaymentURLsAreTrimmed(t *testing.T) {
	c, err := Load(env(map[string]string{"STRIPE_API_BASE": " http://127.0.0.1:12111/ ", "PUBLIC_URL": "https://gw.example.com/"}))
	if err != nil || c.StripeAPIBase != "http://127.0.0.1:12111" || c.PublicURL != "https://gw.example.com" {
		t.Fatalf("got %q %q %v", c.StripeAPIBase, c.PublicURL, err)
	}
}

package middleware

import (
	"crypto/tls"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
)

// serve runs one request through Security on a bare engine and reports HTTPS(c) and the HSTS header.
func serve(trusted []string, remote string, tlsOn bool, proto string) (bool, string) {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(Security(trusted))
	var https bool
	r.GET("/", func(c *gin.Context) { https = HTTPS(c) })
	req := httptest.NewRequest("GET", "/", nil)
	req.RemoteAddr = remote
	if tlsOn {
		req.TLS = &tls.ConnectionState{}
	}
	if proto != "" {
		req.Header.Set("X-Forwarded-Proto", proto)
	}
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)
	return https, w.Header().Get("Strict-Transport-Security")
}

func TestSecurity_HTTPSOnlyFromTLSOrATrustedProxy(t *testing.T) {
	cases := []struct {
		name    string
		trusted []string
		remote  string
		tls     bool
		proto   string
		want    bool
	}{
		{"plain", nil, "203.0.113.9:5000", false, "", false},
		{"tls", nil, "203.0.113.9:5000", true, "", true},
		{"forged proto, no trusted proxies", nil, "203.0.113.9:5000", false, "https", false},
		{"forged proto, peer not trusted", []string{"10.0.0.0/8"}, "203.0.113.9:5000", false, "https", false},
		{"trusted CIDR", []string{"10.0.0.0/8"}, "10.1.2.3:5000", false, "https", true},
		{"trusted IP, proto list nearest first", []string{"10.1.2.3"}, "10.1.2.3:5000", false, "HTTPS, http", true},
		{"trusted proxy says http", []string{"10.1.2.3"}, "10.1.2.3:5000", false, "http", false},
		{"IPv6 proxy", []string{"fd00::/8"}, "[fd00::1]:5000", false, "https", true},
		{"IPv4-mapped peer", []string{"10.1.2.3"}, "[::ffff:10.1.2.3]:5000", false, "https", true},
	}
	for _, c := range cases {
		https, hsts := serve(c.trusted, c.remote, c.tls, c.proto)
		if https != c.want || (hsts != "") != c.want {
			t.Errorf("%s: HTTPS = %v, HSTS = %q; want %v", c.name, https, hsts, c.want)
		}
	}
}

// BenchmarkSecurity is the per-request cost the headers add to every relay call: compare the two runs.
func BenchmarkSecurity(b *testing.B) {
	gin.SetMode(gin.ReleaseMode)
	for _, with := range []bool{false, true} {
		name := "without"
		r := gin.New()
		r.Use(RequestIDs()) // in production the context keys and the header map exist already
		if with {
			name = "with"
			r.Use(Security([]string{"10.0.0.0/8"}))
		}
		r.POST("/v1/chat/completions", func(c *gin.Context) { c.Status(200) })
		req := httptest.NewRequest("POST", "/v1/chat/completions", nil)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r.ServeHTTP(httptest.NewRecorder(), req)
			}
		})
	}
}

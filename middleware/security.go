package middleware

import (
	"net"
	"net/netip"
	"strings"

	"github.com/gin-gonic/gin"
)

const keyHTTPS = "tg.https"

// consoleCSP is the Content-Security-Policy of the console's HTML. The Vite build loads every script and
// stylesheet from our own origin (no inline script), so scripts are 'self' only. Styles need 'unsafe-inline':
// Ant Design's CSS-in-JS inserts <style> elements at run time and antd and ECharts set style attributes; a
// stylesheet cannot run code, so this keeps script injection closed. Images allow data: URIs (antd's inline
// SVG placeholders) and ECharts draws on canvas (no blob: or worker needed).
const consoleCSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; " +
	"form-action 'self'; frame-ancestors 'none'"

// apiCSP is the policy of everything that is not the console's HTML (JSON, SSE, assets): nothing in them
// may load or run anything, nor be framed.
const apiCSP = "default-src 'none'; frame-ancestors 'none'"

// hstsValue asks browsers to use HTTPS for a year. No includeSubDomains: a self-hosted gateway on one
// sub-domain must not decide for its siblings.
const hstsValue = "max-age=31536000"

// Header values are shared, never-mutated slices assigned straight into the header map: this runs on
// every relay request, and Header.Set would canonicalize and allocate each time.
var (
	valNosniff  = []string{"nosniff"}
	valReferrer = []string{"no-referrer"}
	valDeny     = []string{"DENY"}
	valAPICSP   = []string{apiCSP}
	valHSTS     = []string{hstsValue}
)

// Security sets the security headers on every response and notes whether the request reached Tollgate over
// HTTPS (read with HTTPS): directly over TLS, or from a trusted proxy (TRUSTED_PROXIES) that says
// X-Forwarded-Proto: https. HSTS is sent only then: over plain HTTP a browser ignores it, and believing an
// untrusted client's X-Forwarded-Proto would let anyone switch it on. The referrer policy is no-referrer:
// the console never needs the Referer header, and its URLs (log filters, user ids) stay private.
func Security(trustedProxies []string) gin.HandlerFunc {
	trusted := parsePrefixes(trustedProxies)
	return func(c *gin.Context) {
		https := c.Request.TLS != nil || (forwardedHTTPS(c) && peerTrusted(c, trusted))
		c.Set(keyHTTPS, https)
		h := c.Writer.Header()
		h["X-Content-Type-Options"] = valNosniff
		h["Referrer-Policy"] = valReferrer
		h["X-Frame-Options"] = valDeny
		h["Content-Security-Policy"] = valAPICSP
		if https {
			h["Strict-Transport-Security"] = valHSTS
		}
		c.Next()
	}
}

// SetConsoleCSP replaces the default policy with the console's before its HTML is served.
func SetConsoleCSP(c *gin.Context) { c.Writer.Header().Set("Content-Security-Policy", consoleCSP) }

// HTTPS reports whether the request reached Tollgate over HTTPS (see Security).
func HTTPS(c *gin.Context) bool { return c.GetBool(keyHTTPS) }

// forwardedHTTPS reads the first X-Forwarded-Proto value (the proxy nearest the client when several append).
func forwardedHTTPS(c *gin.Context) bool {
	v := c.Request.Header.Get("X-Forwarded-Proto")
	if v == "" {
		return false
	}
	if i := strings.IndexByte(v, ','); i >= 0 {
		v = v[:i]
	}
	return strings.EqualFold(strings.TrimSpace(v), "https")
}

// peerTrusted reports whether the direct peer is one of the trusted proxies.
func peerTrusted(c *gin.Context, trusted []netip.Prefix) bool {
	if len(trusted) == 0 {
		return false
	}
	host, _, err := net.SplitHostPort(c.Request.RemoteAddr)
	if err != nil {
		host = c.Request.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	for _, p := range trusted {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// parsePrefixes turns TRUSTED_PROXIES entries (IPs or CIDRs, validated by config) into prefixes.
func parsePrefixes(list []string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range list {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
		} else if ip, err := netip.ParseAddr(s); err == nil {
			ip = ip.Unmap()
			out = append(out, netip.PrefixFrom(ip, ip.BitLen()))
		}
	}
	return out
}

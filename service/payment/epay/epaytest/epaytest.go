// Package epaytest is a fake Epay gateway for tests: a submit.php that checks the merchant's signature and
// shows a pay button, and a notifier that signs its notifications the way a real gateway does. Its signing
// code is written separately from package epay on purpose, so a mistake in one is caught by the other.
package epaytest

import (
	"crypto/md5"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Gateway is a running fake Epay gateway for one merchant.
type Gateway struct {
	PID, Key string
	Server   *httptest.Server
	URL      string // the gateway_url to configure

	mu       sync.Mutex
	submits  []url.Values
	tradeSeq atomic.Int64
}

// New starts a gateway for merchant pid with key; it stops when the test ends.
func New(t testing.TB, pid, key string) *Gateway {
	g := &Gateway{PID: pid, Key: key}
	mux := http.NewServeMux()
	mux.HandleFunc("/submit.php", g.submit)
	mux.HandleFunc("/pay", g.pay)
	g.Server = httptest.NewServer(mux)
	g.URL = g.Server.URL
	t.Cleanup(g.Server.Close)
	return g
}

// SignParams signs params as an Epay gateway does: names other than sign/sign_type with non-empty values,
// sorted, k=v joined by &, the key appended, lowercase hex MD5.
func SignParams(params map[string]string, key string) string {
	var keys []string
	for k, v := range params {
		if k != "sign" && k != "sign_type" && v != "" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + params[k]
	}
	return fmt.Sprintf("%x", md5.Sum([]byte(strings.Join(parts, "&")+key)))
}

// Submits returns the submit.php requests the gateway accepted.
func (g *Gateway) Submits() []url.Values {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]url.Values(nil), g.submits...)
}

func flat(v url.Values) map[string]string {
	m := map[string]string{}
	for k := range v {
		m[k] = v.Get(k)
	}
	return m
}

// CheckSubmit verifies a submit.php URL the way the gateway does; "" when valid, else why not.
func (g *Gateway) CheckSubmit(v url.Values) string {
	for _, k := range []string{"pid", "type", "out_trade_no", "notify_url", "return_url", "name", "money", "sign"} {
		if v.Get(k) == "" {
			return "missing " + k
		}
	}
	switch {
	case v.Get("pid") != g.PID:
		return "unknown merchant"
	case v.Get("sign_type") != "MD5":
		return "sign_type must be MD5"
	case v.Get("sign") != SignParams(flat(v), g.Key):
		return "bad sign"
	}
	return ""
}

func (g *Gateway) submit(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	if why := g.CheckSubmit(r.Form); why != "" {
		http.Error(w, why, http.StatusBadRequest)
		return
	}
	g.mu.Lock()
	g.submits = append(g.submits, r.Form)
	g.mu.Unlock()
	q := url.Values{}
	for k := range r.Form {
		q.Set(k, r.Form.Get(k))
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, `<!doctype html><title>Fake Epay</title><h1>Fake Epay</h1><p>Order %s: %s</p>`+
		`<form method="post" action="/pay?%s"><button type="submit" id="pay">Pay</button></form>`,
		html.EscapeString(r.Form.Get("out_trade_no")), html.EscapeString(r.Form.Get("money")), html.EscapeString(q.Encode()))
}

// pay is the pay button: notify the merchant, then send the customer to return_url.
func (g *Gateway) pay(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if why := g.CheckSubmit(q); why != "" {
		http.Error(w, why, http.StatusBadRequest)
		return
	}
	p := g.PaidParams(q.Get("out_trade_no"), q.Get("money"), q.Get("type"))
	status, body, err := Post(q.Get("notify_url"), p)
	if err != nil || status != http.StatusOK || body != "success" {
		http.Error(w, fmt.Sprintf("merchant answered %d %q (%v)", status, body, err), http.StatusBadGateway)
		return
	}
	http.Redirect(w, r, q.Get("return_url"), http.StatusFound)
}

// PaidParams are the signed parameters of a TRADE_SUCCESS notify for an order.
func (g *Gateway) PaidParams(orderNo, money, method string) map[string]string {
	p := map[string]string{"pid": g.PID, "trade_no": fmt.Sprintf("EP%08d", g.tradeSeq.Add(1)), "out_trade_no": orderNo,
		"type": method, "name": "Top-up " + orderNo, "money": money, "trade_status": "TRADE_SUCCESS"}
	g.Resign(p)
	return p
}

// Resign signs p (after a test changed it, to forge a notify with a valid sign) with the gateway's key.
func (g *Gateway) Resign(p map[string]string) {
	p["sign"] = SignParams(p, g.Key)
	p["sign_type"] = "MD5"
}

// Post sends a notify as a form POST and returns the status and body.
func Post(notifyURL string, p map[string]string) (int, string, error) {
	v := url.Values{}
	for k, x := range p {
		v.Set(k, x)
	}
	res, err := http.PostForm(notifyURL, v)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), nil
}

// Get sends a notify as a GET with the parameters in the query.
func Get(notifyURL string, p map[string]string) (int, string, error) {
	v := url.Values{}
	for k, x := range p {
		v.Set(k, x)
	}
	res, err := http.Get(notifyURL + "?" + v.Encode())
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), nil
}

package apptest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// Client is a tiny JSON HTTP client for tests.
type Client struct {
	T      testing.TB
	Base   string
	Token  string // console JWT or sk- key, sent as Bearer
	Lang   string
	Cookie []*http.Cookie
}

// Resp is a decoded answer.
type Resp struct {
	Status int
	Body   []byte
	Header http.Header
}

// JSON decodes the body into v (failing the test on error).
func (r *Resp) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// M decodes the body as a map.
func (r *Resp) M(t testing.TB) map[string]any {
	var m map[string]any
	r.JSON(t, &m)
	return m
}

// Do sends method path with body (a []byte / string is sent raw, anything else as JSON).
func (c *Client) Do(method, path string, body any) *Resp {
	c.T.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = bytes.NewReader([]byte(b))
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, c.Base+path, rd)
	if err != nil {
		c.T.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if c.Lang != "" {
		req.Header.Set("Accept-Language", c.Lang)
	}
	for _, ck := range c.Cookie {
		req.AddCookie(ck)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return &Resp{Status: res.StatusCode, Body: b, Header: res.Header}
}

// Login signs in and returns a client carrying the JWT and refresh cookie.
func (n *Node) Login(t testing.TB, username, password string) *Client {
	t.Helper()
	c := &Client{T: t, Base: n.URL}
	req, _ := json.Marshal(map[string]string{"username": username, "password": password})
	res, err := http.Post(n.URL+"/api/auth/login", "application/json", bytes.NewReader(req))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("login %s: %d %s", username, res.StatusCode, b)
	}
	var out struct {
		Token string `json:"token"`
	}
	_ = json.Unmarshal(b, &out)
	c.Token, c.Cookie = out.Token, res.Cookies()
	return c
}

// Root signs in as root.
func (n *Node) Root(t testing.TB) *Client { return n.Login(t, "root", RootPassword) }

// Anon is a client without credentials.
func (n *Node) Anon(t testing.TB) *Client { return &Client{T: t, Base: n.URL} }

// SignUp registers a user and signs in.
func (n *Node) SignUp(t testing.TB, username, password string) *Client {
	t.Helper()
	r := n.Anon(t).Do("POST", "/api/auth/register", map[string]string{"username": username, "password": password})
	if r.Status != 201 {
		t.Fatalf("register %s: %d %s", username, r.Status, r.Body)
	}
	return n.Login(t, username, password)
}

package relaytest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/golang-jwt/jwt/v5"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// Vertex is a fake Google Vertex AI in front of a fake upstream, with its own OAuth token endpoint
// (/token). The token endpoint checks the JWT assertion's RS256 signature against the service account's
// public key, its audience and scope, and counts exchanges; the model endpoints
// /v1/projects/{p}/locations/{r}/publishers/google/models/{m}:{method} and
// .../publishers/anthropic/models/{m}:rawPredict|streamRawPredict refuse a token it did not issue (401) and
// serve the Gemini and Anthropic fakes' answers (an Anthropic body must carry anthropic_version
// "vertex-2023-10-16" and no model, else 400).
type Vertex struct {
	cloudLog
	*Upstream
	front *httptest.Server
	// URL is the base URL (the channel's), TokenURI the token endpoint the key file names.
	URL, TokenURI string
	// Key is a service-account key file for ClientEmail, signed by a key this fake trusts.
	Key, ClientEmail string

	pub       *rsa.PublicKey
	exchanges atomic.Int64
	mu        sync.Mutex
	issued    map[string]bool
}

// NewVertex starts a Vertex front over a new fake upstream configured by opts.
func NewVertex(opts ...Option) *Vertex {
	v := &Vertex{Upstream: New(opts...), issued: map[string]bool{}, ClientEmail: "relay@tollgate-test.iam.gserviceaccount.com"}
	v.front = httptest.NewServer(http.HandlerFunc(v.serve))
	v.URL, v.TokenURI = v.front.URL, v.front.URL+"/token"
	pk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	v.pub = &pk.PublicKey
	der, _ := x509.MarshalPKCS8PrivateKey(pk)
	key, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "tollgate-test", "private_key_id": "kid-1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": v.ClientEmail, "token_uri": v.TokenURI,
	})
	v.Key = string(key)
	return v
}

// Close stops the front and the fake behind it.
func (v *Vertex) Close() { v.front.Close(); v.Upstream.Close() }

// Exchanges counts the token exchanges the token endpoint granted.
func (v *Vertex) Exchanges() int { return int(v.exchanges.Load()) }

func (v *Vertex) serve(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	v.add(r, body)
	if r.URL.Path == "/token" {
		v.token(w, r, body)
		return
	}
	tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	v.mu.Lock()
	known := v.issued[tok]
	v.mu.Unlock()
	if !known {
		writeGoogleError(w, http.StatusUnauthorized, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
		return
	}
	// /v1/projects/{p}/locations/{r}/publishers/{pub}/models/{m}:{method}
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/v1/"), "/")
	if len(parts) != 8 || parts[0] != "projects" || parts[2] != "locations" || parts[4] != "publishers" || parts[6] != "models" {
		writeGoogleError(w, http.StatusNotFound, "NOT_FOUND", "The requested URL was not found.")
		return
	}
	m, method, _ := strings.Cut(parts[7], ":")
	switch parts[5] {
	case "google":
		forward(v.Handler, w, r, geminiPrefix+"/"+m+":"+method, body, func(h http.Header) { h.Set("x-goog-api-key", tok) })
	case "anthropic":
		if method != "rawPredict" && method != "streamRawPredict" {
			writeGoogleError(w, http.StatusNotFound, "NOT_FOUND", "Unknown method "+method)
			return
		}
		if gjson.GetBytes(body, "anthropic_version").String() != "vertex-2023-10-16" || gjson.GetBytes(body, "model").Exists() {
			writeGoogleError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "anthropic_version vertex-2023-10-16 required; model must not be in the body")
			return
		}
		body, _ = sjson.SetBytes(body, "model", m)
		forward(v.Handler, w, r, "/v1/messages", body, func(h http.Header) { h.Set("x-api-key", tok) })
	default:
		writeGoogleError(w, http.StatusNotFound, "NOT_FOUND", "Publisher not found.")
	}
}

// token checks an RFC 7523 JWT-bearer grant and issues an access token for an hour.
func (v *Vertex) token(w http.ResponseWriter, r *http.Request, body []byte) {
	r.Body = newBody(body)
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		writeOAuthError(w, "unsupported_grant_type", "Invalid grant_type")
		return
	}
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(r.PostForm.Get("assertion"), claims, func(*jwt.Token) (any, error) { return v.pub, nil },
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithAudience(v.TokenURI), jwt.WithIssuer(v.ClientEmail), jwt.WithExpirationRequired())
	if err != nil || claims["scope"] != "https://www.googleapis.com/auth/cloud-platform" {
		writeOAuthError(w, "invalid_grant", "Invalid JWT Signature.")
		return
	}
	n := v.exchanges.Add(1)
	tok := "ya29.fake-" + strconv.FormatInt(n, 10)
	v.mu.Lock()
	v.issued[tok] = true
	v.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"access_token":"` + tok + `","expires_in":3599,"token_type":"Bearer"}`))
}

func writeOAuthError(w http.ResponseWriter, code, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write([]byte(`{"error":"` + code + `","error_description":"` + desc + `"}`))
}

func writeGoogleError(w http.ResponseWriter, status int, s, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(`{"error":{"code":` + strconv.Itoa(status) + `,"message":"` + msg + `","status":"` + s + `"}}`))
}

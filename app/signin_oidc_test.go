package app_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"tollgate/app/apptest"
	"tollgate/model"
)

// idpUser is who signs in at the fake provider's authorize step.
type idpUser struct {
	Sub, Email, Username string
	Verified             bool
}

// fakeIdP is an OpenID Connect provider started by the test: discovery, an authorize endpoint that signs the
// configured user in at once, a token endpoint that checks the client, the code, the redirect URI and the PKCE
// verifier, RS256 ID tokens and a JWKS.
type fakeIdP struct {
	t        *testing.T
	srv      *httptest.Server
	key      *rsa.PrivateKey
	ClientID string
	Secret   string

	mu    sync.Mutex
	user  idpUser
	codes map[string]authReq
	// Faults for the next tokens: sign with another key, another nonce, expired, another audience or issuer.
	forge                       bool
	nonce, aud, iss             string
	expired                     bool
	lastChallengeMethod, scopes string
}

type authReq struct {
	redirectURI, nonce, challenge string
	user                          idpUser
}

func newFakeIdP(t *testing.T) *fakeIdP {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &fakeIdP{t: t, key: key, ClientID: "tollgate-client", Secret: "s3cret-value", codes: map[string]authReq{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", p.discovery)
	mux.HandleFunc("GET /authorize", p.authorize)
	mux.HandleFunc("POST /token", p.token)
	mux.HandleFunc("GET /jwks", p.jwks)
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

func (p *fakeIdP) signIn(u idpUser) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.user = u
	p.forge, p.nonce, p.aud, p.iss, p.expired = false, "", "", "", false
}

func (p *fakeIdP) discovery(w http.ResponseWriter, _ *http.Request) {
	u := p.srv.URL
	writeJSON(w, map[string]any{"issuer": u, "authorization_endpoint": u + "/authorize", "token_endpoint": u + "/token",
		"jwks_uri": u + "/jwks", "response_types_supported": []string{"code"}, "subject_types_supported": []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256"}, "code_challenge_methods_supported": []string{"S256"}})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (p *fakeIdP) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("response_type") != "code" || q.Get("client_id") != p.ClientID || q.Get("code_challenge") == "" || q.Get("state") == "" {
		http.Error(w, "bad authorize request", http.StatusBadRequest)
		return
	}
	code := randomString(16)
	p.mu.Lock()
	p.lastChallengeMethod, p.scopes = q.Get("code_challenge_method"), q.Get("scope")
	p.codes[code] = authReq{redirectURI: q.Get("redirect_uri"), nonce: q.Get("nonce"), challenge: q.Get("code_challenge"), user: p.user}
	p.mu.Unlock()
	to, _ := url.Parse(q.Get("redirect_uri"))
	v := to.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	to.RawQuery = v.Encode()
	http.Redirect(w, r, to.String(), http.StatusFound)
}

func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func s256(v string) string {
	h := sha256.Sum256([]byte(v))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

func (p *fakeIdP) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	p.mu.Lock()
	req, found := p.codes[r.PostForm.Get("code")]
	delete(p.codes, r.PostForm.Get("code")) // codes are single use
	p.mu.Unlock()
	switch {
	case id != p.ClientID || secret != p.Secret:
		w.WriteHeader(http.StatusUnauthorized)
		writeJSON(w, map[string]string{"error": "invalid_client"})
		return
	case !found || req.redirectURI != r.PostForm.Get("redirect_uri") || r.PostForm.Get("grant_type") != "authorization_code":
		w.WriteHeader(http.StatusBadRequest)
		writeJSON(w, map[string]string{"error": "invalid_grant"})
		return
	case s256(r.PostForm.Get("code_verifier")) != req.challenge:
		w.WriteHeader(http.StatusBadRequest)
		writeJSON(w, map[string]string{"error": "invalid_grant", "error_description": "PKCE verifier does not match"})
		return
	}
	p.mu.Lock()
	key, nonce, aud, iss, exp := p.key, req.nonce, p.ClientID, p.srv.URL, time.Now().Add(5*time.Minute)
	if p.forge {
		key, _ = rsa.GenerateKey(rand.Reader, 2048)
	}
	if p.nonce != "" {
		nonce = p.nonce
	}
	if p.aud != "" {
		aud = p.aud
	}
	if p.iss != "" {
		iss = p.iss
	}
	if p.expired {
		exp = time.Now().Add(-10 * time.Minute)
	}
	p.mu.Unlock()
	u := req.user
	claims := jwt.MapClaims{"iss": iss, "sub": u.Sub, "aud": aud, "exp": exp.Unix(), "iat": time.Now().Add(-time.Minute).Unix(),
		"nonce": nonce, "email": u.Email, "email_verified": u.Verified, "preferred_username": u.Username}
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = "k1"
	raw, err := tok.SignedString(key)
	if err != nil {
		p.t.Errorf("sign id token: %v", err)
	}
	writeJSON(w, map[string]any{"access_token": randomString(16), "token_type": "Bearer", "expires_in": 300, "id_token": raw})
}

func (p *fakeIdP) jwks(w http.ResponseWriter, _ *http.Request) {
	pub := p.key.PublicKey
	writeJSON(w, map[string]any{"keys": []map[string]string{{"kty": "RSA", "kid": "k1", "use": "sig", "alg": "RS256",
		"n": base64.RawURLEncoding.EncodeToString(pub.N.Bytes()),
		"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes())}}})
}

// browser is a cookie-keeping client that does not follow redirects, so each hop of a flow is checked.
type browser struct {
	t *testing.T
	c *http.Client
}

func newBrowser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, c: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) do(method, u, bearer string) *http.Response {
	b.t.Helper()
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, u, err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	return res
}

// redirect GETs u and returns where it redirects to.
func (b *browser) redirect(u string) string {
	b.t.Helper()
	res := b.do("GET", u, "")
	if res.StatusCode != http.StatusFound {
		b.t.Fatalf("GET %s: status %d, want 302", u, res.StatusCode)
	}
	return res.Header.Get("Location")
}

// flow runs a flow from the URL of the provider's authorize step: the provider signs in and sends the browser
// back to the callback; it returns the callback URL and where the callback redirected to.
func (b *browser) flow(node *apptest.Node, authorize string) (callback, landed string) {
	b.t.Helper()
	callback = b.redirect(authorize)
	if !strings.HasPrefix(callback, node.URL+"/api/auth/oauth/") {
		b.t.Fatalf("provider sent the browser to %s, not our callback", callback)
	}
	return callback, b.redirect(callback)
}

// signIn starts a sign-in with provider slug and follows it to where the console lands.
func (b *browser) signIn(node *apptest.Node, slug string) (callback, landed string) {
	b.t.Helper()
	return b.flow(node, b.redirect(node.URL+"/api/auth/oauth/"+slug+"/start"))
}

// session exchanges the refresh cookie the callback set for a console client.
func (b *browser) session(node *apptest.Node) *apptest.Client {
	b.t.Helper()
	u, _ := url.Parse(node.URL + "/api/auth/refresh")
	req, _ := http.NewRequest("POST", u.String(), nil)
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		b.t.Fatalf("refresh after sign-in: %d %s", res.StatusCode, body)
	}
	var out struct {
		Token string `json:"token"`
	}
	_ = json.Unmarshal(body, &out)
	return &apptest.Client{T: b.t, Base: node.URL, Token: out.Token}
}

func enableOIDC(t *testing.T, n *apptest.Node, p *fakeIdP, extra map[string]any) {
	t.Helper()
	set := map[string]any{"oauth": map[string]any{"oidc": []map[string]any{{"enabled": true, "slug": "corp", "name": "Corp SSO",
		"issuer": p.srv.URL, "client_id": p.ClientID, "client_secret": p.Secret}}}}
	for k, v := range extra {
		set[k] = v
	}
	wantStatus(t, n.Root(t).Do("PUT", "/api/admin/settings", set), http.StatusOK)
}

func countUsers(t *testing.T, n *apptest.Node) int64 {
	t.Helper()
	c, err := n.App.Store.CountUsers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestOIDCSignIn_CreatesAccountAndSession(t *testing.T) {
	n := apptest.New(t)
	idp := newFakeIdP(t)
	enableOIDC(t, n, idp, map[string]any{"new_user_quota": 700})

	var st struct {
		Providers []map[string]string `json:"oauth_providers"`
	}
	n.Anon(t).Do("GET", "/api/status", nil).JSON(t, &st)
	if len(st.Providers) != 1 || st.Providers[0]["slug"] != "corp" || st.Providers[0]["name"] != "Corp SSO" || st.Providers[0]["type"] != "oidc" {
		t.Fatalf("status providers = %v", st.Providers)
	}
	// The secret is shown masked and a masked value sent back keeps it.
	admin := n.Root(t)
	var got struct {
		OAuth struct {
			OIDC []map[string]any `json:"oidc"`
		} `json:"oauth"`
	}
	admin.Do("GET", "/api/admin/settings", nil).JSON(t, &got)
	if s := got.OAuth.OIDC[0]["client_secret"].(string); s == idp.Secret || !strings.Contains(s, "****") {
		t.Fatalf("client secret shown as %q", s)
	}
	wantStatus(t, admin.Do("PUT", "/api/admin/settings", map[string]any{"oauth": got.OAuth}), http.StatusOK)
	// Sealed at rest.
	opts, err := n.App.Store.ListOptions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range opts {
		if strings.Contains(o.Value, idp.Secret) {
			t.Fatalf("option %s stores the client secret in clear: %s", o.Key, o.Value)
		}
	}

	before := countUsers(t, n)
	idp.signIn(idpUser{Sub: "u-100", Email: "alice@example.com", Verified: true, Username: "alice"})
	b := newBrowser(t)
	start := b.redirect(n.URL + "/api/auth/oauth/corp/start")
	au, _ := url.Parse(start)
	if !strings.HasPrefix(start, idp.srv.URL+"/authorize?") || au.Query().Get("nonce") == "" ||
		au.Query().Get("redirect_uri") != n.URL+"/api/auth/oauth/corp/callback" {
		t.Fatalf("start redirected to %s", start)
	}
	_, landed := b.flow(n, start)
	if landed != "/console" {
		t.Fatalf("callback landed on %q, want /console", landed)
	}
	if idp.lastChallengeMethod != "S256" || !strings.Contains(idp.scopes, "openid") {
		t.Fatalf("authorize request: challenge method %q, scopes %q", idp.lastChallengeMethod, idp.scopes)
	}
	if after := countUsers(t, n); after != before+1 {
		t.Fatalf("users %d → %d, want one new", before, after)
	}
	me := b.session(n)
	var self model.User
	me.Do("GET", "/api/user/self", nil).JSON(t, &self)
	if self.Username != "alice" || self.Email != "alice@example.com" || self.Quota != 700 {
		t.Fatalf("new user = %+v", self)
	}
	var ids struct {
		Identities  []model.UserIdentity `json:"identities"`
		HasPassword bool                 `json:"has_password"`
	}
	me.Do("GET", "/api/user/identities", nil).JSON(t, &ids)
	if len(ids.Identities) != 1 || ids.Identities[0].Provider != "corp" || ids.Identities[0].Subject != "u-100" || ids.HasPassword {
		t.Fatalf("identities = %+v", ids)
	}
	// The only way this user signs in cannot be removed.
	wantError(t, me.Do("DELETE", fmt.Sprintf("/api/user/identities/%d", ids.Identities[0].ID), nil), http.StatusConflict, "oauth_last_sign_in")

	// A second sign-in is the same user (no second account, no second gift).
	b2 := newBrowser(t)
	if _, landed := b2.signIn(n, "corp"); landed != "/console" {
		t.Fatalf("second sign-in landed on %q", landed)
	}
	var again model.User
	b2.session(n).Do("GET", "/api/user/self", nil).JSON(t, &again)
	if again.ID != self.ID || again.Quota != 700 || countUsers(t, n) != before+1 {
		t.Fatalf("second sign-in: user %d quota %d (first %d)", again.ID, again.Quota, self.ID)
	}

	// A passwordless user sets a first password, then may unlink.
	wantStatus(t, me.Do("POST", "/api/user/password", map[string]string{"old_password": "", "new_password": "Fresh-pass-2026"}), http.StatusNoContent)
	me = n.Login(t, "alice", "Fresh-pass-2026")
	wantStatus(t, me.Do("DELETE", fmt.Sprintf("/api/user/identities/%d", ids.Identities[0].ID), nil), http.StatusNoContent)

	// Sign-up closed: an unknown provider account gets no account.
	wantStatus(t, admin.Do("PUT", "/api/admin/settings", map[string]any{"registration_open": false}), http.StatusOK)
	idp.signIn(idpUser{Sub: "u-101", Email: "carol@example.com", Verified: true})
	if _, landed := newBrowser(t).signIn(n, "corp"); landed != "/login?error=registration_closed" {
		t.Fatalf("closed sign-up landed on %q", landed)
	}
}

func TestOIDCSignIn_RefusesBadIDTokens(t *testing.T) {
	n := apptest.New(t)
	idp := newFakeIdP(t)
	enableOIDC(t, n, idp, nil)
	cases := []struct {
		name  string
		fault func()
	}{
		{"forged signature", func() { idp.forge = true }},
		{"wrong nonce", func() { idp.nonce = "not-the-flows-nonce" }},
		{"expired", func() { idp.expired = true }},
		{"other audience", func() { idp.aud = "another-client" }},
		{"other issuer", func() { idp.iss = "https://evil.example" }},
	}
	before := countUsers(t, n)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			idp.signIn(idpUser{Sub: "mallory", Email: "mallory@example.com", Verified: true})
			idp.mu.Lock()
			tc.fault()
			idp.mu.Unlock()
			b := newBrowser(t)
			if _, landed := b.signIn(n, "corp"); landed != "/login?error=oauth_failed" {
				t.Fatalf("landed on %q, want /login?error=oauth_failed", landed)
			}
			if res := b.do("POST", n.URL+"/api/auth/refresh", ""); res.StatusCode != http.StatusUnauthorized {
				t.Fatalf("refresh after a refused sign-in: %d", res.StatusCode)
			}
		})
	}
	if after := countUsers(t, n); after != before {
		t.Fatalf("refused sign-ins created %d users", after-before)
	}
	// The same provider with an honest token works: the refusals were the faults.
	idp.signIn(idpUser{Sub: "mallory", Email: "mallory@example.com", Verified: true})
	if _, landed := newBrowser(t).signIn(n, "corp"); landed != "/console" {
		t.Fatalf("honest sign-in landed on %q", landed)
	}
}

func TestOIDCSignIn_RefusesReplayedStateAndOtherBrowser(t *testing.T) {
	n := apptest.New(t)
	idp := newFakeIdP(t)
	enableOIDC(t, n, idp, nil)
	idp.signIn(idpUser{Sub: "u-7", Email: "dave@example.com", Verified: true, Username: "dave"})

	// The callback reached by another browser (no binding cookie) is refused: nobody can have a victim finish
	// the attacker's sign-in.
	attacker := newBrowser(t)
	cb := attacker.redirect(attacker.redirect(n.URL + "/api/auth/oauth/corp/start"))
	if landed := newBrowser(t).redirect(cb); landed != "/login?error=oauth_invalid_state" {
		t.Fatalf("callback from another browser landed on %q", landed)
	}

	b := newBrowser(t)
	start := n.URL + "/api/auth/oauth/corp/start"
	res := b.do("GET", start, "")
	var binding *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == "tollgate_oauth" {
			binding = c
		}
	}
	if binding == nil || !binding.HttpOnly || binding.SameSite != http.SameSiteLaxMode {
		t.Fatalf("binding cookie = %+v", binding)
	}
	callback, landed := b.flow(n, res.Header.Get("Location"))
	if landed != "/console" {
		t.Fatalf("sign-in landed on %q", landed)
	}
	// Replayed with the binding cookie put back: the state was used.
	replay := newBrowser(t)
	u, _ := url.Parse(n.URL + "/api/auth/oauth/")
	replay.c.Jar.SetCookies(u, []*http.Cookie{{Name: binding.Name, Value: binding.Value, Path: "/api/auth/oauth"}})
	if landed := replay.redirect(callback); landed != "/login?error=oauth_invalid_state" {
		t.Fatalf("replayed callback landed on %q", landed)
	}
	if res := replay.do("POST", n.URL+"/api/auth/refresh", ""); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("replay got a session: %d", res.StatusCode)
	}
	// A made-up state, and a provider that is not enabled.
	if landed := b.redirect(n.URL + "/api/auth/oauth/corp/callback?state=made-up&code=x"); landed != "/login?error=oauth_invalid_state" {
		t.Fatalf("made-up state landed on %q", landed)
	}
	if landed := b.redirect(n.URL + "/api/auth/oauth/nope/start"); landed != "/login?error=oauth_provider_unknown" {
		t.Fatalf("unknown provider landed on %q", landed)
	}
}

func TestOIDCSignIn_ExistingEmailLinkedOnlyFromProfile(t *testing.T) {
	n := apptest.New(t)
	idp := newFakeIdP(t)
	enableOIDC(t, n, idp, nil)
	r := n.Anon(t).Do("POST", "/api/auth/register", map[string]string{"username": "bob", "password": "Sunny-meadow-77", "email": "Bob@Example.com"})
	wantStatus(t, r, http.StatusCreated)
	idp.signIn(idpUser{Sub: "bob-at-corp", Email: "bob@example.com", Verified: true, Username: "bobby"})

	before := countUsers(t, n)
	if _, landed := newBrowser(t).signIn(n, "corp"); landed != "/login?error=oauth_email_exists" {
		t.Fatalf("sign-in with bob's verified e-mail landed on %q", landed)
	}
	if countUsers(t, n) != before {
		t.Fatal("a second account was made for bob's e-mail")
	}

	// Bob signs in with his password and links from the profile.
	bob := n.Login(t, "bob", "Sunny-meadow-77")
	b := newBrowser(t)
	req, _ := http.NewRequest("POST", n.URL+"/api/user/oauth/corp/link/start", nil)
	req.Header.Set("Authorization", "Bearer "+bob.Token)
	res, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var link struct {
		URL string `json:"url"`
	}
	_ = json.NewDecoder(res.Body).Decode(&link)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(link.URL, idp.srv.URL+"/authorize?") {
		t.Fatalf("link start: %d %q", res.StatusCode, link.URL)
	}
	if _, landed := b.flow(n, link.URL); landed != "/console/profile?linked=corp" {
		t.Fatalf("link landed on %q", landed)
	}
	var ids struct {
		Identities  []model.UserIdentity `json:"identities"`
		HasPassword bool                 `json:"has_password"`
	}
	bob.Do("GET", "/api/user/identities", nil).JSON(t, &ids)
	if len(ids.Identities) != 1 || ids.Identities[0].Subject != "bob-at-corp" || !ids.HasPassword {
		t.Fatalf("bob's identities = %+v", ids)
	}

	// Now the provider signs bob in.
	b2 := newBrowser(t)
	if _, landed := b2.signIn(n, "corp"); landed != "/console" {
		t.Fatalf("linked sign-in landed on %q", landed)
	}
	var self model.User
	b2.session(n).Do("GET", "/api/user/self", nil).JSON(t, &self)
	if self.Username != "bob" {
		t.Fatalf("linked sign-in is %q, want bob", self.Username)
	}

	// The same provider account cannot be linked to a second user.
	eve := n.SignUp(t, "eve", "Quiet-river-58")
	b3 := newBrowser(t)
	req, _ = http.NewRequest("POST", n.URL+"/api/user/oauth/corp/link/start", nil)
	req.Header.Set("Authorization", "Bearer "+eve.Token)
	res, err = b3.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = json.NewDecoder(res.Body).Decode(&link)
	res.Body.Close()
	if _, landed := b3.flow(n, link.URL); landed != "/console/profile?oauth_error=oauth_identity_taken" {
		t.Fatalf("second link landed on %q", landed)
	}

	// Another user cannot remove bob's identity; bob (with a password) can.
	path := fmt.Sprintf("/api/user/identities/%d", ids.Identities[0].ID)
	wantError(t, eve.Do("DELETE", path, nil), http.StatusNotFound, "identity_not_found")
	wantStatus(t, bob.Do("DELETE", path, nil), http.StatusNoContent)
	bob.Do("GET", "/api/user/identities", nil).JSON(t, &ids)
	if len(ids.Identities) != 0 {
		t.Fatalf("after unlink: %+v", ids.Identities)
	}
	// Unlinked: the provider account no longer signs in as bob (and is still not linked silently).
	if _, landed := newBrowser(t).signIn(n, "corp"); landed != "/login?error=oauth_email_exists" {
		t.Fatalf("after unlink landed on %q", landed)
	}
}

// fakeGitHub is github.com's OAuth and REST endpoints as the sign-in uses them.
type fakeGitHub struct {
	srv              *httptest.Server
	ClientID, Secret string
	mu               sync.Mutex
	codes            map[string]string // code → PKCE challenge
	tokens           map[string]bool
}

func newFakeGitHub(t *testing.T) *fakeGitHub {
	g := &fakeGitHub{ClientID: "gh-client", Secret: "gh-secret", codes: map[string]string{}, tokens: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login/oauth/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("client_id") != g.ClientID || q.Get("code_challenge_method") != "S256" || !strings.Contains(q.Get("scope"), "user:email") {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		code := randomString(10)
		g.mu.Lock()
		g.codes[code] = q.Get("code_challenge")
		g.mu.Unlock()
		http.Redirect(w, r, q.Get("redirect_uri")+"?code="+code+"&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
	})
	mux.HandleFunc("POST /login/oauth/access_token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		g.mu.Lock()
		challenge, ok := g.codes[r.PostForm.Get("code")]
		delete(g.codes, r.PostForm.Get("code"))
		g.mu.Unlock()
		if !ok || r.PostForm.Get("client_id") != g.ClientID || r.PostForm.Get("client_secret") != g.Secret ||
			s256(r.PostForm.Get("code_verifier")) != challenge {
			writeJSON(w, map[string]string{"error": "bad_verification_code"}) // GitHub answers 200 with an error
			return
		}
		tok := "gho_" + randomString(12)
		g.mu.Lock()
		g.tokens[tok] = true
		g.mu.Unlock()
		writeJSON(w, map[string]string{"access_token": tok, "token_type": "bearer", "scope": "read:user,user:email"})
	})
	authed := func(r *http.Request) bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
	}
	mux.HandleFunc("GET /user", func(w http.ResponseWriter, r *http.Request) {
		if !authed(r) {
			http.Error(w, "{}", http.StatusUnauthorized)
			return
		}
		writeJSON(w, map[string]any{"id": 583231, "login": "octocat", "email": nil})
	})
	mux.HandleFunc("GET /user/emails", func(w http.ResponseWriter, r *http.Request) {
		if !authed(r) {
			http.Error(w, "{}", http.StatusUnauthorized)
			return
		}
		writeJSON(w, []map[string]any{
			{"email": "unverified@example.com", "primary": true, "verified": false},
			{"email": "octo@example.com", "primary": false, "verified": true},
		})
	})
	g.srv = httptest.NewServer(mux)
	t.Cleanup(g.srv.Close)
	return g
}

func TestGitHubSignIn_UsesOnlyVerifiedEmail(t *testing.T) {
	n := apptest.New(t)
	gh := newFakeGitHub(t)
	wantStatus(t, n.Root(t).Do("PUT", "/api/admin/settings", map[string]any{"oauth": map[string]any{"github": map[string]any{
		"enabled": true, "client_id": gh.ClientID, "client_secret": gh.Secret, "auth_url": gh.srv.URL + "/login/oauth/authorize",
		"token_url": gh.srv.URL + "/login/oauth/access_token", "api_url": gh.srv.URL}}}), http.StatusOK)

	var st struct {
		Providers []map[string]string `json:"oauth_providers"`
	}
	n.Anon(t).Do("GET", "/api/status", nil).JSON(t, &st)
	if len(st.Providers) != 1 || st.Providers[0]["slug"] != "github" || st.Providers[0]["type"] != "github" {
		t.Fatalf("status providers = %v", st.Providers)
	}
	b := newBrowser(t)
	if _, landed := b.signIn(n, "github"); landed != "/console" {
		t.Fatalf("github sign-in landed on %q", landed)
	}
	var self model.User
	b.session(n).Do("GET", "/api/user/self", nil).JSON(t, &self)
	if self.Username != "octocat" || self.Email != "octo@example.com" {
		t.Fatalf("github user = %q <%s>, want octocat <octo@example.com> (the verified address)", self.Username, self.Email)
	}
	id, err := n.App.Store.IdentityBySubject(t.Context(), "github", "583231")
	if err != nil || id.UserID != self.ID {
		t.Fatalf("identity: %+v %v", id, err)
	}
	// The user denied access at GitHub.
	start := newBrowser(t)
	authorize := start.redirect(n.URL + "/api/auth/oauth/github/start")
	state, _ := url.Parse(authorize)
	denied := n.URL + "/api/auth/oauth/github/callback?error=access_denied&state=" + url.QueryEscape(state.Query().Get("state"))
	if landed := start.redirect(denied); landed != "/login?error=oauth_denied" {
		t.Fatalf("denied landed on %q", landed)
	}
}

// On the several-nodes shape the state lives in Redis: a flow started on one node finishes on another, and is
// still single use there.
func TestOIDCSignIn_CallbackOnAnotherNode(t *testing.T) {
	env := apptest.NewEnv(t)
	if env.Shape != "mysql" {
		t.Skip("nodes share the state only through Redis (the MariaDB + Redis pass)")
	}
	a, b := env.Start(t), env.Start(t)
	idp := newFakeIdP(t)
	enableOIDC(t, a, idp, nil)
	idp.signIn(idpUser{Sub: "roamer", Email: "roamer@example.com", Verified: true, Username: "roamer"})
	br := newBrowser(t)
	callback := br.redirect(br.redirect(a.URL + "/api/auth/oauth/corp/start"))
	onB := b.URL + strings.TrimPrefix(callback, a.URL)
	// The binding cookie was set for a's host; both listen on 127.0.0.1, so the jar sends it to b as well.
	deadline := time.Now().Add(5 * time.Second)
	for b.App.OAuth.Enabled() == nil || len(b.App.OAuth.Enabled()) == 0 { // b reloads settings from the bus
		if time.Now().After(deadline) {
			t.Fatal("node b never saw the provider")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if landed := br.redirect(onB); landed != "/console" {
		t.Fatalf("callback on node b landed on %q", landed)
	}
	if landed := br.redirect(callback); landed != "/login?error=oauth_invalid_state" {
		t.Fatalf("replay on node a landed on %q", landed)
	}
}

// With e-mail verification on, the gift goes to verified addresses only: a provider that vouches for none cannot
// open an account (oauth_email_required); one that vouches for an address opens it with the gift, once.
func TestOIDCSignIn_EmailVerificationNeedsAVerifiedAddress(t *testing.T) {
	n, _, _, _ := mailNode(t, map[string]any{"email_verification": true, "new_user_quota": 900})
	idp := newFakeIdP(t)
	enableOIDC(t, n, idp, nil)
	before := countUsers(t, n)

	idp.signIn(idpUser{Sub: "u-300", Email: "carol@example.com", Verified: false, Username: "carol"})
	b := newBrowser(t)
	if _, landed := b.signIn(n, "corp"); landed != "/login?error=oauth_email_required" {
		t.Fatalf("unverified provider e-mail landed on %q", landed)
	}
	if got := countUsers(t, n); got != before {
		t.Fatalf("users %d -> %d: an account was opened without a verified address", before, got)
	}

	idp.signIn(idpUser{Sub: "u-301", Email: "dave@example.com", Verified: true, Username: "dave"})
	b = newBrowser(t)
	if _, landed := b.signIn(n, "corp"); landed != "/console" {
		t.Fatalf("verified provider e-mail landed on %q", landed)
	}
	var self struct {
		Quota int64 `json:"quota"`
	}
	b.session(n).Do("GET", "/api/user/self", nil).JSON(t, &self)
	if self.Quota != 900 {
		t.Fatalf("quota = %d, want the gift 900 once", self.Quota)
	}
}

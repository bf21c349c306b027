package vertex

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/sync/singleflight"

	"tollgate/relay/adaptor"
	"tollgate/service/cloudkey"
)

// Scope is the OAuth scope Vertex AI calls need.
const Scope = "https://www.googleapis.com/auth/cloud-platform"

// refreshBefore is how long before its expiry a cached token is replaced.
const refreshBefore = 5 * time.Minute

// exchangeTimeout bounds one token exchange (it is shared by every call waiting for it).
const exchangeTimeout = 30 * time.Second

// Tokens turns service-account keys into OAuth access tokens (a self-signed RS256 JWT exchanged at the key's
// token_uri, RFC 7523) and caches each until refreshBefore its expiry; calls for the same key while a token
// is being fetched wait for that one fetch (singleflight), so a burst costs one exchange.
type Tokens struct {
	client *http.Client
	now    func() time.Time
	group  singleflight.Group
	mu     sync.Mutex
	cache  map[[32]byte]token // keyed by the SHA-256 of the key file
}

type token struct {
	access  string
	expires time.Time
}

// NewTokens builds a token cache that exchanges with client; now is its clock (nil: time.Now).
func NewTokens(client *http.Client, now func() time.Time) *Tokens {
	if now == nil {
		now = time.Now
	}
	return &Tokens{client: client, now: now, cache: map[[32]byte]token{}}
}

// Token returns a live access token for the service-account key file saJSON.
func (t *Tokens) Token(ctx context.Context, saJSON string) (string, error) {
	id := sha256.Sum256([]byte(saJSON))
	if tok, ok := t.cached(id); ok {
		return tok.access, nil
	}
	ch := t.group.DoChan(string(id[:]), func() (any, error) {
		// A flight that ended between the look-up above and this one has stored its token: use it.
		if tok, ok := t.cached(id); ok {
			return tok, nil
		}
		// The exchange outlives any one caller (others wait for it), so it has its own deadline.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), exchangeTimeout)
		defer cancel()
		tok, err := t.exchange(ctx, saJSON)
		if err != nil {
			return nil, err
		}
		t.mu.Lock()
		t.cache[id] = tok
		t.mu.Unlock()
		return tok, nil
	})
	select {
	case <-ctx.Done():
		return "", context.Cause(ctx)
	case res := <-ch:
		if res.Err != nil {
			return "", res.Err
		}
		return res.Val.(token).access, nil
	}
}

// cached returns the key's token if it is more than refreshBefore from its expiry.
func (t *Tokens) cached(id [32]byte) (token, bool) {
	t.mu.Lock()
	tok, ok := t.cache[id]
	t.mu.Unlock()
	return tok, ok && t.now().Before(tok.expires.Add(-refreshBefore))
}

// exchange signs a JWT assertion with the key and trades it for an access token.
func (t *Tokens) exchange(ctx context.Context, saJSON string) (token, error) {
	sa, err := cloudkey.ParseServiceAccount(saJSON)
	if err != nil {
		return token{}, &adaptor.CredentialError{Err: err}
	}
	now := t.now()
	jt := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{
		"iss": sa.ClientEmail, "scope": Scope, "aud": sa.TokenURI,
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	})
	if sa.PrivateKeyID != "" {
		jt.Header["kid"] = sa.PrivateKeyID
	}
	assertion, err := jt.SignedString(sa.Key)
	if err != nil {
		return token{}, &adaptor.CredentialError{Err: err}
	}
	form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {assertion}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sa.TokenURI, strings.NewReader(form.Encode()))
	if err != nil {
		return token{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := t.client.Do(req)
	if err != nil {
		return token{}, fmt.Errorf("vertex token exchange: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return token{}, fmt.Errorf("vertex token exchange: %w", err)
	}
	var out struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	_ = json.Unmarshal(b, &out)
	switch {
	case resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		// invalid_grant and friends: the key is revoked, deleted or its clock is off.
		return token{}, &adaptor.CredentialError{Err: fmt.Errorf("token endpoint answered %d %s: %s", resp.StatusCode, out.Error, out.Description)}
	case resp.StatusCode != http.StatusOK || out.AccessToken == "":
		return token{}, fmt.Errorf("vertex token exchange: token endpoint answered %d", resp.StatusCode)
	}
	if out.ExpiresIn <= 0 {
		out.ExpiresIn = 3600
	}
	return token{access: out.AccessToken, expires: now.Add(time.Duration(out.ExpiresIn) * time.Second)}, nil
}

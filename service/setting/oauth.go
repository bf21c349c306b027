package setting

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"tollgate/service/apperr"
	"tollgate/service/secret"
)

// OAuth configures sign-in with external accounts (service/oauth): GitHub and any number of OIDC providers.
// Client secrets are stored sealed and shown masked, like payment secrets.
type OAuth struct {
	GitHub GitHubOAuth    `json:"github"`
	OIDC   []OIDCProvider `json:"oidc"`
}

// GitHubOAuth is a GitHub OAuth app. The URLs default to github.com's (set them for GitHub Enterprise).
type GitHubOAuth struct {
	Enabled      bool   `json:"enabled"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	AuthURL      string `json:"auth_url"`  // default https://github.com/login/oauth/authorize
	TokenURL     string `json:"token_url"` // default https://github.com/login/oauth/access_token
	APIURL       string `json:"api_url"`   // default https://api.github.com
}

// OIDCProvider is an OpenID Connect provider found by discovery at Issuer (+/.well-known/openid-configuration).
type OIDCProvider struct {
	Enabled      bool     `json:"enabled"`
	Slug         string   `json:"slug"` // in URLs: /api/auth/oauth/<slug>/start
	Name         string   `json:"name"` // on the login button
	Issuer       string   `json:"issuer"`
	ClientID     string   `json:"client_id"`
	ClientSecret string   `json:"client_secret"`
	Scopes       []string `json:"scopes"` // besides openid (default: email profile)
}

// GitHubSlug is GitHub's slug; no OIDC provider may take it.
const GitHubSlug = "github"

var slugRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)

// detachOAuth gives o its own slices (never nil, so the API shows [] rather than null).
func detachOAuth(o *OAuth) {
	ps := make([]OIDCProvider, len(o.OIDC))
	for i, p := range o.OIDC {
		p.Scopes = append([]string{}, p.Scopes...)
		ps[i] = p
	}
	o.OIDC = ps
}

func oauthSecrets(o *OAuth) []*string {
	out := []*string{&o.GitHub.ClientSecret}
	for i := range o.OIDC {
		out = append(out, &o.OIDC[i].ClientSecret)
	}
	return out
}

func maskOAuth(o *OAuth) {
	detachOAuth(o)
	for _, p := range oauthSecrets(o) {
		if *p != "" {
			*p = secret.Mask(*p)
		}
	}
}

// keepMaskedOAuth puts back each client secret sent as the mask of the stored one (an OIDC provider's by slug).
func keepMaskedOAuth(prev, next *OAuth) error {
	if p := prev.GitHub.ClientSecret; p != "" && next.GitHub.ClientSecret == secret.Mask(p) {
		next.GitHub.ClientSecret = p
	} else if strings.Contains(next.GitHub.ClientSecret, "****") {
		return apperr.Field("oauth.github.client_secret", "a masked value that does not match the stored one")
	}
	stored := map[string]string{}
	for _, p := range prev.OIDC {
		stored[p.Slug] = p.ClientSecret
	}
	for i := range next.OIDC {
		p := &next.OIDC[i]
		if s, ok := stored[p.Slug]; ok && s != "" && p.ClientSecret == secret.Mask(s) {
			p.ClientSecret = s
		} else if strings.Contains(p.ClientSecret, "****") {
			return apperr.Field("oauth.oidc.client_secret", "a masked value that does not match the stored one")
		}
	}
	return nil
}

func httpURL(s string, allowEmpty bool) bool {
	if s == "" {
		return allowEmpty
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil && len(s) <= 512
}

func validateOAuth(o *OAuth) error {
	g := &o.GitHub
	switch {
	case g.Enabled && (g.ClientID == "" || g.ClientSecret == ""):
		return apperr.Field("oauth.github.client_id", "client id and secret are required when GitHub is enabled")
	case len(g.ClientID) > 256 || len(g.ClientSecret) > 256:
		return apperr.Field("oauth.github.client_id", "at most 256 characters")
	case !httpURL(g.AuthURL, true) || !httpURL(g.TokenURL, true) || !httpURL(g.APIURL, true):
		return apperr.Field("oauth.github.auth_url", "http(s) URLs of at most 512 characters, or empty for github.com")
	case len(o.OIDC) > 20:
		return apperr.Field("oauth.oidc", "at most 20 providers")
	}
	seen := map[string]bool{GitHubSlug: true}
	for _, p := range o.OIDC {
		switch {
		case !slugRE.MatchString(p.Slug) || seen[p.Slug]:
			return apperr.Field("oauth.oidc.slug", fmt.Sprintf("%q: 1-32 lower-case letters, digits and '-', unique, not %q", p.Slug, GitHubSlug))
		case strings.TrimSpace(p.Name) == "" || len(p.Name) > 64:
			return apperr.Field("oauth.oidc.name", "1-64 characters")
		case !httpURL(p.Issuer, false):
			return apperr.Field("oauth.oidc.issuer", "the issuer's http(s) URL (discovery is read from it)")
		case p.ClientID == "" || len(p.ClientID) > 256 || len(p.ClientSecret) > 256:
			return apperr.Field("oauth.oidc.client_id", "required, at most 256 characters (secret too)")
		case len(p.Scopes) > 20:
			return apperr.Field("oauth.oidc.scopes", "at most 20 scopes")
		}
		for _, sc := range p.Scopes {
			if sc == "" || len(sc) > 64 || strings.ContainsAny(sc, " \t\r\n\"") {
				return apperr.Field("oauth.oidc.scopes", "scope names without spaces")
			}
		}
		seen[p.Slug] = true
	}
	return nil
}

// sealOAuth returns a copy of o with its client secrets encrypted for storage.
func (s *Service) sealOAuth(o OAuth) (OAuth, error) {
	detachOAuth(&o)
	for _, p := range oauthSecrets(&o) {
		if *p == "" {
			continue
		}
		sealed, err := s.keys.Encrypt(*p)
		if err != nil {
			return o, fmt.Errorf("seal oauth secret: %w", err)
		}
		*p = sealedPrefix + sealed
	}
	return o, nil
}

// openOAuth decrypts sealed client secrets after a load; one that does not open is dropped.
func (s *Service) openOAuth(o *OAuth) {
	for _, p := range oauthSecrets(o) {
		if !strings.HasPrefix(*p, sealedPrefix) {
			continue
		}
		plain := ""
		if s.keys != nil {
			if v, err := s.keys.Decrypt(strings.TrimPrefix(*p, sealedPrefix)); err == nil {
				plain = v
			}
		}
		*p = plain
	}
}

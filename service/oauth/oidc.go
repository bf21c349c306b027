package oauth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"tollgate/service/setting"
)

// discoveryTTL is how long a provider's discovery document is used before it is read again (its JWKS is
// refetched by go-oidc whenever a token names a key it does not know).
const discoveryTTL = time.Hour

type discovered struct {
	p  *oidc.Provider
	at time.Time
}

// oidcProvider is an OpenID Connect provider found by discovery.
type oidcProvider struct {
	cfg setting.OIDCProvider
	svc *Service
}

func (o *oidcProvider) info() Info { return Info{Slug: o.cfg.Slug, Name: o.cfg.Name, Type: TypeOIDC} }

// discover returns the issuer's provider metadata (cached per issuer, read again after discoveryTTL).
func (s *Service) discover(ctx context.Context, issuer string) (*oidc.Provider, error) {
	s.mu.Lock()
	d := s.discovery[issuer]
	s.mu.Unlock()
	if d != nil && s.now().Sub(d.at) < discoveryTTL {
		return d.p, nil
	}
	dctx, cancel := context.WithTimeout(ctx, exchangeTimeout)
	defer cancel()
	p, err := oidc.NewProvider(oidc.ClientContext(dctx, s.client), strings.TrimSuffix(issuer, "/"))
	if err != nil {
		return nil, fmt.Errorf("discovery %s: %w", issuer, err)
	}
	s.mu.Lock()
	s.discovery[issuer] = &discovered{p: p, at: s.now()}
	s.mu.Unlock()
	return p, nil
}

func (o *oidcProvider) config(p *oidc.Provider, redirectURI string) *oauth2.Config {
	scopes := []string{oidc.ScopeOpenID}
	if len(o.cfg.Scopes) == 0 {
		scopes = append(scopes, "email", "profile")
	}
	for _, sc := range o.cfg.Scopes {
		if sc != oidc.ScopeOpenID {
			scopes = append(scopes, sc)
		}
	}
	return &oauth2.Config{ClientID: o.cfg.ClientID, ClientSecret: o.cfg.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: redirectURI, Scopes: scopes}
}

func (o *oidcProvider) authURL(ctx context.Context, redirectURI, state, nonce, verifier string) (string, error) {
	p, err := o.svc.discover(ctx, o.cfg.Issuer)
	if err != nil {
		return "", err
	}
	return o.config(p, redirectURI).AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), nil
}

// idClaims are the ID token (or user info) claims we read.
type idClaims struct {
	Email             string `json:"email"`
	EmailVerified     *bool  `json:"email_verified"`
	PreferredUsername string `json:"preferred_username"`
	Name              string `json:"name"`
}

func (o *oidcProvider) exchange(ctx context.Context, redirectURI, code, verifier, nonce string) (*Profile, error) {
	p, err := o.svc.discover(ctx, o.cfg.Issuer)
	if err != nil {
		return nil, err
	}
	cfg := o.config(p, redirectURI)
	hctx := oidc.ClientContext(ctx, o.svc.client)
	tok, err := cfg.Exchange(context.WithValue(hctx, oauth2.HTTPClient, o.svc.client), code, oauth2.VerifierOption(verifier))
	if err != nil {
		return nil, fmt.Errorf("token exchange: %w", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return nil, errors.New("no id_token in the token response")
	}
	// Signature against the issuer's JWKS, issuer, audience (our client id) and expiry.
	idt, err := p.Verifier(&oidc.Config{ClientID: o.cfg.ClientID, Now: o.svc.now}).Verify(hctx, raw)
	if err != nil {
		return nil, fmt.Errorf("id token: %w", err)
	}
	if idt.Nonce == "" || idt.Nonce != nonce {
		return nil, errors.New("id token: nonce does not match the flow's")
	}
	if idt.AccessTokenHash != "" {
		if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
			return nil, fmt.Errorf("id token: at_hash: %w", err)
		}
	}
	var c idClaims
	if err := idt.Claims(&c); err != nil {
		return nil, fmt.Errorf("id token claims: %w", err)
	}
	if c.Email == "" && p.UserInfoEndpoint() != "" {
		// Some providers (Keycloak without the email scope mapped to the ID token) only tell in user info;
		// its subject must be the ID token's.
		if ui, err := p.UserInfo(hctx, oauth2.StaticTokenSource(tok)); err == nil && ui.Subject == idt.Subject {
			var uc idClaims
			if ui.Claims(&uc) == nil {
				c.Email, c.EmailVerified = uc.Email, uc.EmailVerified
				if c.PreferredUsername == "" {
					c.PreferredUsername = uc.PreferredUsername
				}
			}
		}
	}
	return &Profile{Subject: idt.Subject, Email: strings.TrimSpace(c.Email),
		EmailVerified: c.EmailVerified != nil && *c.EmailVerified, Username: c.PreferredUsername}, nil
}

package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"golang.org/x/oauth2"

	"tollgate/service/setting"
)

// github is a GitHub OAuth app (github.com or GitHub Enterprise). GitHub speaks plain OAuth 2, no ID token:
// the account is read from its API, and only an e-mail GitHub marks verified is used.
type github struct {
	cfg    setting.GitHubOAuth
	client *http.Client
}

func (g *github) info() Info { return Info{Slug: setting.GitHubSlug, Name: "GitHub", Type: TypeGitHub} }

func or(v, def string) string {
	if v == "" {
		return def
	}
	return strings.TrimSuffix(v, "/")
}

func (g *github) config(redirectURI string) *oauth2.Config {
	return &oauth2.Config{ClientID: g.cfg.ClientID, ClientSecret: g.cfg.ClientSecret, RedirectURL: redirectURI,
		Scopes: []string{"read:user", "user:email"},
		Endpoint: oauth2.Endpoint{AuthURL: or(g.cfg.AuthURL, "https://github.com/login/oauth/authorize"),
			TokenURL: or(g.cfg.TokenURL, "https://github.com/login/oauth/access_token"), AuthStyle: oauth2.AuthStyleInParams}}
}

func (g *github) authURL(_ context.Context, redirectURI, state, _, verifier string) (string, error) {
	return g.config(redirectURI).AuthCodeURL(state, oauth2.S256ChallengeOption(verifier)), nil
}

func (g *github) exchange(ctx context.Context, redirectURI, code, verifier, _ string) (*Profile, error) {
	tok, err := g.config(redirectURI).Exchange(context.WithValue(ctx, oauth2.HTTPClient, g.client), code, oauth2.VerifierOption(verifier))
	if err != nil {
		return nil, fmt.Errorf("token exchange: %w", err)
	}
	api := or(g.cfg.APIURL, "https://api.github.com")
	var user struct {
		ID    int64  `json:"id"`
		Login string `json:"login"`
	}
	if err := g.get(ctx, tok, api+"/user", &user); err != nil {
		return nil, err
	}
	if user.ID == 0 {
		return nil, errors.New("github /user: no id")
	}
	var emails []struct {
		Email    string `json:"email"`
		Primary  bool   `json:"primary"`
		Verified bool   `json:"verified"`
	}
	if err := g.get(ctx, tok, api+"/user/emails", &emails); err != nil {
		return nil, err
	}
	p := &Profile{Subject: strconv.FormatInt(user.ID, 10), Username: user.Login}
	for _, e := range emails { // the primary verified address, else the first verified one
		if e.Verified && (e.Primary || p.Email == "") {
			p.Email, p.EmailVerified = e.Email, true
		}
	}
	return p, nil
}

func (g *github) get(ctx context.Context, tok *oauth2.Token, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	res, err := g.client.Do(req)
	if err != nil {
		return fmt.Errorf("github %s: %w", url, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("github %s: %w", url, err)
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("github %s: status %d", url, res.StatusCode)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("github %s: %w", url, err)
	}
	return nil
}

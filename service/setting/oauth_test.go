package setting

import (
	"testing"

	"tollgate/service/apperr"
	"tollgate/service/secret"
)

func TestValidateOAuth_RefusesBadProviders(t *testing.T) {
	ok := OIDCProvider{Enabled: true, Slug: "corp", Name: "Corp", Issuer: "https://sso.example.com", ClientID: "id", ClientSecret: "s"}
	with := func(f func(p *OIDCProvider)) OAuth {
		p := ok
		f(&p)
		return OAuth{OIDC: []OIDCProvider{p}}
	}
	cases := []struct {
		name  string
		o     OAuth
		field string
	}{
		{"github slug taken", with(func(p *OIDCProvider) { p.Slug = "github" }), "oauth.oidc.slug"},
		{"capital slug", with(func(p *OIDCProvider) { p.Slug = "Corp" }), "oauth.oidc.slug"},
		{"duplicate slug", OAuth{OIDC: []OIDCProvider{ok, ok}}, "oauth.oidc.slug"},
		{"no name", with(func(p *OIDCProvider) { p.Name = " " }), "oauth.oidc.name"},
		{"issuer not http", with(func(p *OIDCProvider) { p.Issuer = "javascript:alert(1)" }), "oauth.oidc.issuer"},
		{"issuer with user info", with(func(p *OIDCProvider) { p.Issuer = "https://u:p@sso.example.com" }), "oauth.oidc.issuer"},
		{"no client id", with(func(p *OIDCProvider) { p.ClientID = "" }), "oauth.oidc.client_id"},
		{"scope with space", with(func(p *OIDCProvider) { p.Scopes = []string{"a b"} }), "oauth.oidc.scopes"},
		{"github without secret", OAuth{GitHub: GitHubOAuth{Enabled: true, ClientID: "x"}}, "oauth.github.client_id"},
		{"github bad url", OAuth{GitHub: GitHubOAuth{APIURL: "ftp://x"}}, "oauth.github.auth_url"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := validateOAuth(&tc.o)
			if err == nil || !containsField(err, tc.field) {
				t.Fatalf("validateOAuth = %v, want a %s error", err, tc.field)
			}
		})
	}
	good := OAuth{OIDC: []OIDCProvider{ok}, GitHub: GitHubOAuth{Enabled: true, ClientID: "x", ClientSecret: "y"}}
	if err := validateOAuth(&good); err != nil {
		t.Fatalf("a valid configuration refused: %v", err)
	}
}

func containsField(err error, field string) bool {
	ae, ok := apperr.As(err)
	return ok && ae.Field == field
}

func TestKeepMaskedOAuth_KeepsStoredSecretsByMask(t *testing.T) {
	prev := OAuth{GitHub: GitHubOAuth{ClientSecret: "github-secret-1"},
		OIDC: []OIDCProvider{{Slug: "corp", ClientSecret: "corp-secret-22"}}}
	next := OAuth{GitHub: GitHubOAuth{ClientSecret: secret.Mask("github-secret-1")},
		OIDC: []OIDCProvider{{Slug: "corp", ClientSecret: secret.Mask("corp-secret-22")}}}
	if err := keepMaskedOAuth(&prev, &next); err != nil {
		t.Fatal(err)
	}
	if next.GitHub.ClientSecret != "github-secret-1" || next.OIDC[0].ClientSecret != "corp-secret-22" {
		t.Fatalf("masks not resolved: %+v", next)
	}
	// A mask moved to another slug matches nothing stored there: refused rather than stored as "****".
	moved := OAuth{OIDC: []OIDCProvider{{Slug: "other", ClientSecret: secret.Mask("corp-secret-22")}}}
	if err := keepMaskedOAuth(&prev, &moved); err == nil {
		t.Fatal("a mask under another slug was accepted")
	}
}

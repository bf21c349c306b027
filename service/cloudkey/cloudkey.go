// Package cloudkey reads the credentials cloud channels keep as their (sealed) keys: a Google service-account
// JSON for Vertex AI and an AWS access key pair for Bedrock. The channel service checks them on save with
// the same parsers the adaptors sign with, so a key that saves is a key that signs.
package cloudkey

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ServiceAccount is the part of a Google service-account key file that signs a token request.
type ServiceAccount struct {
	ClientEmail  string
	PrivateKeyID string
	ProjectID    string
	TokenURI     string
	Key          *rsa.PrivateKey
}

// DefaultTokenURI is Google's OAuth token endpoint, used when the key file names none.
const DefaultTokenURI = "https://oauth2.googleapis.com/token"

// ParseServiceAccount reads a service-account key file (type "service_account", client_email, a PEM private
// key in PKCS#8 or PKCS#1, token_uri).
func ParseServiceAccount(raw string) (*ServiceAccount, error) {
	var f struct {
		Type         string `json:"type"`
		ClientEmail  string `json:"client_email"`
		PrivateKey   string `json:"private_key"`
		PrivateKeyID string `json:"private_key_id"`
		ProjectID    string `json:"project_id"`
		TokenURI     string `json:"token_uri"`
	}
	if err := json.Unmarshal([]byte(raw), &f); err != nil {
		return nil, errors.New("not a service-account JSON key file")
	}
	if f.Type != "service_account" {
		return nil, fmt.Errorf("type is %q, want \"service_account\"", f.Type)
	}
	if f.ClientEmail == "" {
		return nil, errors.New("client_email is missing")
	}
	block, _ := pem.Decode([]byte(f.PrivateKey))
	if block == nil {
		return nil, errors.New("private_key is not a PEM key")
	}
	var key *rsa.PrivateKey
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, errors.New("private_key is not an RSA key")
		}
		key = rk
	} else if rk, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		key = rk
	} else {
		return nil, errors.New("private_key does not parse")
	}
	if f.TokenURI == "" {
		f.TokenURI = DefaultTokenURI
	}
	if u, err := url.Parse(f.TokenURI); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, errors.New("token_uri is not an http(s) URL")
	}
	return &ServiceAccount{ClientEmail: f.ClientEmail, PrivateKeyID: f.PrivateKeyID, ProjectID: f.ProjectID,
		TokenURI: f.TokenURI, Key: key}, nil
}

// AWS is an AWS credential: an access key id, its secret and, for temporary credentials, a session token.
type AWS struct {
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
}

// ParseAWS reads "ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]" or a JSON object with access_key_id,
// secret_access_key and optionally session_token.
func ParseAWS(raw string) (AWS, error) {
	raw = strings.TrimSpace(raw)
	var c AWS
	if strings.HasPrefix(raw, "{") {
		var f struct {
			AccessKeyID     string `json:"access_key_id"`
			SecretAccessKey string `json:"secret_access_key"`
			SessionToken    string `json:"session_token"`
		}
		if err := json.Unmarshal([]byte(raw), &f); err != nil {
			return c, errors.New("not a JSON object with access_key_id and secret_access_key")
		}
		c = AWS{f.AccessKeyID, f.SecretAccessKey, f.SessionToken}
	} else {
		parts := strings.SplitN(raw, ":", 3)
		if len(parts) < 2 {
			return c, errors.New(`want "ACCESS_KEY_ID:SECRET_ACCESS_KEY"`)
		}
		c.AccessKeyID, c.SecretAccessKey = parts[0], parts[1]
		if len(parts) == 3 {
			c.SessionToken = parts[2]
		}
	}
	if c.AccessKeyID == "" || c.SecretAccessKey == "" || strings.ContainsAny(c.AccessKeyID, " /\r\n") {
		return c, errors.New("access key id and secret access key are both required")
	}
	return c, nil
}

package cloudkey

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"
)

func keyFile(t *testing.T, over map[string]string, pkcs1 bool) string {
	t.Helper()
	pk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	block := &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(pk)}
	if !pkcs1 {
		der, _ := x509.MarshalPKCS8PrivateKey(pk)
		block = &pem.Block{Type: "PRIVATE KEY", Bytes: der}
	}
	f := map[string]string{"type": "service_account", "client_email": "a@p.iam.gserviceaccount.com", "project_id": "p-1",
		"private_key": string(pem.EncodeToMemory(block))}
	for k, v := range over {
		f[k] = v
	}
	b, _ := json.Marshal(f)
	return string(b)
}

func TestParseServiceAccount(t *testing.T) {
	sa, err := ParseServiceAccount(keyFile(t, nil, false))
	if err != nil || sa.TokenURI != DefaultTokenURI || sa.ProjectID != "p-1" || sa.Key == nil {
		t.Fatalf("%+v %v", sa, err)
	}
	if _, err := ParseServiceAccount(keyFile(t, map[string]string{"token_uri": "http://127.0.0.1:9/token"}, true)); err != nil {
		t.Fatalf("PKCS#1 key with a token_uri: %v", err)
	}
	for name, raw := range map[string]string{
		"not json":      "nope",
		"user creds":    keyFile(t, map[string]string{"type": "authorized_user"}, false),
		"no email":      keyFile(t, map[string]string{"client_email": ""}, false),
		"no pem":        keyFile(t, map[string]string{"private_key": "MIIE"}, false),
		"bad token uri": keyFile(t, map[string]string{"token_uri": "file:///etc/passwd"}, false),
		"broken der":    keyFile(t, map[string]string{"private_key": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"}, false),
	} {
		if _, err := ParseServiceAccount(raw); err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), "BEGIN") {
			t.Errorf("%s: the error quotes the key: %v", name, err)
		}
	}
}

func TestParseAWS(t *testing.T) {
	ok := map[string]AWS{
		"AKID:sec/ret+x":       {"AKID", "sec/ret+x", ""},
		"AKID:secret:tok:en==": {"AKID", "secret", "tok:en=="},
		`{"access_key_id":"A","secret_access_key":"S","session_token":"T"}`: {"A", "S", "T"},
	}
	for in, want := range ok {
		if got, err := ParseAWS(in); err != nil || got != want {
			t.Errorf("%q: %+v %v", in, got, err)
		}
	}
	for _, in := range []string{"", "AKID", ":secret", "AKID:", `{"access_key_id":"A"}`, "{bad", "AK ID:secret"} {
		if _, err := ParseAWS(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

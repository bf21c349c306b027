package secret

import (
	"strings"
	"testing"
)

func TestKeyring_EncryptDecryptRoundTripAndTamper(t *testing.T) {
	k, err := New("0123456789abcdef0123")
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := k.Encrypt("sk-secret")
	if err != nil || strings.Contains(sealed, "sk-secret") {
		t.Fatalf("sealed=%q err=%v", sealed, err)
	}
	if got, err := k.Decrypt(sealed); err != nil || got != "sk-secret" {
		t.Fatalf("got %q err %v", got, err)
	}
	other, _ := New("another-secret-key-xyz")
	if _, err := other.Decrypt(sealed); err == nil {
		t.Fatal("a different secret must not decrypt")
	}
	if k.Hash("a") == other.Hash("a") || k.Hash("a") != k.Hash("a") {
		t.Fatal("hash must be keyed and deterministic")
	}
}

func TestRandomBase62_LengthAndAlphabet(t *testing.T) {
	s, err := RandomBase62(48)
	if err != nil || len(s) != 48 {
		t.Fatal(s, err)
	}
	for _, c := range s {
		if !strings.ContainsRune(base62, c) {
			t.Fatalf("bad char %q", c)
		}
	}
}

func TestMask(t *testing.T) {
	if got := Mask("sk-abcdEFGHijklMNOPqrst1234"); got != "sk-abcd****1234" {
		t.Fatal(got)
	}
	if Mask("short") != "****" {
		t.Fatal("short values are fully masked")
	}
}

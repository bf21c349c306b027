package secret

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
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

// The pooled HMAC states give the same hash as a fresh HMAC, also when many goroutines hash at once.
func TestHash_PooledStatesMatchAFreshHMAC(t *testing.T) {
	k, err := New("0123456789abcdef-pool")
	if err != nil {
		t.Fatal(err)
	}
	want := func(v string) string {
		m := hmac.New(sha256.New, derive("0123456789abcdef-pool", "mac"))
		m.Write([]byte(v))
		return hex.EncodeToString(m.Sum(nil))
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				v := fmt.Sprintf("sk-%d-%d-%s", g, i, strings.Repeat("x", i%70))
				if got := k.Hash(v); got != want(v) {
					t.Errorf("Hash(%q) = %s, want %s", v, got, want(v))
					return
				}
			}
		})
	}
	wg.Wait()
}

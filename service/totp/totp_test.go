package totp

import (
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"hash"
	"net/url"
	"strings"
	"testing"
	"time"
)

// RFC 6238 appendix B: 8-digit codes at the given Unix times, for the three hashes with their seeds.
func TestHOTP_RFC6238Vectors(t *testing.T) {
	seed1 := []byte("12345678901234567890")
	seed256 := []byte("12345678901234567890123456789012")
	seed512 := []byte("1234567890123456789012345678901234567890123456789012345678901234")
	cases := []struct {
		unix int64
		h    func() hash.Hash
		key  []byte
		want string
	}{
		{59, sha1.New, seed1, "94287082"}, {59, sha256.New, seed256, "46119246"}, {59, sha512.New, seed512, "90693936"},
		{1111111109, sha1.New, seed1, "07081804"}, {1111111109, sha256.New, seed256, "68084774"}, {1111111109, sha512.New, seed512, "25091201"},
		{1111111111, sha1.New, seed1, "14050471"}, {1111111111, sha256.New, seed256, "67062674"}, {1111111111, sha512.New, seed512, "99943326"},
		{1234567890, sha1.New, seed1, "89005924"}, {1234567890, sha256.New, seed256, "91819424"}, {1234567890, sha512.New, seed512, "93441116"},
		{2000000000, sha1.New, seed1, "69279037"}, {2000000000, sha256.New, seed256, "90698825"}, {2000000000, sha512.New, seed512, "38618901"},
		{20000000000, sha1.New, seed1, "65353130"}, {20000000000, sha256.New, seed256, "77737706"}, {20000000000, sha512.New, seed512, "47863826"},
	}
	for _, c := range cases {
		step := Step(time.Unix(c.unix, 0))
		if got := HOTP(c.h, c.key, uint64(step), 8); got != c.want {
			t.Errorf("T=%d: got %s, want %s", c.unix, got, c.want)
		}
	}
}

// RFC 4226 appendix D: six-digit HOTP values for counters 0..9.
func TestHOTP_RFC4226Vectors(t *testing.T) {
	want := []string{"755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"}
	for i, w := range want {
		if got := Code([]byte("12345678901234567890"), int64(i)); got != w {
			t.Errorf("counter %d: got %s, want %s", i, got, w)
		}
	}
}

func TestMatch_AcceptsOneStepOfDriftAndRefusesUsedSteps(t *testing.T) {
	key := []byte("12345678901234567890")
	now := time.Unix(1_700_000_000, 0)
	cur := Step(now)
	for _, d := range []int64{-1, 0, 1} {
		if s, ok := Match(key, Code(key, cur+d), now, 0); !ok || s != cur+d {
			t.Errorf("drift %d: got (%d, %v)", d, s, ok)
		}
	}
	for _, d := range []int64{-2, 2} {
		if _, ok := Match(key, Code(key, cur+d), now, 0); ok {
			t.Errorf("drift %d accepted", d)
		}
	}
	if _, ok := Match(key, Code(key, cur), now, cur); ok {
		t.Error("a step already used was accepted again")
	}
	if _, ok := Match(key, "12345", now, 0); ok {
		t.Error("a five-digit code was accepted")
	}
}

func TestSecretAndURL_RoundTrip(t *testing.T) {
	s, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	key, err := Decode(strings.ToLower(s))
	if err != nil || len(key) != 20 {
		t.Fatalf("decode %q: %v (len %d)", s, err, len(key))
	}
	u, err := url.Parse(URL("Tollgate Site", "alice", s))
	if err != nil {
		t.Fatal(err)
	}
	if u.Scheme != "otpauth" || u.Host != "totp" || u.Query().Get("secret") != s || u.Query().Get("issuer") != "Tollgate Site" {
		t.Fatalf("bad url %s", u)
	}
	if !strings.HasPrefix(u.Path, "/Tollgate Site:alice") {
		t.Fatalf("label %q", u.Path)
	}
}

// Package secret derives Tollgate's keys from SECRET_KEY: AES-GCM for values stored encrypted (user sk- keys,
// upstream channel keys), HMAC-SHA256 for finding a key by its hash, and the JWT signing key.
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"math/big"
	"sync"
)

// Keyring holds the derived keys; it is safe for concurrent use.
type Keyring struct {
	aead   cipher.AEAD
	macKey []byte
	jwtKey []byte
	macs   sync.Pool // HMAC states keyed with macKey: Reset restores the keyed state without rehashing the key
}

func derive(secret, purpose string) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("tollgate/" + purpose))
	return m.Sum(nil)
}

// New derives a keyring from the secret.
func New(secretKey string) (*Keyring, error) {
	if len(secretKey) < 16 {
		return nil, errors.New("secret key shorter than 16 characters")
	}
	block, err := aes.NewCipher(derive(secretKey, "enc"))
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Keyring{aead: aead, macKey: derive(secretKey, "mac"), jwtKey: derive(secretKey, "jwt")}, nil
}

// Encrypt seals plain text as base64(nonce | ciphertext).
func (k *Keyring) Encrypt(plain string) (string, error) {
	nonce := make([]byte, k.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	out := k.aead.Seal(nonce, nonce, []byte(plain), nil)
	return base64.RawStdEncoding.EncodeToString(out), nil
}

// Decrypt opens what Encrypt sealed.
func (k *Keyring) Decrypt(sealed string) (string, error) {
	b, err := base64.RawStdEncoding.DecodeString(sealed)
	if err != nil {
		return "", fmt.Errorf("decrypt: %w", err)
	}
	ns := k.aead.NonceSize()
	if len(b) < ns {
		return "", errors.New("decrypt: too short")
	}
	plain, err := k.aead.Open(nil, b[:ns], b[ns:], nil)
	if err != nil {
		return "", fmt.Errorf("decrypt: %w", err)
	}
	return string(plain), nil
}

// Hash is the keyed lookup hash (hex HMAC-SHA256) of a secret value.
func (k *Keyring) Hash(value string) string {
	m, _ := k.macs.Get().(hash.Hash)
	if m == nil {
		m = hmac.New(sha256.New, k.macKey)
	}
	m.Reset()
	_, _ = io.WriteString(m, value)
	var sum [sha256.Size]byte
	out := hex.EncodeToString(m.Sum(sum[:0]))
	k.macs.Put(m)
	return out
}

// JWTKey is the HS256 signing key for console sessions.
func (k *Keyring) JWTKey() []byte { return k.jwtKey }

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// RandomBase62 returns n characters drawn uniformly from [0-9A-Za-z] with crypto/rand.
func RandomBase62(n int) (string, error) {
	out := make([]byte, n)
	max := big.NewInt(int64(len(base62)))
	for i := range out {
		v, err := rand.Int(rand.Reader, max)
		if err != nil {
			return "", err
		}
		out[i] = base62[v.Int64()]
	}
	return string(out), nil
}

// Mask shows the first 4 and last 4 characters after a prefix-aware cut: "sk-abcd****wxyz".
func Mask(s string) string {
	if len(s) <= 12 {
		return "****"
	}
	head := 4
	if len(s) > 3 && s[:3] == "sk-" {
		head = 7
	}
	return s[:head] + "****" + s[len(s)-4:]
}

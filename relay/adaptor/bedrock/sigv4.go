package bedrock

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"tollgate/service/cloudkey"
)

// Signature Version 4 (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html),
// the subset Bedrock's runtime needs: a POST with a body known in full, no query string. It signs host,
// content-length, content-type, x-amz-content-sha256, x-amz-date and (temporary credentials)
// x-amz-security-token; the test checks it against the AWS SDK for Go's signer.

const (
	amzDate       = "20060102T150405Z"
	algorithm     = "AWS4-HMAC-SHA256"
	service       = "bedrock"
	headerDate    = "X-Amz-Date"
	headerSHA     = "X-Amz-Content-Sha256"
	headerSession = "X-Amz-Security-Token"
)

// sign adds the SigV4 headers and Authorization to req for body, at time t.
func sign(req *http.Request, body []byte, c cloudkey.AWS, region string, t time.Time) {
	t = t.UTC()
	sum := sha256.Sum256(body)
	payloadHash := hex.EncodeToString(sum[:])
	req.Header.Set(headerDate, t.Format(amzDate))
	req.Header.Set(headerSHA, payloadHash)
	if c.SessionToken != "" {
		req.Header.Set(headerSession, c.SessionToken)
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	signed := map[string]string{"host": host}
	if req.ContentLength > 0 {
		signed["content-length"] = strconv.FormatInt(req.ContentLength, 10)
	}
	for _, h := range []string{"Content-Type", headerDate, headerSHA, headerSession} {
		if v := req.Header.Get(h); v != "" {
			signed[strings.ToLower(h)] = strings.Join(strings.Fields(v), " ")
		}
	}
	names := make([]string, 0, len(signed))
	for k := range signed {
		names = append(names, k)
	}
	sort.Strings(names)
	var canon strings.Builder
	for _, k := range names {
		canon.WriteString(k + ":" + signed[k] + "\n")
	}
	signedHeaders := strings.Join(names, ";")
	canonicalRequest := strings.Join([]string{req.Method, canonicalURI(req.URL.EscapedPath()), req.URL.RawQuery,
		canon.String(), signedHeaders, payloadHash}, "\n")
	day := t.Format("20060102")
	scope := day + "/" + region + "/" + service + "/aws4_request"
	crSum := sha256.Sum256([]byte(canonicalRequest))
	stringToSign := algorithm + "\n" + t.Format(amzDate) + "\n" + scope + "\n" + hex.EncodeToString(crSum[:])
	key := hmacSHA256([]byte("AWS4"+c.SecretAccessKey), day)
	key = hmacSHA256(key, region)
	key = hmacSHA256(key, service)
	key = hmacSHA256(key, "aws4_request")
	sig := hex.EncodeToString(hmacSHA256(key, stringToSign))
	req.Header.Set("Authorization", algorithm+" Credential="+c.AccessKeyID+"/"+scope+", SignedHeaders="+signedHeaders+", Signature="+sig)
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// canonicalURI escapes the (already escaped) path once more, as SigV4 does for every service but S3: a model id's
// ":" travels as %3A and is signed as %253A. Unreserved characters and "/" stay.
func canonicalURI(escaped string) string {
	if escaped == "" {
		return "/"
	}
	var b strings.Builder
	for i := 0; i < len(escaped); i++ {
		c := escaped[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' || c == '/' {
			b.WriteByte(c)
			continue
		}
		b.WriteString("%" + strings.ToUpper(hex.EncodeToString([]byte{c})))
	}
	return b.String()
}

package relaytest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"tollgate/relay/eventstream"
)

// Bedrock is a fake AWS Bedrock runtime in front of an Anthropic fake. Every request's SigV4 signature is
// recomputed with the AWS SDK for Go's own signer (aws/signer/v4) over the headers the request says it signed,
// and must match, as must the credential scope (access key, date, region, service bedrock) and the payload
// hash; a mismatch is a 403 InvalidSignatureException. /model/{modelId}/invoke answers the Anthropic fake's
// JSON; /model/{modelId}/invoke-with-response-stream answers its SSE events re-framed as the AWS event
// stream (each event base64 in a chunk's {"bytes": ...}; an error event becomes an exception message). The
// body must carry anthropic_version "bedrock-2023-05-31" and no model.
type Bedrock struct {
	cloudLog
	*Upstream
	front *httptest.Server
	// URL is the runtime endpoint (the channel's base URL); Region and the credentials are what it accepts.
	URL, Region            string
	AccessKeyID, SecretKey string
	// Verified and Refused count requests whose signature matched and did not.
	Verified, Refused atomic.Int64
}

// NewBedrock starts a Bedrock front for region over a new fake upstream configured by opts.
func NewBedrock(region string, opts ...Option) *Bedrock {
	b := &Bedrock{Upstream: New(opts...), Region: region, AccessKeyID: "AKIDTOLLGATETEST", SecretKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYTESTKEY"}
	b.front = httptest.NewServer(http.HandlerFunc(b.serve))
	b.URL = b.front.URL
	return b
}

// Key is the channel key for the accepted credentials.
func (b *Bedrock) Key() string { return b.AccessKeyID + ":" + b.SecretKey }

// Close stops the front and the fake behind it.
func (b *Bedrock) Close() { b.front.Close(); b.Upstream.Close() }

func (b *Bedrock) serve(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	b.add(r, body)
	if msg := b.verify(r, body); msg != "" {
		b.Refused.Add(1)
		writeAWSError(w, http.StatusForbidden, "InvalidSignatureException", msg)
		return
	}
	b.Verified.Add(1)
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/model/")
	id, action, _ := strings.Cut(rest, "/")
	id, err := url.PathUnescape(id)
	if !ok || err != nil || (action != "invoke" && action != "invoke-with-response-stream") {
		writeAWSError(w, http.StatusNotFound, "UnknownOperationException", "")
		return
	}
	if gjson.GetBytes(body, "anthropic_version").String() != "bedrock-2023-05-31" || gjson.GetBytes(body, "model").Exists() {
		writeAWSError(w, http.StatusBadRequest, "ValidationException", "anthropic_version bedrock-2023-05-31 required; extraneous key [model] is not permitted")
		return
	}
	body, _ = sjson.SetBytes(body, "model", id)
	stream := action == "invoke-with-response-stream"
	body, _ = sjson.SetBytes(body, "stream", stream)
	var out http.ResponseWriter = w
	if stream {
		out = &frameWriter{w: w}
	}
	forward(b.Handler, out, r, "/v1/messages", body, func(h http.Header) { h.Set("x-api-key", b.AccessKeyID) })
}

// verify recomputes the request's signature with the official signer; "" means it matches.
func (b *Bedrock) verify(r *http.Request, body []byte) string {
	auth := r.Header.Get("Authorization")
	const alg = "AWS4-HMAC-SHA256 "
	if !strings.HasPrefix(auth, alg) {
		return "missing AWS4-HMAC-SHA256 Authorization"
	}
	fields := map[string]string{}
	for _, f := range strings.Split(strings.TrimPrefix(auth, alg), ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
		fields[k] = v
	}
	scope := strings.Split(fields["Credential"], "/")
	when, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	switch {
	case len(scope) != 5 || scope[0] != b.AccessKeyID || scope[4] != "aws4_request":
		return "bad credential " + fields["Credential"]
	case err != nil || scope[1] != when.Format("20060102"):
		return "X-Amz-Date missing or not the credential's date"
	case scope[2] != b.Region:
		return "credential should be scoped to a valid region, not '" + scope[2] + "'"
	case scope[3] != "bedrock":
		return "credential should be scoped to correct service: 'bedrock'"
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	if h := r.Header.Get("X-Amz-Content-Sha256"); h != "" && h != hash {
		return "payload hash does not match the body"
	}
	signed := strings.Split(fields["SignedHeaders"], ";")
	for _, need := range []string{"host", "x-amz-date"} {
		if !contains(signed, need) {
			return "SignedHeaders must include " + need
		}
	}
	re, _ := http.NewRequestWithContext(context.Background(), r.Method, "http://"+r.Host+r.URL.RequestURI(), bytes.NewReader(body))
	re.Header = http.Header{}
	re.ContentLength = 0
	for _, h := range signed {
		switch h {
		case "host":
		case "content-length":
			re.ContentLength = r.ContentLength
		default:
			re.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	creds := aws.Credentials{AccessKeyID: b.AccessKeyID, SecretAccessKey: b.SecretKey, SessionToken: r.Header.Get("X-Amz-Security-Token")}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, re, hash, "bedrock", b.Region, when); err != nil {
		return err.Error()
	}
	if re.Header.Get("Authorization") != auth {
		return "The request signature we calculated does not match the signature you provided."
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func writeAWSError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", typ)
	w.WriteHeader(status)
	_, _ = w.Write([]byte(`{"message":` + quote(msg) + `}`))
}

func quote(s string) string { b, _ := sjson.Set(`{}`, "s", s); return gjson.Get(b, "s").Raw }

// frameWriter re-frames the Anthropic fake's SSE answer as Bedrock's event stream, event by event, flushed
// as it goes. A non-200 answer passes through as it is.
type frameWriter struct {
	w      http.ResponseWriter
	buf    []byte
	framed bool
}

func (f *frameWriter) Header() http.Header { return f.w.Header() }

func (f *frameWriter) WriteHeader(code int) {
	if code == http.StatusOK && strings.HasPrefix(f.w.Header().Get("Content-Type"), "text/event-stream") {
		f.framed = true
		f.w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
	}
	f.w.WriteHeader(code)
}

func (f *frameWriter) Write(p []byte) (int, error) {
	if !f.framed {
		return f.w.Write(p)
	}
	f.buf = append(f.buf, p...)
	for {
		i := bytes.Index(f.buf, []byte("\n\n"))
		if i < 0 {
			return len(p), nil
		}
		ev := f.buf[:i]
		f.buf = f.buf[i+2:]
		var name string
		var data []byte
		for _, line := range bytes.Split(ev, []byte("\n")) {
			if v, ok := bytes.CutPrefix(line, []byte("event: ")); ok {
				name = string(v)
			} else if v, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
				data = append(data, v...)
			}
		}
		if data == nil {
			continue
		}
		var frame []byte
		if name == "error" {
			exc := map[string]string{"overloaded_error": "serviceUnavailableException", "rate_limit_error": "throttlingException"}[gjson.GetBytes(data, "error.type").String()]
			if exc == "" {
				exc = "internalServerException"
			}
			frame = eventstream.Encode([]eventstream.Header{{Name: ":message-type", Value: "exception"}, {Name: ":exception-type", Value: exc},
				{Name: ":content-type", Value: "application/json"}}, []byte(`{"message":`+quote(gjson.GetBytes(data, "error.message").String())+`}`))
		} else {
			payload := `{"bytes":"` + base64.StdEncoding.EncodeToString(data) + `","p":"abcdefghij"}`
			frame = eventstream.Encode([]eventstream.Header{{Name: ":event-type", Value: "chunk"}, {Name: ":content-type", Value: "application/json"},
				{Name: ":message-type", Value: "event"}}, []byte(payload))
		}
		if _, err := f.w.Write(frame); err != nil {
			return 0, err
		}
	}
}

// Flush implements http.Flusher.
func (f *frameWriter) Flush() {
	if fl, ok := f.w.(http.Flusher); ok {
		fl.Flush()
	}
}

package bedrock

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/tidwall/gjson"

	"tollgate/model"
	"tollgate/relay/adaptor"
	"tollgate/relay/eventstream"
	"tollgate/service/cloudkey"
)

// Our signer against the AWS SDK for Go's, on the requests Bedrock gets: a model id with ":" (escaped twice
// in the canonical URI), temporary credentials, a stream and a non-stream call, at a fixed time.
func TestSign_MatchesTheAWSSDKSigner(t *testing.T) {
	at := time.Date(2026, 12, 3, 10, 4, 5, 0, time.UTC)
	for _, creds := range []cloudkey.AWS{
		{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"},
		{AccessKeyID: "ASIAEXAMPLE", SecretAccessKey: "secret", SessionToken: "FQoGZXIvYXdzE//session+token=="},
	} {
		for _, stream := range []bool{false, true} {
			a := Adaptor{Now: func() time.Time { return at }}
			ad := a.Configure(model.ChannelConfig{Bedrock: &model.BedrockConfig{Region: "ap-northeast-1",
				ModelIDs: map[string]string{"claude": "apac.anthropic.claude-sonnet-4-20250514-v1:0"}}}, "claude")
			key := creds.AccessKeyID + ":" + creds.SecretAccessKey
			if creds.SessionToken != "" {
				key += ":" + creds.SessionToken
			}
			body := []byte(`{"model":"claude","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"héllo  spaced"}]}`)
			req, err := ad.NewRequest(context.Background(), &adaptor.Call{Endpoint: adaptor.Messages, Stream: stream, Body: body,
				Header: http.Header{"Anthropic-Beta": {"a-1, b-2"}}, Key: key})
			if err != nil {
				t.Fatal(err)
			}
			sent, _ := io.ReadAll(req.Body)
			if gjson.GetBytes(sent, "model").Exists() || gjson.GetBytes(sent, "stream").Exists() ||
				gjson.GetBytes(sent, "anthropic_version").String() != Version || gjson.GetBytes(sent, "anthropic_beta").Raw != `["a-1","b-2"]` {
				t.Fatalf("body sent: %s", sent)
			}
			if !strings.Contains(req.URL.EscapedPath(), "v1%3A0") || req.URL.Host != "bedrock-runtime.ap-northeast-1.amazonaws.com" {
				t.Fatalf("url %s", req.URL)
			}
			ours := req.Header.Get("Authorization")
			// The official signer over the same request, with the same signed headers and time.
			check := req.Clone(context.Background())
			check.Header = http.Header{}
			for _, h := range []string{"Content-Type", "X-Amz-Content-Sha256", "X-Amz-Security-Token"} {
				if v := req.Header.Get(h); v != "" {
					check.Header.Set(h, v)
				}
			}
			sum := sha256.Sum256(sent)
			if req.Header.Get("X-Amz-Content-Sha256") != hex.EncodeToString(sum[:]) {
				t.Fatal("payload hash header")
			}
			err = v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: creds.AccessKeyID,
				SecretAccessKey: creds.SecretAccessKey, SessionToken: creds.SessionToken}, check, hex.EncodeToString(sum[:]), "bedrock", "ap-northeast-1", at)
			if err != nil {
				t.Fatal(err)
			}
			if theirs := check.Header.Get("Authorization"); theirs != ours {
				t.Fatalf("signature differs:\n ours   %s\n theirs %s", ours, theirs)
			}
		}
	}
}

func TestNewRequest_RefusesAMalformedKeyAsACredentialError(t *testing.T) {
	ad := Adaptor{}.Configure(model.ChannelConfig{Bedrock: &model.BedrockConfig{Region: "us-east-1"}}, "m")
	_, err := ad.NewRequest(context.Background(), &adaptor.Call{Endpoint: adaptor.Messages, Body: []byte(`{}`), Header: http.Header{}, Key: "no-secret"})
	var ce *adaptor.CredentialError
	if !errorsAs(err, &ce) {
		t.Fatalf("err = %v, want a CredentialError", err)
	}
}

func chunk(event string) []byte {
	return eventstream.Encode([]eventstream.Header{{Name: ":event-type", Value: "chunk"}, {Name: ":message-type", Value: "event"}},
		[]byte(`{"bytes":"`+base64.StdEncoding.EncodeToString([]byte(event))+`"}`))
}

func TestSSEReader_ChunksBecomeEventsAndExceptionsErrorEvents(t *testing.T) {
	var in []byte
	in = append(in, chunk(`{"type":"message_start","message":{"usage":{"input_tokens":3}}}`)...)
	in = append(in, chunk("{\n  \"type\": \"content_block_delta\",\n  \"delta\": {\"type\":\"text_delta\",\"text\":\"hi\"}\n}")...)
	in = append(in, eventstream.Encode([]eventstream.Header{{Name: ":event-type", Value: "metadata"}, {Name: ":message-type", Value: "event"}}, []byte(`{}`))...)
	in = append(in, eventstream.Encode([]eventstream.Header{{Name: ":message-type", Value: "exception"}, {Name: ":exception-type", Value: "throttlingException"}},
		[]byte(`{"message":"Too many tokens"}`))...)
	in = append(in, chunk(`{"type":"message_stop"}`)...) // never read: the exception ended the stream
	out, err := io.ReadAll(newSSEReader(io.NopCloser(bytes.NewReader(in))))
	if err != nil {
		t.Fatal(err)
	}
	want := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n" +
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"throttlingException: Too many tokens\"}}\n\n"
	if string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}

func TestSSEReader_ABrokenFrameIsAReadError(t *testing.T) {
	in := chunk(`{"type":"message_start"}`)
	bad := chunk(`{"type":"ping"}`)
	bad[len(bad)-1] ^= 0xff
	r := newSSEReader(io.NopCloser(bytes.NewReader(append(in, bad...))))
	out, err := io.ReadAll(r)
	if !errorsIs(err, eventstream.ErrFrame) || !strings.HasPrefix(string(out), "event: message_start\n") {
		t.Fatalf("out %q err %v", out, err)
	}
	notB64 := eventstream.Encode([]eventstream.Header{{Name: ":event-type", Value: "chunk"}, {Name: ":message-type", Value: "event"}}, []byte(`{"bytes":"%%%"}`))
	if _, err := io.ReadAll(newSSEReader(io.NopCloser(bytes.NewReader(notB64)))); err == nil {
		t.Fatal("a chunk that is not base64 JSON must fail the stream")
	}
}

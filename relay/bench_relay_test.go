package relay_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// BenchmarkRelay_PlainCall is one non-stream chat completion at a time through the whole gateway (real HTTP
// into the node, the node into a fake upstream, all in this process): ns/op and allocs/op of the hot path
// for A/B work on it (go test -run X -bench PlainCall -benchmem -cpuprofile cpu.out ./relay/). make bench is
// the measure against the plain proxy; this is the magnifier.
func BenchmarkRelay_PlainCall(b *testing.B) { benchCalls(b, false) }

// BenchmarkRelay_StreamCall is the same with a streamed answer (role chunk, content chunks, finish, usage),
// read to its end.
func BenchmarkRelay_StreamCall(b *testing.B) { benchCalls(b, true) }

func benchCalls(b *testing.B, stream bool) {
	s := newStandard(b, 1<<50)
	body, _ := json.Marshal(chatBody("gpt-4o-mini", stream))
	url := s.node.URL + "/v1/chat/completions"
	call := func() {
		req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+s.key.Key)
		res, err := httpClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			b.Fatalf("status %d", res.StatusCode)
		}
	}
	for range 200 {
		call()
	}
	b.ResetTimer()
	for b.Loop() {
		call()
	}
}

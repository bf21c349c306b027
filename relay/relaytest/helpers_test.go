package relaytest_test

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// sseEvent is one parsed server-sent event.
type sseEvent struct {
	name string
	data string
	at   time.Time
}

type result struct {
	status int
	header http.Header
	body   []byte
	events []sseEvent
	err    error // error while reading the body (reset, timeout)
}

// post sends a JSON body with an optional API key (Bearer) and extra headers, and reads the whole answer.
func post(t *testing.T, c *http.Client, url, body string, hdr ...string) result {
	t.Helper()
	method := http.MethodPost
	if body == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return result{err: err}
	}
	defer resp.Body.Close()
	r := result{status: resp.StatusCode, header: resp.Header}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		r.events, r.err = readSSE(resp.Body)
		return r
	}
	r.body, r.err = io.ReadAll(resp.Body)
	return r
}

func readSSE(rd io.Reader) ([]sseEvent, error) {
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data != "" || cur.name != "" {
				cur.at = time.Now()
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		}
	}
	return out, sc.Err()
}

func names(evs []sseEvent) string {
	var b bytes.Buffer
	for i, e := range evs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(e.name)
	}
	return b.String()
}

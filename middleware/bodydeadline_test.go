package middleware

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
)

// A real server (deadlines are on the connection): one handler reads the body, one streams an answer for
// longer than both limits after reading it.
func bodyServer(t *testing.T, idle, total time.Duration) string {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(BodyDeadline(idle, total))
	r.POST("/read", func(c *gin.Context) {
		b, err := io.ReadAll(c.Request.Body)
		if err != nil {
			c.String(http.StatusRequestTimeout, "body: %v", err)
			return
		}
		c.String(http.StatusOK, "read %d", len(b))
	})
	r.POST("/stream", func(c *gin.Context) {
		b, _ := io.ReadAll(c.Request.Body)
		c.Status(http.StatusOK)
		for i := range 4 {
			fmt.Fprintf(c.Writer, "chunk %d of %d\n", i, len(b))
			c.Writer.Flush()
			select {
			case <-c.Request.Context().Done():
				return
			case <-time.After(3 * total / 4):
			}
		}
	})
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// dribble sends the headers and then one body byte every gap, and reports what the server answered (or
// that it kept waiting).
func dribble(t *testing.T, addr string, gap time.Duration, wait time.Duration) string {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{")
	got := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(conn).ReadString('\n')
		got <- line
	}()
	stop := time.After(wait)
	for {
		select {
		case l := <-got:
			return l
		case <-stop:
			return "still waiting"
		case <-time.After(gap):
			_, _ = conn.Write([]byte(" "))
		}
	}
}

func TestBodyDeadline_SlowBodiesAreCut(t *testing.T) {
	addr := bodyServer(t, 200*time.Millisecond, time.Second)
	// Silent after the first byte: cut after the idle limit.
	if got := dribble(t, addr, time.Hour, 3*time.Second); !strings.Contains(got, "408") {
		t.Fatalf("silent body: %q, want a 408 after the idle limit", got)
	}
	// A byte every 50 ms never trips the idle limit, but the total one.
	if got := dribble(t, addr, 50*time.Millisecond, 3*time.Second); !strings.Contains(got, "408") {
		t.Fatalf("dribbled body: %q, want a 408 after the total limit", got)
	}
}

func TestBodyDeadline_DoesNotCutAnAnswerStreamedAfterTheBody(t *testing.T) {
	addr := bodyServer(t, 100*time.Millisecond, 400*time.Millisecond)
	res, err := http.Post("http://"+addr+"/stream", "application/json", strings.NewReader(`{"model":"m"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body) // ~1.2 s of streaming, three times the total body limit
	if err != nil || strings.Count(string(b), "chunk") != 4 {
		t.Fatalf("stream: %q %v", b, err)
	}
	// Quick bodies are untouched.
	res2, err := http.Post("http://"+addr+"/read", "application/json", strings.NewReader(strings.Repeat("x", 1<<20)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(res2.Body)
	res2.Body.Close()
	if res2.StatusCode != http.StatusOK || string(b) != fmt.Sprintf("read %d", 1<<20) {
		t.Fatalf("quick body: %d %s", res2.StatusCode, b)
	}
}

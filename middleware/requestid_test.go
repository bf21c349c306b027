package middleware

import (
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
)

func TestNewRequestID_UniqueAndSortableByTime(t *testing.T) {
	var ids []string
	seen := map[string]bool{}
	for i := range 2000 {
		if i%500 == 0 {
			time.Sleep(2 * time.Millisecond) // cross a few milliseconds
		}
		id := NewRequestID()
		if len(id) != 32 || strings.Trim(id, "0123456789abcdef") != "" || seen[id] {
			t.Fatalf("id %q: want 32 unique lowercase hex digits", id)
		}
		seen[id] = true
		ids = append(ids, id)
	}
	// Ids from different milliseconds sort as text in the order they were made.
	for i := 1; i < len(ids); i++ {
		if ids[i][:12] < ids[i-1][:12] {
			t.Fatalf("timestamp prefix went back: %s after %s", ids[i], ids[i-1])
		}
	}
	if !sort.StringsAreSorted([]string{ids[0], ids[600], ids[1200], ids[1999]}) {
		t.Fatal("ids a few milliseconds apart do not sort by time")
	}
}

func TestRequestIDs_NeverTakesTheCallersID(t *testing.T) {
	gin.SetMode(gin.TestMode)
	e := gin.New()
	e.Use(RequestIDs())
	var gotID, gotClient string
	e.GET("/", func(c *gin.Context) { gotID, gotClient = RequestID(c), ClientRequestID(c) })
	long := strings.Repeat("x", 100)
	for _, tc := range []struct{ sent, client string }{
		{"my-request-0001", "my-request-0001"},
		{"", ""},
		{`a "quoted" id\with spaces`, "aquotedidwithspaces"},
		{long, long[:64]},
		{"ünïcode-id", "ncode-id"},
	} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		if tc.sent != "" {
			req.Header.Set("X-Request-Id", tc.sent)
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if gotID == tc.sent || len(gotID) != 32 || rec.Header().Get(RequestIDHeader) != gotID {
			t.Fatalf("sent %q: request id %q, header %q", tc.sent, gotID, rec.Header().Get(RequestIDHeader))
		}
		if gotClient != tc.client || rec.Header().Get("X-Request-Id") != tc.client {
			t.Fatalf("sent %q: client id %q echoed %q, want %q", tc.sent, gotClient, rec.Header().Get("X-Request-Id"), tc.client)
		}
	}
}

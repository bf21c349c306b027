package web

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"testing/fstest"
)

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	_, _ = w.Write(b)
	_ = w.Close()
	return out.Bytes()
}

// testBuild is a dist as `npm run build` leaves it: an asset with both variants, one with gzip only, one
// with none (an image), and index.html with its variants.
func testBuild(t *testing.T) *Handler {
	js := bytes.Repeat([]byte("console.log('tollgate');"), 200)
	css := bytes.Repeat([]byte("body{margin:0}"), 100)
	idx := []byte("<!doctype html><title>Tollgate</title>" + string(bytes.Repeat([]byte(" "), 500)))
	return newHandler(fstest.MapFS{
		"index.html":                 {Data: idx},
		"index.html.br":              {Data: []byte("BR-INDEX")},
		"index.html.gz":              {Data: gz(t, idx)},
		"assets/index-abc123.js":     {Data: js},
		"assets/index-abc123.js.br":  {Data: []byte("BR-JS-BYTES")},
		"assets/index-abc123.js.gz":  {Data: gz(t, js)},
		"assets/style-def456.css":    {Data: css},
		"assets/style-def456.css.gz": {Data: gz(t, css)},
		"assets/logo-0a1b2c.png":     {Data: []byte("\x89PNG....")},
		"favicon.svg":                {Data: []byte("<svg/>")},
	})
}

func get(h http.Handler, method, target, accept string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	if accept != "" {
		r.Header.Set("Accept-Encoding", accept)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestHandler_ServesThePrecompressedVariantTheBrowserPrefers(t *testing.T) {
	h := testBuild(t)
	for _, c := range []struct {
		name, target, accept, enc, ctype string
		method                           string
	}{
		{"brotli first", "/assets/index-abc123.js", "gzip, deflate, br, zstd", "br", "text/javascript; charset=utf-8", "GET"},
		{"HEAD too (curl -sI)", "/assets/index-abc123.js", "br", "br", "text/javascript; charset=utf-8", "HEAD"},
		{"gzip when br is refused", "/assets/index-abc123.js", "br;q=0, gzip", "gzip", "text/javascript; charset=utf-8", "GET"},
		{"gzip only", "/assets/index-abc123.js", "gzip", "gzip", "text/javascript; charset=utf-8", "GET"},
		{"star takes the best", "/assets/index-abc123.js", "*", "br", "text/javascript; charset=utf-8", "GET"},
		{"identity without the header", "/assets/index-abc123.js", "", "", "text/javascript; charset=utf-8", "GET"},
		{"identity when all refused", "/assets/index-abc123.js", "br;q=0,gzip;q=0.0", "", "text/javascript; charset=utf-8", "GET"},
		{"css has gzip only", "/assets/style-def456.css", "br, gzip", "gzip", "text/css; charset=utf-8", "GET"},
		{"png has none", "/assets/logo-0a1b2c.png", "br, gzip", "", "image/png", "GET"},
		{"index.html compressed too", "/", "br", "br", "text/html; charset=utf-8", "GET"},
		{"deep link gets index.html", "/console/logs", "gzip", "gzip", "text/html; charset=utf-8", "GET"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := get(h, c.method, c.target, c.accept)
			if w.Code != http.StatusOK {
				t.Fatalf("status %d", w.Code)
			}
			if got := w.Header().Get("Content-Encoding"); got != c.enc {
				t.Fatalf("Content-Encoding = %q, want %q", got, c.enc)
			}
			if got := w.Header().Get("Content-Type"); got != c.ctype {
				t.Fatalf("Content-Type = %q, want %q", got, c.ctype)
			}
			cl, _ := strconv.Atoi(w.Header().Get("Content-Length"))
			body := w.Body.Bytes()
			if c.method == "HEAD" {
				if len(body) != 0 || cl != len("BR-JS-BYTES") {
					t.Fatalf("HEAD: body %d bytes, Content-Length %d", len(body), cl)
				}
			} else if cl != len(body) || cl == 0 {
				t.Fatalf("Content-Length %d for a %d-byte body", cl, len(body))
			}
			vary := w.Header().Get("Vary")
			if c.target != "/assets/logo-0a1b2c.png" && vary != "Accept-Encoding" {
				t.Fatalf("Vary = %q", vary)
			}
			if c.target == "/assets/logo-0a1b2c.png" && vary != "" {
				t.Fatalf("Vary on a file with one encoding: %q", vary)
			}
			switch c.enc {
			case "br":
				if c.method == "GET" && !bytes.HasPrefix(body, []byte("BR-")) {
					t.Fatalf("br body = %q", body)
				}
			case "gzip":
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func TestHandler_CachesHashedAssetsForeverAndIndexNever(t *testing.T) {
	h := testBuild(t)
	if cc := get(h, "GET", "/assets/index-abc123.js", "br").Header().Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
		t.Fatalf("asset Cache-Control = %q", cc)
	}
	for _, p := range []string{"/", "/index.html", "/console/dashboard", "/assets/missing-999.js"} {
		w := get(h, "GET", p, "br")
		if cc := w.Header().Get("Cache-Control"); cc != "no-cache" || w.Header().Get("Content-Type") != "text/html; charset=utf-8" {
			t.Fatalf("%s: Cache-Control %q, Content-Type %q", p, cc, w.Header().Get("Content-Type"))
		}
	}
	if cc := get(h, "GET", "/favicon.svg", "").Header().Get("Cache-Control"); cc != "public, max-age=3600" {
		t.Fatalf("favicon Cache-Control = %q", cc)
	}
	// A variant is not a page of its own: asking for it by name gets the SPA.
	if w := get(h, "GET", "/assets/index-abc123.js.br", ""); w.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("variant by name: %q", w.Header().Get("Content-Type"))
	}
}

// Behind gin's NoRoute the writer already holds a 404: the handler must still answer 200.
func TestHandler_AnswersOKBehindANotFoundDefault(t *testing.T) {
	h := testBuild(t)
	w := httptest.NewRecorder()
	w.Code = http.StatusNotFound
	h.ServeHTTP(w, httptest.NewRequest("GET", "/console/x", nil))
	if w.Code != http.StatusOK {
		t.Fatalf("status %d", w.Code)
	}
}

// Package web embeds the built console (web/dist) and serves it: each file in the encoding the browser
// prefers among those the build wrote next to it (brotli .br, gzip .gz, else the file itself), hashed assets
// cached for a year, index.html never cached, deep links answered with index.html.
package web

import (
	"embed"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
)

//go:embed all:dist placeholder.html
var files embed.FS

// encodings are the precompressed variants web/scripts/compress.mjs writes, best first: the order the server
// prefers them in when the browser accepts several.
var encodings = [...]struct{ name, ext string }{{"br", ".br"}, {"gzip", ".gz"}}

// asset is one servable file of dist: which precompressed variants exist beside it. Its Content-Type is looked
// up when it is served, not here: the first mime lookup loads the system's type tables (~0.5 MB of heap), which
// a gateway nobody opens the console of never needs.
type asset struct {
	variants [len(encodings)]bool
}

// Handler serves the SPA. When dist holds no build yet it serves placeholder.html, so `go build` works before
// any npm step.
type Handler struct {
	root   fs.FS
	assets map[string]*asset // by path inside dist, variants themselves not listed
	index  string            // "index.html", or "" when serving the placeholder
	page   []byte            // the placeholder
}

// New builds the handler over the embedded files.
func New() *Handler {
	dist, _ := fs.Sub(files, "dist")
	return newHandler(dist)
}

// newHandler indexes root once: which files exist and which have compressed variants.
func newHandler(root fs.FS) *Handler {
	h := &Handler{root: root, assets: map[string]*asset{}}
	all := map[string]bool{}
	_ = fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			all[p] = true
		}
		return nil
	})
	for p := range all {
		if isVariant(p, all) {
			continue
		}
		a := &asset{}
		for i, e := range encodings {
			a.variants[i] = all[p+e.ext]
		}
		h.assets[p] = a
	}
	if h.assets["index.html"] != nil {
		h.index = "index.html"
	} else {
		h.page, _ = files.ReadFile("placeholder.html")
	}
	return h
}

// contentType is the Content-Type of dist file p (by its extension).
func contentType(p string) string {
	if t := mime.TypeByExtension(path.Ext(p)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// isVariant reports whether p is a compressed copy of another file of the build.
func isVariant(p string, all map[string]bool) bool {
	for _, e := range encodings {
		if strings.HasSuffix(p, e.ext) && all[strings.TrimSuffix(p, e.ext)] {
			return true
		}
	}
	return false
}

// ServeHTTP serves a file from dist or, for any other path, index.html.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if a := h.assets[p]; a != nil && p != "index.html" {
		if strings.HasPrefix(p, "assets/") { // content-hashed names: a new build has new names
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			w.Header().Set("Cache-Control", "public, max-age=3600")
		}
		h.serve(w, r, p, a)
		return
	}
	w.Header().Set("Cache-Control", "no-cache")
	if h.index == "" {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(h.page)
		return
	}
	h.serve(w, r, h.index, h.assets[h.index])
}

// serve writes file p (with its metadata a) in the best encoding the request accepts. Behind gin's NoRoute the
// writer already holds a 404 that a bare Write would send, so the status is always written explicitly.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, p string, a *asset) {
	hdr := w.Header()
	name, enc := p, ""
	offered := false
	for i, e := range encodings {
		if !a.variants[i] {
			continue
		}
		offered = true
		if enc == "" && accepts(r.Header.Get("Accept-Encoding"), e.name) {
			name, enc = p+e.ext, e.name
		}
	}
	if offered {
		hdr.Add("Vary", "Accept-Encoding") // caches must keep one copy per encoding
	}
	f, err := h.root.Open(name)
	if err != nil {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	hdr.Set("Content-Type", contentType(p))
	if enc != "" {
		hdr.Set("Content-Encoding", enc)
	}
	// Set by hand: http.ServeContent leaves Content-Length out whenever Content-Encoding is set.
	hdr.Set("Content-Length", strconv.FormatInt(st.Size(), 10))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = io.Copy(w, f)
	}
}

// accepts reports whether an Accept-Encoding header admits coding (RFC 9110 §12.5.3): listed, or covered by
// "*", with a q-value above 0.
func accepts(header, coding string) bool {
	star := false
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		name = strings.ToLower(strings.TrimSpace(name))
		if name != coding && name != "*" {
			continue
		}
		ok := qAboveZero(params)
		if name == coding {
			return ok
		}
		star = ok
	}
	return star
}

// qAboveZero reads a q parameter ("q=0", "q=0.000" refuse; absent or malformed accept).
func qAboveZero(params string) bool {
	for _, p := range strings.Split(params, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "q") {
			continue
		}
		q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		return err != nil || q > 0
	}
	return true
}

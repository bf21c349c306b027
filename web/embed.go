// Package web embeds the built console (web/dist) and serves it: hashed assets cached for a year,
// index.html never cached, deep links answered with index.html.
package web

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed all:dist placeholder.html
var files embed.FS

// Handler serves the SPA. When dist holds no build yet it serves placeholder.html, so `go build` works before
// any npm step.
type Handler struct {
	root  fs.FS
	index []byte
}

// New builds the handler over the embedded files.
func New() *Handler {
	dist, _ := fs.Sub(files, "dist")
	index, err := fs.ReadFile(dist, "index.html")
	if err != nil {
		index, _ = files.ReadFile("placeholder.html")
	}
	return &Handler{root: dist, index: index}
}

// ServeHTTP serves a file from dist or, for any other path, index.html.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if p != "" && p != "index.html" {
		if f, err := h.root.Open(p); err == nil {
			st, err := f.Stat()
			f.Close()
			if err == nil && !st.IsDir() {
				if strings.HasPrefix(p, "assets/") {
					w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
				} else {
					w.Header().Set("Cache-Control", "public, max-age=3600")
				}
				http.ServeFileFS(w, r, h.root, p)
				return
			}
		}
	}
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// Explicit 200: behind gin's NoRoute the writer already holds a 404 that a bare Write would send.
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(h.index)
}

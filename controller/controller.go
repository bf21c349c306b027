// Package controller holds the console REST handlers: bind and validate, call one service method, render.
package controller

import (
	"strconv"

	"github.com/gin-gonic/gin"

	"tollgate/middleware"
	"tollgate/model"
	"tollgate/service/apperr"
)

// Page is the standard list answer.
type Page[T any] struct {
	Items []T   `json:"items"`
	Total int64 `json:"total"`
}

func pageOf(c *gin.Context) model.Page {
	p, _ := strconv.Atoi(c.Query("page"))
	sz, _ := strconv.Atoi(c.Query("size"))
	if p < 1 {
		p = 1
	}
	if p > 100000 {
		p = 100000
	}
	if sz < 1 {
		sz = 20
	}
	if sz > 100 {
		sz = 100
	}
	return model.Page{Page: p, Size: sz}
}

// idParam parses :id; a bad id renders a 404 (the row cannot exist) and returns false.
func idParam(c *gin.Context, notFoundCode string) (int64, bool) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		middleware.Fail(c, apperr.New(404, notFoundCode))
		return 0, false
	}
	return id, true
}

// pageSize is a keyset page's default size; maxPageSize its largest.
const (
	pageSize    = 50
	maxPageSize = 200
)

// keysetPage reads a keyset page's `cursor` (an id, 0 = the first page) and `limit` (1 … 200, default 50);
// anything else renders a 400 naming the parameter.
func keysetPage(c *gin.Context) (cursor int64, limit int, ok bool) {
	if cursor, ok = queryInt64(c, "cursor"); !ok {
		return 0, 0, false
	}
	if cursor < 0 {
		middleware.Fail(c, apperr.Field("cursor", "not negative"))
		return 0, 0, false
	}
	n, ok := queryInt64(c, "limit")
	if !ok {
		return 0, 0, false
	}
	if n == 0 {
		n = pageSize
	}
	if n < 1 || n > maxPageSize {
		middleware.Fail(c, apperr.Field("limit", "between 1 and 200"))
		return 0, 0, false
	}
	return cursor, int(n), true
}

// queryInt64 parses an optional integer query parameter; a malformed value renders a 400.
func queryInt64(c *gin.Context, name string) (int64, bool) {
	v := c.Query(name)
	if v == "" {
		return 0, true
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		middleware.Fail(c, apperr.Field(name, "not an integer"))
		return 0, false
	}
	return n, true
}

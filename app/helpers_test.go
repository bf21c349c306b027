package app_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode"

	"tollgate/app/apptest"
	"tollgate/i18n"
	"tollgate/model"
)

// apiError is the console error body.
type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Field   string `json:"field"`
	} `json:"error"`
}

// wantError checks that r is a console error with status and code, in the {"error":{"code","message"}} shape,
// and returns it.
func wantError(t testing.TB, r *apptest.Resp, status int, code string) apiError {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %d, want %d (body %s)", r.Status, status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("error Content-Type = %q, want JSON (body %s)", ct, r.Body)
	}
	var e apiError
	r.JSON(t, &e)
	if e.Error.Code != code {
		t.Fatalf("error code = %q, want %q (body %s)", e.Error.Code, code, r.Body)
	}
	if e.Error.Message == "" || e.Error.Message == code {
		t.Fatalf("error %q has no localized message (body %s)", code, r.Body)
	}
	return e
}

// wantField checks a 400 validation_failed naming field.
func wantField(t testing.TB, r *apptest.Resp, field string) {
	t.Helper()
	e := wantError(t, r, http.StatusBadRequest, "validation_failed")
	if e.Error.Field != field {
		t.Fatalf("error field = %q, want %q (body %s)", e.Error.Field, field, r.Body)
	}
	if !strings.Contains(e.Error.Message, field) {
		t.Fatalf("message %q does not name the field %q", e.Error.Message, field)
	}
}

// wantStatus checks the status only.
func wantStatus(t testing.TB, r *apptest.Resp, status int) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %d, want %d (body %s)", r.Status, status, r.Body)
	}
}

// hasHan reports whether s contains Chinese characters.
func hasHan(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

// wantChinese checks that the error message is the zh-CN catalog text of its code.
func wantChinese(t testing.TB, e apiError, args ...any) {
	t.Helper()
	want := i18n.T(i18n.ZhCN, e.Error.Code, args...)
	if !hasHan(e.Error.Message) {
		t.Fatalf("message %q is not Chinese", e.Error.Message)
	}
	if len(args) > 0 && e.Error.Message != want {
		t.Fatalf("message = %q, want %q", e.Error.Message, want)
	}
}

// zh returns a copy of c that asks for Chinese.
func zh(c *apptest.Client) *apptest.Client {
	cp := *c
	cp.Lang = "zh-CN,zh;q=0.9,en;q=0.5"
	return &cp
}

// as returns a copy of c that sends token instead.
func as(c *apptest.Client, token string) *apptest.Client {
	cp := *c
	cp.Token = token
	return &cp
}

// count returns the number of rows of m's table matching the optional where clause.
func count(t testing.TB, n *apptest.Node, m any, where ...any) int64 {
	t.Helper()
	q := n.App.Store.DB.WithContext(context.Background()).Model(m)
	if len(where) > 0 {
		q = q.Where(where[0], where[1:]...)
	}
	var c int64
	if err := q.Count(&c).Error; err != nil {
		t.Fatalf("count: %v", err)
	}
	return c
}

// userID looks a user's id up by name.
func userID(t testing.TB, n *apptest.Node, name string) int64 {
	t.Helper()
	u, err := n.App.Store.UserByUsername(context.Background(), name)
	if err != nil {
		t.Fatalf("user %s: %v", name, err)
	}
	return u.ID
}

// tokenView is the API's Token.
type tokenView struct {
	ID          int64    `json:"id"`
	UserID      int64    `json:"user_id"`
	Name        string   `json:"name"`
	Key         string   `json:"key"`
	Status      string   `json:"status"`
	RemainQuota int64    `json:"remain_quota"`
	Unlimited   bool     `json:"unlimited"`
	Models      []string `json:"models"`
	AllowedIPs  []string `json:"allowed_ips"`
	Group       string   `json:"group"`
	RPM         int      `json:"rpm"`
	Concurrency int      `json:"concurrency"`
}

// userView is the API's User.
type userView struct {
	ID           int64  `json:"id"`
	Username     string `json:"username"`
	Email        string `json:"email"`
	Role         string `json:"role"`
	Group        string `json:"group"`
	Status       string `json:"status"`
	Quota        int64  `json:"quota"`
	UsedQuota    int64  `json:"used_quota"`
	RequestCount int64  `json:"request_count"`
}

// createKey creates a key through the API and returns it.
func createKey(t testing.TB, c *apptest.Client, body map[string]any) tokenView {
	t.Helper()
	r := c.Do("POST", "/api/tokens", body)
	wantStatus(t, r, http.StatusCreated)
	var v tokenView
	r.JSON(t, &v)
	return v
}

func path(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// noTokens asserts the token table is empty.
func noTokens(t testing.TB, n *apptest.Node) {
	t.Helper()
	if c := count(t, n, &model.Token{}); c != 0 {
		t.Fatalf("%d token rows exist, want none", c)
	}
}

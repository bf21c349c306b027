package app_test

// Redemption codes: every wrong input gets its own clear answer and moves no money, and guesses are limited
// per user and per client network.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"tollgate/app/apptest"
	"tollgate/model"
)

func TestRedeem_BadInput(t *testing.T) {
	t.Parallel()
	n := apptest.New(t)
	root := n.Root(t)
	const quota = 40_000
	b := newBatch(t, root, 12, quota, nil)
	codes := b.Codes
	u := n.SignUp(t, "redeemer", "Wallet-Passw0rd-1")
	id := userID(t, n, "redeemer")
	other := n.SignUp(t, "bystander", "Wallet-Passw0rd-2")
	// The wrong codes below are 9 guesses by "redeemer" from one address: under both guess limits (10 per
	// user, 30 per address), which TestRedeem_GuessesAreLimitedPerUserAndPerNetwork covers.
	var credited int64
	ok := func(r *apptest.Resp) {
		t.Helper()
		credited += quota
		if _, bal := redeemed(t, r, quota); bal != credited {
			t.Fatalf("balance after = %d, want %d", bal, credited)
		}
	}

	t.Run("whitespace and line breaks around and inside the code", func(t *testing.T) {
		c := codes[0]
		ok(redeem(t, u, "", "  \r\n\t"+c[:3]+" "+c[3:12]+"\n"+c[12:25]+" \r\n "+c[25:]+"\n\n "))
	})
	t.Run("a code pasted with no-break and zero-width spaces", func(t *testing.T) {
		ok(redeem(t, u, "", "\u00a0"+codes[1][:20]+"\u200b"+codes[1][20:]))
	})
	t.Run("the prefix in another case", func(t *testing.T) {
		ok(redeem(t, u, "", "tg-"+codes[2][3:]))
		ok(redeem(t, u, "", "Tg-"+codes[3][3:]))
	})
	t.Run("the body alone", func(t *testing.T) {
		ok(redeem(t, u, "", codes[4][3:]))
	})
	t.Run("the body in another case is another, unknown code", func(t *testing.T) {
		c := codes[5]
		e := wantError(t, redeem(t, u, "", "TG-"+strings.ToLower(c[3:])), http.StatusNotFound, "code_invalid")
		wantChinese(t, wantError(t, redeem(t, zh(u), "", "TG-"+strings.ToUpper(c[3:])), http.StatusNotFound, "code_invalid"))
		if !strings.Contains(e.Error.Message, "case") {
			t.Fatalf("message %q does not say that case matters", e.Error.Message)
		}
		ok(redeem(t, u, "", c)) // the real code still works
	})
	t.Run("unknown and malformed codes", func(t *testing.T) {
		for _, c := range []string{"TG-" + strings.Repeat("A", 32), codes[6][:34], codes[6] + "Z", "TG-" + codes[6][3:34] + "_", "hello"} {
			wantError(t, redeem(t, u, "", c), http.StatusNotFound, "code_invalid")
		}
	})
	t.Run("a used code", func(t *testing.T) {
		wantError(t, redeem(t, u, "", codes[0]), http.StatusConflict, "code_used")
		wantChinese(t, wantError(t, redeem(t, zh(other), "", codes[0]), http.StatusConflict, "code_used"))
	})
	t.Run("a disabled code, and enabled again", func(t *testing.T) {
		item := findCode(t, root, b.Batch, codes[7])
		r := root.Do("PATCH", fmt.Sprintf("/api/admin/redemptions/%d", item.ID), map[string]any{"status": "disabled"})
		wantStatus(t, r, http.StatusOK)
		if r.M(t)["status"] != "disabled" {
			t.Fatalf("PATCH answer %s", r.Body)
		}
		wantError(t, redeem(t, u, "", codes[7]), http.StatusNotFound, "code_invalid")
		wantStatus(t, root.Do("PATCH", fmt.Sprintf("/api/admin/redemptions/%d", item.ID), map[string]any{"status": "disabled"}), http.StatusOK) // again: no change
		wantStatus(t, root.Do("PATCH", fmt.Sprintf("/api/admin/redemptions/%d", item.ID), map[string]any{"status": "unused"}), http.StatusOK)
		ok(redeem(t, u, "", codes[7]))
		wantError(t, root.Do("PATCH", fmt.Sprintf("/api/admin/redemptions/%d", item.ID), map[string]any{"status": "disabled"}), http.StatusConflict, "redemption_used")
		wantError(t, root.Do("PATCH", fmt.Sprintf("/api/admin/redemptions/%d", item.ID), map[string]any{"status": "unused"}), http.StatusConflict, "redemption_used")
		wantField(t, root.Do("PATCH", fmt.Sprintf("/api/admin/redemptions/%d", item.ID), map[string]any{"status": "used"}), "status")
		wantField(t, root.Do("PATCH", fmt.Sprintf("/api/admin/redemptions/%d", item.ID), map[string]any{"status": "expired"}), "status")
		wantError(t, root.Do("PATCH", "/api/admin/redemptions/999999", map[string]any{"status": "disabled"}), http.StatusNotFound, "redemption_not_found")
		wantError(t, root.Do("PATCH", "/api/admin/redemptions/abc", map[string]any{"status": "disabled"}), http.StatusNotFound, "redemption_not_found")
	})
	t.Run("deleting: unused and disabled codes go, used codes stay", func(t *testing.T) {
		used := findCode(t, root, b.Batch, codes[0])
		wantError(t, root.Do("DELETE", fmt.Sprintf("/api/admin/redemptions/%d", used.ID), nil), http.StatusConflict, "redemption_used")
		unused := findCode(t, root, b.Batch, codes[8])
		wantStatus(t, root.Do("DELETE", fmt.Sprintf("/api/admin/redemptions/%d", unused.ID), nil), http.StatusNoContent)
		wantError(t, redeem(t, u, "", codes[8]), http.StatusNotFound, "code_invalid")
		wantError(t, root.Do("DELETE", fmt.Sprintf("/api/admin/redemptions/%d", unused.ID), nil), http.StatusNotFound, "redemption_not_found")
		disabled := findCode(t, root, b.Batch, codes[9])
		wantStatus(t, root.Do("PATCH", fmt.Sprintf("/api/admin/redemptions/%d", disabled.ID), map[string]any{"status": "disabled"}), http.StatusOK)
		wantStatus(t, root.Do("DELETE", fmt.Sprintf("/api/admin/redemptions/%d", disabled.ID), nil), http.StatusNoContent)
		if got := count(t, n, &model.Redemption{}, "batch_id = ?", b.Batch); got != 10 {
			t.Fatalf("%d codes left in the batch, want 10", got)
		}
	})
	t.Run("an expired code", func(t *testing.T) {
		exp := time.Now().Add(3 * time.Second) // long enough to redeem one code before, on a loaded machine too
		eb := newBatch(t, root, 2, quota, &exp)
		ok(redeem(t, u, "", eb.Codes[0])) // before its expiry it works
		time.Sleep(time.Until(exp) + 100*time.Millisecond)
		wantChinese(t, wantError(t, redeem(t, zh(u), "", eb.Codes[1]), http.StatusGone, "code_expired"))
		wantError(t, redeem(t, u, "", eb.Codes[0]), http.StatusConflict, "code_used") // used stays used
		var p struct {
			Items []codeView
			Total int64
		}
		root.Do("GET", "/api/admin/redemptions?status=expired&batch="+eb.Batch, nil).JSON(t, &p)
		if p.Total != 1 || p.Items[0].Status != "expired" {
			t.Fatalf("expired filter: %+v", p)
		}
		root.Do("GET", "/api/admin/redemptions?status=unused&batch="+eb.Batch, nil).JSON(t, &p)
		if p.Total != 0 {
			t.Fatalf("unused filter lists an expired code: %+v", p)
		}
	})
	t.Run("empty, oversized and non-string codes", func(t *testing.T) {
		for _, body := range []any{
			map[string]any{"code": ""}, map[string]any{"code": " \r\n\t "}, map[string]any{"code": nil}, map[string]any{},
			map[string]any{"code": strings.Repeat(" ", 200) + codes[10] + strings.Repeat("\n", 100)},
			map[string]any{"code": strings.Repeat("A", 1000)},
			map[string]any{"code": 123}, map[string]any{"code": []string{codes[10]}}, map[string]any{"code": map[string]any{"code": codes[10]}},
			map[string]any{"code": true},
		} {
			wantField(t, withIP(t, u, "", "POST", "/api/user/redeem", body), "code")
		}
		wantError(t, withIP(t, u, "", "POST", "/api/user/redeem", "{not json"), http.StatusBadRequest, "invalid_json")
		ok(redeem(t, u, "", codes[10])) // none of them touched it
	})
	t.Run("batch requests out of range", func(t *testing.T) {
		past := time.Now().Add(-time.Minute).Format(time.RFC3339)
		for _, c := range []struct {
			body  map[string]any
			field string
		}{
			{map[string]any{"name": "x", "count": 0, "quota": 1}, "count"},
			{map[string]any{"name": "x", "count": -1, "quota": 1}, "count"},
			{map[string]any{"name": "x", "count": 10_001, "quota": 1}, "count"},
			{map[string]any{"name": "x", "count": "5", "quota": 1}, "count"},
			{map[string]any{"name": "x", "count": 1.5, "quota": 1}, "count"},
			{map[string]any{"name": "x", "count": 1, "quota": 0}, "quota"},
			{map[string]any{"name": "x", "count": 1, "quota": -5}, "quota"},
			{map[string]any{"name": "x", "count": 1, "quota": int64(1)<<53 + 1}, "quota"},
			{map[string]any{"name": "x", "count": 1, "quota": 1e30}, "quota"},
			{map[string]any{"name": "x", "count": 1, "quota": "100"}, "quota"},
			{map[string]any{"name": "x", "count": 1}, "quota"},
			{map[string]any{"name": "x", "count": 1, "quota": 1, "expires_at": past}, "expires_at"},
			{map[string]any{"name": "x", "count": 1, "quota": 1, "expires_at": "tomorrow"}, "expires_at"},
			{map[string]any{"name": "", "count": 1, "quota": 1}, "name"},
			{map[string]any{"name": "   ", "count": 1, "quota": 1}, "name"},
			{map[string]any{"name": strings.Repeat("n", 65), "count": 1, "quota": 1}, "name"},
			{map[string]any{"name": "line\nbreak", "count": 1, "quota": 1}, "name"},
		} {
			wantField(t, root.Do("POST", "/api/admin/redemptions", c.body), c.field)
		}
		newBatch(t, root, 1, 1<<53, nil) // the largest quota is accepted
	})
	t.Run("filters and exports of unknown batches", func(t *testing.T) {
		var p struct {
			Items []codeView
			Total int64
		}
		r := root.Do("GET", "/api/admin/redemptions?batch=NoSuchBatch", nil)
		wantStatus(t, r, http.StatusOK)
		r.JSON(t, &p)
		if p.Total != 0 || len(p.Items) != 0 {
			t.Fatalf("unknown batch lists %+v", p)
		}
		wantError(t, root.Do("GET", "/api/admin/redemptions/export?batch=NoSuchBatch", nil), http.StatusNotFound, "redemption_batch_not_found")
		wantField(t, root.Do("GET", "/api/admin/redemptions/export", nil), "batch")
		wantField(t, root.Do("GET", "/api/admin/redemptions/export?batch=bad%20id", nil), "batch")
		wantField(t, root.Do("GET", "/api/admin/redemptions?batch="+strings.Repeat("a", 33), nil), "batch")
		wantField(t, root.Do("GET", "/api/admin/redemptions?batch=x%27%20OR%201%3D1", nil), "batch")
		wantField(t, root.Do("GET", "/api/admin/redemptions?status=bogus", nil), "status")
	})
	t.Run("users may not use the admin routes", func(t *testing.T) {
		for _, c := range []struct{ method, path string }{
			{"POST", "/api/admin/redemptions"}, {"GET", "/api/admin/redemptions"}, {"GET", "/api/admin/redemptions/batches"},
			{"GET", "/api/admin/redemptions/export?batch=" + b.Batch}, {"PATCH", "/api/admin/redemptions/1"},
			{"DELETE", "/api/admin/redemptions/1"},
		} {
			r := u.Do(c.method, c.path, map[string]any{"name": "mine", "count": 1, "quota": 1 << 40, "status": "unused"})
			wantError(t, r, http.StatusForbidden, "forbidden")
			if strings.Contains(string(r.Body), codes[11]) {
				t.Fatalf("%s %s leaked a code", c.method, c.path)
			}
		}
		wantError(t, n.Anon(t).Do("POST", "/api/user/redeem", map[string]any{"code": codes[11]}), http.StatusUnauthorized, "unauthorized")
		if got := count(t, n, &model.Redemption{}, "quota = ?", int64(1)<<40); got != 0 {
			t.Fatalf("a user created %d codes", got)
		}
	})

	// Nothing above moved money but the successes, each once; every admin action is in the audit log.
	if sql, live := balances(t, n, id); sql != credited || live != credited {
		t.Fatalf("balance SQL %d live %d, want %d", sql, live, credited)
	}
	wantBooks(t, n, id, credited)
	wantBooks(t, n, userID(t, n, "bystander"), 0)
	if got := count(t, n, &model.Credit{}, "user_id = ? AND source = ?", id, model.CreditRedeem); got*quota != credited {
		t.Fatalf("%d credits for %d units", got, credited)
	}
	if got := count(t, n, &model.AuditLog{}, "action = ? AND actor_id = ?", "redemption.redeem", id); got*quota != credited {
		t.Fatalf("%d redeem audit rows for %d units", got, credited)
	}
	for action, want := range map[string]int64{"redemption.create": 3, "redemption.disable": 2, "redemption.enable": 1, "redemption.delete": 2} {
		if got := count(t, n, &model.AuditLog{}, "action = ? AND actor_name = ?", action, "root"); got != want {
			t.Fatalf("%d %s audit rows, want %d", got, action, want)
		}
	}
}

// findCode finds a code's list item by its hint.
func findCode(t testing.TB, root *apptest.Client, batch, code string) codeView {
	t.Helper()
	var p struct{ Items []codeView }
	root.Do("GET", "/api/admin/redemptions?size=100&batch="+batch, nil).JSON(t, &p)
	want := code[:7] + "…" + code[len(code)-4:]
	for _, it := range p.Items {
		if it.Hint == want {
			return it
		}
	}
	t.Fatalf("no code with hint %s in batch %s", want, batch)
	return codeView{}
}

func TestRedeem_GuessesAreLimitedPerUserAndPerNetwork(t *testing.T) {
	t.Parallel()
	env := apptest.NewEnv(t)
	behindProxy(env)
	n := env.Start(t)
	root := n.Root(t)
	const quota = 1_000
	codes := newBatch(t, root, 6, quota, nil).Codes
	wrong := func(i int) string { return fmt.Sprintf("TG-%032d", i) }
	users := map[string]*apptest.Client{}
	for _, name := range []string{"guesser", "neighbour", "carol", "dave", "erin", "frank", "grace", "holder"} {
		users[name] = n.SignUp(t, name, "Guess-Passw0rd-77")
	}

	t.Run("per user, from any address", func(t *testing.T) {
		g := users["guesser"]
		for i := range 10 {
			wantError(t, redeem(t, g, fmt.Sprintf("203.0.113.%d", 10+i), wrong(i)), http.StatusNotFound, "code_invalid")
		}
		// The 11th attempt is refused whatever it holds, even a valid code: the limit is no oracle.
		r := redeem(t, g, "203.0.113.99", codes[0])
		wantChinese(t, wantError(t, redeem(t, zh(g), "203.0.113.98", codes[0]), http.StatusTooManyRequests, "too_many_attempts"))
		wantError(t, r, http.StatusTooManyRequests, "too_many_attempts")
		if s := retryAfter(t, r); s > 601 {
			t.Fatalf("Retry-After %d s is longer than the window", s)
		}
		// Another user on the guesser's last address is not held: that address made one guess.
		redeemed(t, redeem(t, users["neighbour"], "203.0.113.19", codes[0]), quota)
		wantError(t, redeem(t, g, "203.0.113.99", codes[1]), http.StatusTooManyRequests, "too_many_attempts")
	})

	t.Run("per network: an IPv6 client counts as its /64", func(t *testing.T) {
		at := 0
		for _, who := range []struct {
			name    string
			guesses int
		}{{"carol", 8}, {"dave", 8}, {"erin", 8}, {"frank", 6}} {
			for range who.guesses {
				at++
				ip := fmt.Sprintf("2001:db8:7:7::%x", at) // every guess from another address of the same /64
				wantError(t, redeem(t, users[who.name], ip, wrong(100+at)), http.StatusNotFound, "code_invalid")
			}
		}
		// 30 guesses from the /64: a user with no guess of their own is refused there, even with a valid code …
		r := redeem(t, users["grace"], "2001:db8:7:7:ffff::1", codes[2])
		wantError(t, r, http.StatusTooManyRequests, "too_many_attempts")
		retryAfter(t, r)
		// … and redeems from the next /64.
		redeemed(t, redeem(t, users["grace"], "2001:db8:7:8::1", codes[2]), quota)
	})

	t.Run("answers for a used code are not guesses", func(t *testing.T) {
		h := users["holder"]
		for range 15 {
			wantError(t, redeem(t, h, "192.0.2.50", codes[0]), http.StatusConflict, "code_used")
		}
		redeemed(t, redeem(t, h, "192.0.2.50", codes[3]), quota)
	})

	if got := count(t, n, &model.AuditLog{}, "action = ?", "redemption.redeem"); got != 3 {
		t.Fatalf("%d redeem audit rows, want 3 (failed attempts are not audited)", got)
	}
	for name, want := range map[string]int64{"neighbour": quota, "grace": quota, "holder": quota, "guesser": 0} {
		wantBooks(t, n, userID(t, n, name), want)
	}
}

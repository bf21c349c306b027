package relay_test

// What a user reads in GET /api/logs: the gateway's error class, code and its own message, never upstream
// text the user was not sent (an upstream that echoes request headers would leak the channel's key), nor
// channel ids, attempts or the mapped upstream model. Admins keep everything. And the last page ends.

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"tollgate/relay/relaytest"
)

func TestUserLogs_ShowNoUpstreamTextTheUserWasNotSent(t *testing.T) {
	t.Parallel()
	const secret = "sk-upstream-LEAKED-7f3a9c2e"
	const shownText = "Invalid value for 'temperature': user-visible-400-detail"
	leaky := relaytest.Fault{Kind: relaytest.FaultStatus, Status: http.StatusInternalServerError,
		Body: `{"error":{"message":"internal failure; request headers were: Authorization: Bearer ` + secret +
			` x-api-key: ` + secret + `","type":"server_error"}}`}
	refused := relaytest.Fault{Kind: relaytest.FaultStatus, Status: http.StatusBadRequest,
		Body: `{"error":{"message":"` + shownText + `","type":"invalid_request_error","param":"temperature","code":null}}`}
	w := newWorld(t)
	oa := fake(t, relaytest.ForModel("gpt-4o", relaytest.Fail(leaky)), relaytest.ForModel("gpt-4o-mini", relaytest.Fail(refused)))
	an := fake(t)
	oaSpec := openaiChannel(oa, secret)
	oaSpec.Name = "hidden-openai-channel"
	oaID := w.channel(oaSpec)
	anSpec := anthropicChannel(an)
	anSpec.Name = "hidden-anthropic-channel"
	anSpec.ModelMapping = map[string]string{"claude-sonnet-4-5": "claude-internal-mapped-model"}
	w.channel(anSpec)
	w.prices()
	alice := w.user("alice", 1_000_000)
	k := w.key(alice, nil)

	a := w.call("POST", "/v1/chat/completions", k.Key, chatBody("gpt-4o", false))
	if a.status != http.StatusBadGateway || strings.Contains(string(a.body), secret) {
		t.Fatalf("leaky 500: %d %s", a.status, a.body)
	}
	failedID := a.reqID
	a = w.call("POST", "/v1/chat/completions", k.Key, chatBody("gpt-4o-mini", false))
	if a.status != http.StatusBadRequest || !strings.Contains(string(a.body), shownText) {
		t.Fatalf("passed-through 400: %d %s", a.status, a.body)
	}
	refusedID := a.reqID
	a = w.call("POST", "/v1/messages", k.Key, messagesBody("claude-sonnet-4-5", true))
	if a.status != http.StatusOK {
		t.Fatalf("messages: %d %s", a.status, a.body)
	}
	w.waitLogs(3, "user_id = ?", alice.id)

	// The admin view keeps everything, upstream text included, except the channel's own key, which the
	// gateway masks wherever an upstream echoes it.
	admin := w.root.Do("GET", "/api/admin/logs?"+url.Values{"user_id": {strconv.FormatInt(alice.id, 10)}}.Encode(), nil)
	if strings.Contains(string(admin.Body), secret) {
		t.Fatalf("admin logs hold the channel's key in clear: %s", admin.Body)
	}
	for _, want := range []string{"internal failure; request headers were: Authorization: Bearer sk-upst****9c2e", shownText, "hidden-openai-channel", "hidden-anthropic-channel",
		"claude-internal-mapped-model", `"attempts":[{`, `"channel_id":` + strconv.FormatInt(oaID, 10)} {
		if !strings.Contains(string(admin.Body), want) {
			t.Fatalf("admin logs lack %q: %s", want, admin.Body)
		}
	}

	userView := func(lang string) (string, map[string]map[string]any) {
		alice.c.Lang = lang
		r := alice.c.Do("GET", "/api/logs", nil)
		if r.Status != http.StatusOK {
			t.Fatalf("user logs: %d %s", r.Status, r.Body)
		}
		var page struct {
			Items []map[string]any `json:"items"`
		}
		r.JSON(t, &page)
		by := map[string]map[string]any{}
		for _, it := range page.Items {
			by[it["request_id"].(string)] = it
		}
		if len(by) != 3 {
			t.Fatalf("user sees %d rows: %s", len(by), r.Body)
		}
		return string(r.Body), by
	}
	raw, rows := userView("en")
	for _, banned := range []string{secret, "Authorization", "x-api-key", "hidden-openai-channel", "hidden-anthropic-channel",
		"claude-internal-mapped-model", `"channel_id"`, `"channel_name"`, `"attempts"`, `"upstream_model"`, `"key_index"`,
		`"sticky"`, `"is_test"`, `"error_shown"`, `"upstream_protocol"`} {
		if strings.Contains(raw, banned) {
			t.Fatalf("user logs contain %q: %s", banned, raw)
		}
	}
	code, _ := rows[failedID]["error_code"].(string)
	msg, _ := rows[failedID]["error"].(string)
	if rows[failedID]["error_class"] != "server" || !strings.HasPrefix(code, "upstream_") || msg == "" ||
		strings.ContainsAny(msg, "{}") || strings.Contains(msg, "internal failure") {
		t.Fatalf("failed row as the user sees it: %v (want class server, an upstream_ code, the gateway's own sentence)", rows[failedID])
	}
	if r := rows[refusedID]; !strings.Contains(r["error"].(string), shownText) || r["error_class"] != "client" {
		t.Fatalf("the 400 the user was sent is not shown to them: %v", r)
	}
	if _, zh := userView("zh-CN"); zh[failedID]["error"] == rows[failedID]["error"] {
		t.Fatalf("message not localized: %v", zh[failedID]["error"])
	}

	// With show_channel_to_users the user also sees the channel name, and still nothing else internal.
	w.settings(map[string]any{"show_channel_to_users": true})
	raw, rows = userView("en")
	if rows[failedID]["channel_name"] != "hidden-openai-channel" || !strings.Contains(raw, "hidden-anthropic-channel") {
		t.Fatalf("show_channel_to_users: channel names not shown: %s", raw)
	}
	if rows[failedID]["client_protocol"] != "openai" || rows[failedID]["upstream_protocol"] != "openai" {
		t.Fatalf("show_channel_to_users: protocols not shown: %v", rows[failedID])
	}
	for _, banned := range []string{secret, `"channel_id"`, `"attempts"`, "claude-internal-mapped-model"} {
		if strings.Contains(raw, banned) {
			t.Fatalf("user logs with channel names shown contain %q: %s", banned, raw)
		}
	}
}

func TestUserLogs_LastPageHasNullNextCursor(t *testing.T) {
	t.Parallel()
	s := newStandard(t, 1_000_000)
	for range 5 {
		if a := s.call("POST", "/v1/chat/completions", s.key.Key, chatBody("gpt-4o-mini", false)); a.status != http.StatusOK {
			t.Fatalf("chat: %d %s", a.status, a.body)
		}
	}
	s.waitLogs(5, "user_id = ?", s.alice.id)
	for _, path := range []string{"/api/logs", "/api/admin/logs"} {
		c := s.alice.c
		q := url.Values{"limit": {"2"}}
		if path == "/api/admin/logs" {
			c = s.root
			q.Set("user_id", strconv.FormatInt(s.alice.id, 10))
		}
		seen := map[string]bool{}
		for page := 1; ; page++ {
			if page > 5 {
				t.Fatalf("%s: still paging after %d pages (seen %d rows)", path, page, len(seen))
			}
			r := c.Do("GET", path+"?"+q.Encode(), nil)
			var p struct {
				Items []struct {
					RequestID string `json:"request_id"`
				} `json:"items"`
				NextCursor json.RawMessage `json:"next_cursor"`
			}
			r.JSON(t, &p)
			for _, it := range p.Items {
				if seen[it.RequestID] {
					t.Fatalf("%s page %d repeats %s", path, page, it.RequestID)
				}
				seen[it.RequestID] = true
			}
			if string(p.NextCursor) == "null" {
				if page != 3 || len(seen) != 5 {
					t.Fatalf("%s ended after %d pages with %d rows, want 3 pages, 5 rows", path, page, len(seen))
				}
				break
			}
			if _, err := strconv.ParseInt(string(p.NextCursor), 10, 64); err != nil || string(p.NextCursor) == "0" {
				t.Fatalf("%s page %d next_cursor = %s, want a row id or null", path, page, p.NextCursor)
			}
			q.Set("cursor", string(p.NextCursor))
		}
	}
}

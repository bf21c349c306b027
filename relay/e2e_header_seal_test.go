package relay_test

// header_override values are sealed at rest and masked in the admin API, and rows written in clear before
// sealing existed are sealed at start — and still work.

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"tollgate/app/apptest"
	"tollgate/model"
)

// channelHeaders reads a channel's header_override as the admin API shows it.
func (w *world) channelHeaders(id int64) map[string]string {
	w.t.Helper()
	r := w.root.Do("GET", fmt.Sprintf("/api/admin/channels/%d", id), nil)
	var v struct {
		HeaderOverride map[string]string `json:"header_override"`
	}
	r.JSON(w.t, &v)
	return v.HeaderOverride
}

func TestHeaderOverride_SealedAtRest_MaskedInAPI_MaskRoundTripKeepsValue(t *testing.T) {
	e := apptest.NewEnv(t)
	n := e.Start(t)
	w := worldOn(t, n)
	w.prices()
	p := w.user("hana", 1_000_000)
	key := w.key(p, nil)
	up := fake(t)
	const secretValue = "Bearer org-secret-7f3a9c2e5b1d"
	id := w.knobChannel(openaiChannel(up), map[string]any{"header_override": map[string]string{"X-Org-Auth": secretValue, "X-Short": "abc"}})

	upstreamSees := func(want string) {
		t.Helper()
		if a := w.call("POST", "/v1/chat/completions", key.Key, chatBody("gpt-4o-mini", false)); a.status != http.StatusOK {
			t.Fatalf("relay: %d %s", a.status, a.body)
		}
		if got, _ := up.Last(); got.Header.Get("X-Org-Auth") != want || got.Header.Get("X-Short") != "abc" {
			t.Fatalf("upstream X-Org-Auth = %q X-Short = %q, want %q", got.Header.Get("X-Org-Auth"), got.Header.Get("X-Short"), want)
		}
	}
	upstreamSees(secretValue)

	shown := w.channelHeaders(id)
	if shown["X-Org-Auth"] == secretValue || !strings.Contains(shown["X-Org-Auth"], "****") || shown["X-Short"] != "****" {
		t.Fatalf("admin view shows header values %v, want them masked", shown)
	}
	for _, path := range []string{"/api/admin/channels", fmt.Sprintf("/api/admin/channels/%d", id)} {
		if r := w.root.Do("GET", path, nil); strings.Contains(string(r.Body), "org-secret") {
			t.Fatalf("GET %s shows the header value in clear: %s", path, r.Body)
		}
	}

	// The console sends the masked view back with another edit: the stored values stay.
	if r := w.root.Do("PATCH", fmt.Sprintf("/api/admin/channels/%d", id), map[string]any{"name": "renamed", "header_override": shown}); r.Status != http.StatusOK {
		t.Fatalf("patch with masked values: %d %s", r.Status, r.Body)
	}
	upstreamSees(secretValue)
	// A mask that stands for nothing stored is refused rather than sent upstream as "****".
	bogus := map[string]string{"X-Org-Auth": "Bear****zzzz", "X-Short": "abc"}
	if r := w.root.Do("PATCH", fmt.Sprintf("/api/admin/channels/%d", id), map[string]any{"header_override": bogus}); r.Status != http.StatusBadRequest {
		t.Fatalf("patch with a foreign mask: %d %s", r.Status, r.Body)
	}
	// A new clear value replaces the old one.
	const next = "Bearer org-secret-next-11aa22bb"
	if r := w.root.Do("PATCH", fmt.Sprintf("/api/admin/channels/%d", id), map[string]any{"header_override": map[string]string{"X-Org-Auth": next, "X-Short": "****"}}); r.Status != http.StatusOK {
		t.Fatalf("patch with a new value: %d %s", r.Status, r.Body)
	}
	upstreamSees(next)

	if where, _ := e.StoreHolds(t, n, "org-secret-7f3a9c2e5b1d", "org-secret-next-11aa22bb"); where != "" {
		t.Fatalf("%s holds a header_override value in clear", where)
	}
}

func TestHeaderOverride_ClearRowsFromBeforeSealing_WorkAndAreSealedAtStart(t *testing.T) {
	e := apptest.NewEnv(t)
	n1 := e.Start(t)
	w := worldOn(t, n1)
	w.prices()
	p := w.user("ines", 1_000_000)
	key := w.key(p, nil)
	up := fake(t)
	id := w.channel(openaiChannel(up))
	// What a release before sealing stored: the map in clear.
	const legacy = "legacy-clear-credential-5e8d1f"
	clear := model.JSON[map[string]string]{V: map[string]string{"X-Org-Auth": legacy}}
	if err := n1.App.Store.DB.Model(&model.Channel{}).Where("id = ?", id).Update("header_override", clear).Error; err != nil {
		t.Fatal(err)
	}
	n1.Server.Close()
	if err := n1.App.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	// The upgraded node seals the row at start and relays with the clear value.
	n2 := e.Start(t)
	w = worldOn(t, n2)
	if a := w.call("POST", "/v1/chat/completions", key.Key, chatBody("gpt-4o-mini", false)); a.status != http.StatusOK {
		t.Fatalf("relay after upgrade: %d %s", a.status, a.body)
	}
	if got, _ := up.Last(); got.Header.Get("X-Org-Auth") != legacy {
		t.Fatalf("upstream X-Org-Auth = %q after upgrade, want %q", got.Header.Get("X-Org-Auth"), legacy)
	}
	if shown := w.channelHeaders(id)["X-Org-Auth"]; shown == legacy || !strings.Contains(shown, "****") {
		t.Fatalf("admin view after upgrade = %q, want masked", shown)
	}
	row, err := n2.App.Store.ChannelByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if v := row.HeadersSealed.V["X-Org-Auth"]; v == legacy || !strings.HasPrefix(v, "tgs1:") {
		t.Fatalf("stored value after upgrade = %q, want sealed", v)
	}
	w.waitLogs(1)
	if where, _ := e.StoreHolds(t, n2, legacy); where != "" {
		t.Fatalf("%s still holds the clear header value after the upgrade", where)
	}
}

package controller

import (
	"encoding/json"
	"strings"
	"testing"

	"tollgate/i18n"
	"tollgate/model"
)

func TestToUserLog_ListsNoInternalFieldAndWritesItsOwnMessage(t *testing.T) {
	l := model.UsageLog{ID: 7, RequestID: "gw", ClientRequestID: "mine", ChannelID: 3, ChannelName: "ch-secret",
		UpstreamModel: "mapped-secret", Status: "error", ErrorClass: "server", Error: "500 sk-upstream-LEAKED",
		Sticky: "hit:session", IsTest: true}
	l.Attempts.V = []model.Attempt{{ChannelID: 3}}
	b, _ := json.Marshal(toUserLog(&l, i18n.EN, false))
	for _, banned := range []string{"ch-secret", "mapped-secret", "LEAKED", `"channel_id"`, `"attempts"`, `"sticky"`,
		`"is_test"`, `"upstream_model"`, `"error_shown"`, `"channel_name"`} {
		if strings.Contains(string(b), banned) {
			t.Fatalf("user view has %s: %s", banned, b)
		}
	}
	u := toUserLog(&l, i18n.ZhCN, true)
	if u.ChannelName != "ch-secret" || u.ErrorCode != "upstream_server" || u.Error != i18n.T(i18n.ZhCN, "upstream_server") {
		t.Fatalf("user view = %+v", u)
	}
	// A code whose catalog message needs arguments falls back to its class's sentence, never a bare verb.
	l.ErrorCode, l.ErrorClass = "no_channel", ""
	if msg := toUserLog(&l, i18n.EN, false).Error; strings.Contains(msg, "%") || msg != i18n.T(i18n.EN, "request_failed") {
		t.Fatalf("message for no_channel = %q", msg)
	}
	// Text the user was sent is theirs to read.
	l.ErrorCode, l.ErrorShown, l.Error = "upstream_client", true, `400 {"error":"bad temperature"}`
	if msg := toUserLog(&l, i18n.EN, false).Error; msg != l.Error {
		t.Fatalf("shown text = %q", msg)
	}
}

package app_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"tollgate/app/apptest"
	"tollgate/model"
)

func TestSettings_LogRetentionDaysValidatedAndUsedByTheJob(t *testing.T) {
	n := apptest.New(t)
	root := n.Root(t)
	for _, bad := range []any{-1, 36501, "30", 1.5} {
		r := root.Do("PUT", "/api/admin/settings", map[string]any{"log_retention_days": bad})
		if r.Status != http.StatusBadRequest {
			t.Fatalf("log_retention_days %v: %d %s", bad, r.Status, r.Body)
		}
	}
	wantField(t, root.Do("PUT", "/api/admin/settings", map[string]any{"log_retention_days": -1}), "log_retention_days")
	// Off by default: the job deletes nothing.
	if res, err := n.App.Retention.Run(context.Background()); err != nil || !res.Skipped {
		t.Fatalf("retention with the default 0: %+v %v", res, err)
	}
	if r := root.Do("PUT", "/api/admin/settings", map[string]any{"log_retention_days": 7}); r.Status != http.StatusOK {
		t.Fatalf("set retention: %d %s", r.Status, r.Body)
	}
	st := n.App.Store
	old := model.UsageLog{RequestID: "old-1", CreatedAt: time.Now().UTC().AddDate(0, 0, -8), UserID: 1, Model: "m", Status: "success"}
	fresh := model.UsageLog{RequestID: "new-1", CreatedAt: time.Now().UTC().AddDate(0, 0, -6), UserID: 1, Model: "m", Status: "success"}
	if err := st.AddLogs(context.Background(), []model.UsageLog{old, fresh}); err != nil {
		t.Fatal(err)
	}
	waitSettings := time.Now().Add(5 * time.Second)
	for n.App.Settings.Get().LogRetentionDays != 7 && time.Now().Before(waitSettings) {
		time.Sleep(10 * time.Millisecond)
	}
	res, err := n.App.Retention.Run(context.Background())
	if err != nil || res.Deleted != 1 {
		t.Fatalf("retention 7 days: %+v %v", res, err)
	}
	var ids []string
	st.DB.Model(&model.UsageLog{}).Pluck("request_id", &ids)
	if len(ids) != 1 || ids[0] != "new-1" {
		t.Fatalf("left %v, want [new-1]", ids)
	}
	if r := root.Do("GET", "/api/admin/settings", nil); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"log_retention_days":7`) {
		t.Fatalf("settings view: %d %s", r.Status, r.Body)
	}
}

func TestAudit_KeysetPagesCoverEveryEntryOnce(t *testing.T) {
	n := apptest.New(t)
	root := n.Root(t)
	for i := range 7 {
		if r := root.Do("PUT", "/api/admin/settings", map[string]any{"log_retention_days": i + 1}); r.Status != http.StatusOK {
			t.Fatalf("settings: %d %s", r.Status, r.Body)
		}
	}
	var all struct {
		Items []model.AuditLog
		Total int64
	}
	root.Do("GET", "/api/admin/audit?size=100", nil).JSON(t, &all)
	if all.Total < 7 || int64(len(all.Items)) != all.Total {
		t.Fatalf("page/size view: %d items, total %d", len(all.Items), all.Total)
	}
	var seen []int64
	cursor := "0"
	for pages := 0; ; pages++ {
		var page struct {
			Items      []model.AuditLog
			NextCursor *int64 `json:"next_cursor"`
		}
		r := root.Do("GET", "/api/admin/audit?limit=3&cursor="+cursor, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("keyset page: %d %s", r.Status, r.Body)
		}
		r.JSON(t, &page)
		for _, a := range page.Items {
			seen = append(seen, a.ID)
		}
		if page.NextCursor == nil {
			break
		}
		cursor = strconv.FormatInt(*page.NextCursor, 10)
		if pages > 50 {
			t.Fatal("paging does not end")
		}
	}
	if len(seen) != len(all.Items) {
		t.Fatalf("keyset pages %d entries, want %d", len(seen), len(all.Items))
	}
	for i := range seen {
		if seen[i] != all.Items[i].ID {
			t.Fatalf("entry %d: id %d, want %d", i, seen[i], all.Items[i].ID)
		}
	}
	wantField(t, root.Do("GET", "/api/admin/audit?cursor=abc", nil), "cursor")
}

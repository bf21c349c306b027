package usagelog_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"tollgate/model"
	"tollgate/model/modeltest"
	"tollgate/service/cache"
	"tollgate/service/usagelog"
)

// openStore opens a fresh migrated store on this pass's shape (SQLite file, or a fresh MariaDB database).
func openStore(t *testing.T) *model.Store {
	t.Helper()
	var st *model.Store
	var err error
	if os.Getenv(modeltest.EnvDSN) != "" {
		st, err = model.Open(modeltest.FreshMySQL(t, "tg_logs"), "")
	} else {
		st, err = model.Open("", filepath.Join(t.TempDir(), "t.db"))
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return st
}

var models = []string{"gpt-4o", "gpt-4o-mini", "claude-3-5-sonnet"}

// entries makes n settled requests spread over users 1-3, keys, channels, models, statuses and the last `days`
// UTC days (one every few minutes, newest last).
func entries(n, days int, tag string) []usagelog.Entry {
	now := time.Now().UTC()
	start := now.Add(-time.Duration(days) * 24 * time.Hour)
	step := time.Duration(days) * 24 * time.Hour / time.Duration(n)
	out := make([]usagelog.Entry, n)
	for i := range out {
		user := int64(i%3 + 1)
		out[i] = usagelog.Entry{Log: model.UsageLog{
			RequestID: fmt.Sprintf("%s-%d", tag, i), CreatedAt: start.Add(time.Duration(i) * step).Truncate(time.Microsecond),
			UserID: user, TokenID: user*10 + int64(i%2), ChannelID: int64(i%4 + 1), Model: models[i%len(models)],
			PromptTokens: int64(100 + i), CompletionTokens: int64(i % 50), Cost: int64(1000 + i*7), UpstreamCost: int64(400 + i*3),
			Status: []string{"success", "success", "error"}[i%3], Username: fmt.Sprintf("u%d", user),
		}}
	}
	return out
}

// threeUsers creates users 1, 2 and 3 (the users of entries) with a balance of start each.
func threeUsers(t *testing.T, st *model.Store, start int64) {
	t.Helper()
	for u := int64(1); u <= 3; u++ {
		if err := st.DB.Create(&model.User{ID: u, Username: fmt.Sprintf("u%d", u), PasswordHash: "x", Quota: start}).Error; err != nil {
			t.Fatal(err)
		}
	}
}

// checkSpent checks users 1–3 spent exactly spent[u] of their start balance: Σ credits − Σ logged cost.
func checkSpent(t *testing.T, st *model.Store, start int64, spent map[int64]int64) {
	t.Helper()
	for u := int64(1); u <= 3; u++ {
		var got model.User
		if err := st.DB.First(&got, u).Error; err != nil {
			t.Fatal(err)
		}
		if got.Quota != start-spent[u] || got.UsedQuota != spent[u] {
			t.Errorf("user %d: quota %d used %d, want %d and %d", u, got.Quota, got.UsedQuota, start-spent[u], spent[u])
		}
	}
}

func write(w *usagelog.Writer, es []usagelog.Entry) {
	for _, e := range es {
		w.Write(e)
	}
	w.Flush()
}

type sum struct {
	requests, cost, prompt, completion, successes, upstream, tests, testPrompt, testCompletion int64
}

func sumOf(d model.DailySums) sum {
	return sum{d.Requests, d.Cost, d.PromptTokens, d.CompletionTokens, d.Successes, d.UpstreamCost, d.TestRequests,
		d.TestPromptTokens, d.TestCompletionTokens}
}

// rawSums groups usage_logs rows in Go by key(row).
func rawSums(t *testing.T, st *model.Store, key func(l model.UsageLog) string) map[string]sum {
	t.Helper()
	var rows []model.UsageLog
	if err := st.LogStore().DB.Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	out := map[string]sum{}
	for _, l := range rows {
		k := key(l)
		s := out[k]
		s.requests++
		s.cost += l.Cost
		s.prompt += l.PromptTokens
		s.completion += l.CompletionTokens
		s.upstream += l.UpstreamCost
		switch {
		case l.IsTest:
			s.tests++
			s.testPrompt += l.PromptTokens
			s.testCompletion += l.CompletionTokens
		case l.Status == "success":
			s.successes++
		}
		out[k] = s
	}
	return out
}

func TestWriter_DailySumsEqualRawRowsAndReplaysAddNothing(t *testing.T) {
	st := openStore(t)
	const start = 100_000_000
	threeUsers(t, st, start)
	w := usagelog.NewWriter(st, 1024, 50, 20*time.Millisecond)
	defer w.Close(context.Background())
	es := entries(600, 6, "d")
	for i := range es {
		es[i].Log.IsTest = i%17 == 0 // channel tests: counted apart for the business reports
	}
	write(w, es)
	// A replayed stretch (a spool drained twice, a commit retried after it went through), alone and mixed with
	// new rows: no row, no sum and no money twice.
	write(w, es[100:250])
	more := entries(20, 1, "more")
	write(w, append(append([]usagelog.Entry{}, es[590:600]...), more...))
	es = append(es, more...)
	var n int64
	st.DB.Model(&model.UsageLog{}).Count(&n)
	if n != int64(len(es)) {
		t.Fatalf("rows = %d, want %d", n, len(es))
	}
	spent := map[int64]int64{}
	for _, e := range es {
		if !e.Log.IsTest {
			spent[e.Log.UserID] += e.Log.Cost
		}
	}
	checkSpent(t, st, start, spent)
	raw := rawSums(t, st, func(l model.UsageLog) string {
		return fmt.Sprintf("%s|%d|%d|%s", l.CreatedAt.UTC().Format(time.DateOnly), l.UserID, l.TokenID, l.Model)
	})
	var keys []model.UsageDailyKey
	st.DB.Find(&keys)
	got := map[string]sum{}
	for _, k := range keys {
		got[fmt.Sprintf("%s|%d|%d|%s", k.Day, k.UserID, k.TokenID, k.Model)] = sumOf(k.DailySums)
	}
	if fmt.Sprint(got) != fmt.Sprint(raw) {
		t.Fatalf("usage_daily_keys differs from Σ rows:\n got %v\nwant %v", got, raw)
	}
	rawCh := rawSums(t, st, func(l model.UsageLog) string {
		return fmt.Sprintf("%s|%d|%s", l.CreatedAt.UTC().Format(time.DateOnly), l.ChannelID, l.Model)
	})
	var chans []model.UsageDailyChannel
	st.DB.Find(&chans)
	gotCh := map[string]sum{}
	for _, k := range chans {
		gotCh[fmt.Sprintf("%s|%d|%s", k.Day, k.ChannelID, k.Model)] = sumOf(k.DailySums)
	}
	if fmt.Sprint(gotCh) != fmt.Sprint(rawCh) {
		t.Fatalf("usage_daily_channels differs from Σ rows:\n got %v\nwant %v", gotCh, rawCh)
	}
}

func TestReader_StatsFromDailySumsEqualRawRows(t *testing.T) {
	st := openStore(t)
	w := usagelog.NewWriter(st, 1024, 50, 20*time.Millisecond)
	defer w.Close(context.Background())
	write(w, entries(900, 40, "s"))
	r := usagelog.NewReader(st)
	ctx := context.Background()
	now := time.Now().UTC()
	cases := map[string]model.LogFilter{
		"admin, default 30 days":       {},
		"user":                         {UserID: 2},
		"key and model":                {TokenID: 21, Model: "gpt-4o-mini"},
		"channel":                      {ChannelID: 3},
		"user, partial days both ends": {UserID: 1, From: now.Add(-200 * time.Hour), To: now.Add(-30 * time.Hour)},
		"admin, partial first day":     {From: now.Add(-100 * time.Hour)},
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := r.Stats(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			// The same question to raw rows only: a status filter the sums cannot answer, matched by every row.
			raw := f
			if raw.From.IsZero() {
				raw.From = now.Truncate(24*time.Hour).AddDate(0, 0, -29)
			}
			days, _ := st.LogStatsByDay(ctx, raw)
			mods, _ := st.LogStatsByModel(ctx, raw)
			var want int64
			for _, d := range days {
				want += d.Cost
			}
			if got.Totals.Cost != want || len(got.Days) != len(days) || len(got.Models) != len(mods) {
				t.Fatalf("stats: cost %d days %d models %d; raw: cost %d days %d models %d", got.Totals.Cost,
					len(got.Days), len(got.Models), want, len(days), len(mods))
			}
			for i, d := range days {
				if got.Days[i].Date != d.Key || got.Days[i].Cost != d.Cost || got.Days[i].Requests != d.Requests ||
					got.Days[i].PromptTokens != d.PromptTokens || got.Days[i].CompletionTokens != d.CompletionTokens {
					t.Fatalf("day %s: %+v, raw %+v", d.Key, got.Days[i], d)
				}
			}
			if got.Totals.Requests == 0 {
				t.Fatal("no rows in range: the case tests nothing")
			}
		})
	}
}

func TestListLogs_KeysetPagesCoverEveryRowOnceNewestFirst(t *testing.T) {
	st := openStore(t)
	w := usagelog.NewWriter(st, 1024, 50, 20*time.Millisecond)
	defer w.Close(context.Background())
	es := entries(300, 3, "p")
	// Several rows at the same instant: the keyset must break the tie by id.
	for i := 0; i < 30; i++ {
		es[i].Log.CreatedAt = es[0].Log.CreatedAt
	}
	write(w, es)
	r := usagelog.NewReader(st)
	f := model.LogFilter{UserID: 1, Model: "gpt-4o"}
	var all []model.UsageLog
	st.DB.Where("user_id = ? AND model = ?", 1, "gpt-4o").Order("created_at DESC, id DESC").Find(&all)
	var seen []int64
	var cursor int64
	for pages := 0; ; pages++ {
		items, next, err := r.List(context.Background(), f, cursor, 7)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range items {
			seen = append(seen, l.ID)
		}
		if next == nil {
			break
		}
		cursor = *next
		if pages > 100 {
			t.Fatal("paging does not end")
		}
	}
	if len(seen) != len(all) || len(all) == 0 {
		t.Fatalf("paged %d rows, want %d", len(seen), len(all))
	}
	for i := range all {
		if seen[i] != all[i].ID {
			t.Fatalf("row %d: id %d, want %d", i, seen[i], all[i].ID)
		}
	}
}

func TestRetention_DeletesOldRowsInChunksOnOneNode(t *testing.T) {
	st := openStore(t)
	w := usagelog.NewWriter(st, 4096, 200, 20*time.Millisecond)
	defer w.Close(context.Background())
	write(w, entries(1200, 60, "r"))
	var before []model.UsageDailyChannel
	st.DB.Order("day, channel_id, model").Find(&before)
	c := cache.NewMemory()
	ret := usagelog.NewRetention(st, c, func() int { return 30 })
	// Every statement over its (1 ns) budget: chunks shrink from 100 ids to the floor of 20 and still delete
	// every old row.
	ret.Chunk, ret.Pause, ret.Budget = 100, time.Millisecond, time.Nanosecond
	// Another node holds the lock: this one deletes nothing.
	_, _ = c.SetNX(context.Background(), "logs:retention:lock", []byte("1"), time.Minute)
	if res, err := ret.Run(context.Background()); err != nil || !res.Skipped {
		t.Fatalf("run under another node's lock: %+v %v", res, err)
	}
	_ = c.Del(context.Background(), "logs:retention:lock")
	cutoff := time.Now().UTC().AddDate(0, 0, -30)
	var old int64
	st.DB.Model(&model.UsageLog{}).Where("created_at < ?", cutoff).Count(&old)
	res, err := ret.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Deleted < old-1 || res.Deleted > old || res.Chunks < 5 || res.MaxChunk != 100 || res.MinChunk != 20 {
		t.Fatalf("retention %+v; %d rows were older than 30 days", res, old)
	}
	var left, stale int64
	st.DB.Model(&model.UsageLog{}).Count(&left)
	st.DB.Model(&model.UsageLog{}).Where("created_at < ?", cutoff.Add(-time.Minute)).Count(&stale)
	if stale != 0 || left < 1200-old {
		t.Fatalf("after retention: %d rows, %d older than the cutoff", left, stale)
	}
	// The daily sums stay: stats of deleted days still answer.
	var after []model.UsageDailyChannel
	st.DB.Order("day, channel_id, model").Find(&after)
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatal("retention changed the daily sums")
	}
	if got, _ := c.SetNX(context.Background(), "logs:retention:lock", []byte("1"), time.Minute); !got {
		t.Fatal("retention kept its lock")
	}
}

func TestSpool_BoundedOrderedAndSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	sp, err := usagelog.OpenSpool(dir, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	es := entries(40, 1, "sp")
	batch := func(i int) []model.UsageLog {
		out := make([]model.UsageLog, 4)
		for j := range out {
			out[j] = es[i*4+j].Log
		}
		return out
	}
	for i := 0; i < 10; i++ {
		if err := sp.Append(batch(i)); err != nil {
			t.Fatal(err)
		}
	}
	size := sp.Bytes()
	re, err := usagelog.OpenSpool(dir, size+10) // reopened (a restart) and now nearly full
	if err != nil {
		t.Fatal(err)
	}
	if re.Len() != 10 || re.Bytes() != size {
		t.Fatalf("reopened: %d batches %d bytes, want 10 and %d", re.Len(), re.Bytes(), size)
	}
	if err := re.Append(batch(0)); !errors.Is(err, usagelog.ErrSpoolFull) {
		t.Fatalf("append past the bound: %v", err)
	}
	// A damaged file is moved aside, not a stop.
	names, _ := filepath.Glob(filepath.Join(dir, "*.ndjson"))
	sort.Strings(names)
	if err := os.WriteFile(names[1], []byte("{not json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		name, logs, ok, err := re.Oldest()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		for _, l := range logs {
			got = append(got, l.RequestID)
		}
		if err := re.Remove(name); err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	for i, e := range es {
		if i/4 != 1 {
			want = append(want, e.Log.RequestID)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || re.Len() != 0 || re.Bytes() != 0 {
		t.Fatalf("drained %v (len %d, %d bytes), want %v", got, re.Len(), re.Bytes(), want)
	}
	if bad, _ := filepath.Glob(filepath.Join(dir, "*.bad")); len(bad) != 1 {
		t.Fatalf("damaged files set aside: %v", bad)
	}
}

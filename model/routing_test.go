package model_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"tollgate/model"
)

// Routing tables on this pass's shape: configuration rows replace per group × model; users and keys of a
// database made before routing preferences read as none and keep what is written; decision rows filter by
// request id, model and time, page by id, and the retention deletes only rows older than the cutoff.
func TestRoutingTables_ConfigsPrefsDecisionsAndRetention(t *testing.T) {
	s := storeForPass(t)
	ctx := context.Background()
	if err := s.DB.Migrator().DropColumn(&model.Token{}, "routing"); err != nil {
		t.Fatalf("drop tokens.routing: %v", err)
	}
	now := time.Now().UTC()
	if err := s.DB.Exec("INSERT INTO tokens (user_id, name, key_hash, key_cipher, key_hint, created_at, updated_at) VALUES (1, 'old', 'h-old', 'c', 'sk-', ?, ?)", now, now).Error; err != nil {
		t.Fatalf("insert an old key: %v", err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	var old model.Token
	if err := s.DB.Where("key_hash = ?", "h-old").First(&old).Error; err != nil || !old.Routing.V.Empty() {
		t.Fatalf("old key reads %+v (%v), want no preferences", old.Routing.V, err)
	}
	old.Routing.V = model.RoutePrefs{Strategy: "cost", Avoid: []string{"tag:x"}, MaxPrice: 7.5}
	if err := s.DB.Save(&old).Error; err != nil {
		t.Fatal(err)
	}
	if got, _ := s.TokenByID(ctx, old.ID); got.Routing.V.Strategy != "cost" || got.Routing.V.MaxPrice != 7.5 || got.Routing.V.Avoid[0] != "tag:x" {
		t.Fatalf("key preferences read back %+v", got.Routing.V)
	}

	for _, strat := range []string{"cost", "performance"} { // the second save replaces the first
		row := &model.RoutingConfig{Group: "g", Model: "m", Tuning: model.JSON[model.RouteTuning]{V: model.RouteTuning{Strategy: strat, MinSamples: 5}}, UpdatedAt: now}
		if err := s.SaveRoutingConfig(ctx, row); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SaveRoutingConfig(ctx, &model.RoutingConfig{Group: "*", Model: "*", UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	rows, err := s.ListRoutingConfigs(ctx)
	if err != nil || len(rows) != 2 || rows[1].Group != "g" || rows[1].Tuning.V.Strategy != "performance" {
		t.Fatalf("configs %+v (%v)", rows, err)
	}
	if err := s.DeleteRoutingConfig(ctx, "g", "m"); err != nil {
		t.Fatal(err)
	}

	var ds []model.RoutingDecision
	for i := range 30 {
		at := now.Add(-time.Duration(i) * 24 * time.Hour) // one a day, going back 30 days
		m := "m1"
		if i%2 == 1 {
			m = "m2"
		}
		ds = append(ds, model.RoutingDecision{RequestID: "req-" + string(rune('a'+i)), CreatedAt: at, Model: m, Strategy: "balanced",
			Candidates: model.JSON[json.RawMessage]{V: json.RawMessage(`{"ranking":[]}`)}})
	}
	if err := s.InsertRoutingDecisions(ctx, ds); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.RoutingDecisions(ctx, model.DecisionFilter{RequestID: "req-c"}); len(got) != 1 || got[0].Model != "m1" {
		t.Fatalf("by request id: %+v", got)
	}
	if got, _ := s.RoutingDecisions(ctx, model.DecisionFilter{Model: "m2", From: now.Add(-10*24*time.Hour - time.Hour)}); len(got) != 5 {
		t.Fatalf("m2 over the last 10 days: %d rows", len(got))
	}
	page1, _ := s.RoutingDecisions(ctx, model.DecisionFilter{Limit: 20})
	page2, _ := s.RoutingDecisions(ctx, model.DecisionFilter{Limit: 20, Before: page1[len(page1)-1].ID})
	if len(page1) != 20 || len(page2) != 10 || page2[0].ID >= page1[19].ID {
		t.Fatalf("pages %d + %d", len(page1), len(page2))
	}
	n, err := s.DeleteRoutingDecisionsBefore(ctx, now.Add(-7*24*time.Hour+time.Hour), 5)
	if err != nil || n != 5 {
		t.Fatalf("first chunk deleted %d (%v)", n, err)
	}
	for n == 5 {
		n, _ = s.DeleteRoutingDecisionsBefore(ctx, now.Add(-7*24*time.Hour+time.Hour), 5)
	}
	if left, _ := s.RoutingDecisions(ctx, model.DecisionFilter{Limit: 200}); len(left) != 7 {
		t.Fatalf("after retention of 7 days: %d rows, want 7", len(left))
	}
}

package stats

import (
	"testing"
	"time"

	"tollgate/model"
	"tollgate/service/apperr"
)

func TestWindow_DefaultsOrderAndSpan(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	s := &Service{now: func() time.Time { return now }}
	if from, to, err := s.Window(time.Time{}, time.Time{}); err != nil || !to.Equal(now) || !from.Equal(now.Add(-DefaultSpan)) {
		t.Fatalf("defaults = %v %v %v", from, to, err)
	}
	for _, tc := range []struct {
		from, to time.Time
		field    string
	}{
		{now, now, "to"},
		{now, now.Add(-time.Second), "to"},
		{now.Add(-MaxSpan - time.Second), now, "from"},
		{now.Add(time.Hour), time.Time{}, "to"}, // from in the future, to defaults to now
	} {
		_, _, err := s.Window(tc.from, tc.to)
		if e, ok := apperr.As(err); !ok || e.Field != tc.field || e.Status != 400 {
			t.Errorf("Window(%v, %v) = %v, want 400 naming %s", tc.from, tc.to, err, tc.field)
		}
	}
	if _, _, err := s.Window(now.Add(-MaxSpan), now); err != nil {
		t.Fatalf("366 days refused: %v", err)
	}
	loc := time.FixedZone("UTC+8", 8*3600)
	if from, _, err := s.Window(time.Date(2026, 5, 1, 8, 0, 0, 0, loc), now); err != nil || from.Location() != time.UTC || from.Hour() != 0 {
		t.Fatalf("offset time = %v, %v", from, err)
	}
}

func TestFigures_SuccessRateAndProfit(t *testing.T) {
	for _, tc := range []struct {
		req, ok int64
		want    float64
	}{{0, 0, 0}, {3, 2, 0.6667}, {3, 1, 0.3333}, {1, 1, 1}, {8, 7, 0.875}, {20000, 1, 0.0001}, {40000, 1, 0.0000}} {
		if got := figures(model.StatsRow{Requests: tc.req, Successes: tc.ok}).SuccessRate; got != tc.want {
			t.Errorf("%d/%d = %v, want %v", tc.ok, tc.req, got, tc.want)
		}
	}
	if f := figures(model.StatsRow{Revenue: 100, UpstreamCost: 130}); f.Profit != -30 {
		t.Fatalf("loss = %d", f.Profit)
	}
}

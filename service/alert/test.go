package alert

import (
	"context"
	"net/http"

	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/setting"
)

// SendTest sends a test alert now through every target of one channel ("webhook": every webhook; "email":
// every smtp.admin_to address), skipping the cooldown, and returns the alert_logs rows it wrote.
func (s *Service) SendTest(ctx context.Context, channel string) ([]model.AlertLog, error) {
	st := s.d.Settings.Get().Alerts
	ev := Event{Name: setting.EventTest, Key: "test", At: s.d.Now().UTC(), Data: map[string]any{}, force: true}
	var targets []target
	switch channel {
	case ChannelWebhook, ChannelEmail:
		for _, t := range s.targets(&st, ev) {
			if t.channel == channel {
				targets = append(targets, t)
			}
		}
	default:
		return nil, apperr.Field("channel", `"webhook" or "email"`)
	}
	if len(targets) == 0 {
		return nil, apperr.New(http.StatusConflict, "alert_no_target", channel)
	}
	out := make([]model.AlertLog, 0, len(targets))
	for _, t := range targets {
		out = append(out, s.record(ev, t, t.send(s, ev)))
	}
	return out, nil
}

package token

import (
	"context"
	"fmt"
	"net/http"

	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/audit"
)

// SetStatus lets an admin enable or disable a key. A key the admin disables is marked admin_disabled: its
// owner cannot enable it again; an admin's enable clears the mark. Every change is audited.
func (s *Service) SetStatus(ctx context.Context, actor *model.User, ip string, id int64, status string) (*View, error) {
	t, err := s.own(ctx, id, 0)
	if err != nil {
		return nil, err
	}
	if status != model.StatusEnabled && status != model.StatusDisabled {
		return nil, apperr.Field("status", `must be "enabled" or "disabled"`)
	}
	owner, err := s.owners.Cached(ctx, t.UserID)
	if err != nil {
		return nil, err
	}
	if !owner.ManagedBy(actor) {
		return nil, apperr.New(http.StatusForbidden, "key_owner_protected")
	}
	before := map[string]any{"status": t.Status, "admin_disabled": t.AdminDisabled}
	t.Status, t.AdminDisabled = status, status == model.StatusDisabled
	if err := s.store.SaveToken(ctx, t); err != nil {
		return nil, err
	}
	s.changed(ctx, t.KeyHash)
	action := "token.enable"
	if status == model.StatusDisabled {
		action = "token.disable"
	}
	s.audit.Record(ctx, audit.Actor{ID: actor.ID, Name: actor.Username, IP: ip}, action, fmt.Sprintf("%s/%s#%d", owner.Username, t.Name, t.ID),
		map[string]any{"token_id": t.ID, "name": t.Name, "owner_id": owner.ID, "owner": owner.Username, "before": before})
	return s.view(ctx, t), nil
}

package account

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/audit"
)

// List pages through users for admins.
func (s *Service) List(ctx context.Context, f model.UserFilter, p model.Page) ([]model.User, int64, error) {
	us, n, err := s.store.ListUsers(ctx, f, p)
	for i := range us {
		us[i] = *s.View(ctx, &us[i])
	}
	return us, n, err
}

// Get loads one user for the API (live balance).
func (s *Service) Get(ctx context.Context, id int64) (*model.User, error) {
	u, err := s.store.UserByID(ctx, id)
	if errors.Is(err, model.ErrNotFound) {
		return nil, apperr.New(http.StatusNotFound, "user_not_found")
	} else if err != nil {
		return nil, err
	}
	return s.View(ctx, u), nil
}

// UpdateInput is an admin's edit of a user; nil fields stay.
type UpdateInput struct {
	Role   *string `json:"role"`
	Group  *string `json:"group"`
	Status *string `json:"status"`
	Email  *string `json:"email"`
	// RPM and TPM limit the user's requests and tokens per minute over all their keys (0 = none).
	RPM *int   `json:"rpm"`
	TPM *int64 `json:"tpm"`
	// Tier is the user's price tier ("" means the default tier).
	Tier *string `json:"tier"`
}

// Tiers says which price tiers exist (implemented by service/tier).
type Tiers interface {
	Exists(name string) bool
}

// SetTiers wires the tier book that user edits are checked against.
func (s *Service) SetTiers(t Tiers) { s.tiers = t }

// Update applies an admin's edit. Only root grants admin or root, and only root edits admins; nobody changes
// their own role or status.
func (s *Service) Update(ctx context.Context, actor *model.User, ip string, id int64, in UpdateInput) (*model.User, error) {
	u, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if !u.ManagedBy(actor) {
		return nil, apperr.ErrForbidden
	}
	if u.Status == StatusDeleted {
		return nil, apperr.New(http.StatusConflict, "user_deleted")
	}
	fields := map[string]any{}
	if in.Role != nil && *in.Role != u.Role {
		switch *in.Role {
		case model.RoleUser, model.RoleAdmin, model.RoleRoot:
		default:
			return nil, apperr.Field("role", `must be "user", "admin" or "root"`)
		}
		if actor.ID == u.ID {
			return nil, apperr.New(http.StatusForbidden, "cannot_modify_self")
		}
		if *in.Role != model.RoleUser && actor.Role != model.RoleRoot {
			return nil, apperr.New(http.StatusForbidden, "role_not_allowed", *in.Role)
		}
		fields["role"] = *in.Role
	}
	if in.Group != nil && *in.Group != u.Group {
		if _, ok := s.groups.Get(*in.Group); !ok {
			return nil, apperr.New(http.StatusBadRequest, "group_not_found")
		}
		fields["user_group"] = *in.Group
	}
	if in.Status != nil && *in.Status != u.Status {
		if *in.Status != model.StatusEnabled && *in.Status != model.StatusDisabled {
			return nil, apperr.Field("status", `must be "enabled" or "disabled"`)
		}
		if actor.ID == u.ID {
			return nil, apperr.New(http.StatusForbidden, "cannot_modify_self")
		}
		fields["status"] = *in.Status
		if *in.Status == model.StatusDisabled {
			fields["session_epoch"] = u.SessionEpoch + 1 // console sessions end at once
		}
	}
	if in.Email != nil && *in.Email != u.Email {
		if *in.Email != "" && !emailRE.MatchString(*in.Email) {
			return nil, apperr.Field("email", "not an email address")
		}
		fields["email"] = *in.Email
	}
	if in.RPM != nil && *in.RPM != u.RPM {
		if *in.RPM < 0 || *in.RPM > 1_000_000 {
			return nil, apperr.Field("rpm", "must be between 0 and 1000000")
		}
		fields["rpm"] = *in.RPM
	}
	if in.TPM != nil && *in.TPM != u.TPM {
		if *in.TPM < 0 || *in.TPM > 1_000_000_000 {
			return nil, apperr.Field("tpm", "must be between 0 and 1000000000")
		}
		fields["tpm"] = *in.TPM
	}
	if in.Tier != nil {
		t := *in.Tier
		if t == "" {
			t = model.DefaultTier
		}
		if t != u.Tier {
			if t != model.DefaultTier && (s.tiers == nil || !s.tiers.Exists(t)) {
				return nil, apperr.Field("tier", fmt.Sprintf("no tier named %q", t))
			}
			fields["user_tier"] = t
		}
	}
	if len(fields) == 0 {
		return u, nil
	}
	if err := s.store.UpdateUserFields(ctx, id, fields); err != nil {
		return nil, fmt.Errorf("update user %d: %w", id, err)
	}
	if fields["status"] == model.StatusDisabled {
		_ = s.store.RevokeUserSessions(ctx, id, s.opt.Now())
	}
	delete(fields, "session_epoch")
	s.audit.Record(ctx, audit.Actor{ID: actor.ID, Name: actor.Username, IP: ip}, "user.update", u.Username, fields)
	s.changed(ctx, id)
	return s.Get(ctx, id)
}

// AdjustQuota adds delta units to a user's balance (negative deducts, never below zero) with a reason in the
// audit log; SQL and the audit row are written in one transaction, then the live ledger follows.
func (s *Service) AdjustQuota(ctx context.Context, actor *model.User, ip string, id, delta int64, reason string) (*model.User, error) {
	if reason == "" || len(reason) > 255 {
		return nil, apperr.New(http.StatusBadRequest, "reason_required")
	}
	if delta == 0 {
		return nil, apperr.Field("delta", "must not be zero")
	}
	u, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	// The same rule as Update: a non-root admin may not drain (or fund) root or a fellow admin.
	if !u.ManagedBy(actor) {
		return nil, apperr.ErrForbidden
	}
	if u.Status == StatusDeleted {
		return nil, apperr.New(http.StatusConflict, "user_deleted")
	}
	if delta < 0 && u.Quota+delta < 0 {
		return nil, apperr.New(http.StatusBadRequest, "quota_underflow")
	}
	err = s.Credit(ctx, id, delta, CreditSource{Kind: model.CreditAdmin, Action: "user.quota", Target: u.Username,
		Actor: audit.Actor{ID: actor.ID, Name: actor.Username, IP: ip}, Note: reason,
		Detail: map[string]any{"delta": delta, "reason": reason}})
	if err != nil {
		return nil, err
	}
	return s.Get(ctx, id)
}

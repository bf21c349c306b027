package account

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"gorm.io/gorm"

	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/audit"
)

// StatusDeleted is a user an admin deleted: the row stays (its balance, credits and usage logs are the
// books), but it can never sign in, relay or be edited again, and its name, e-mail, password, second factor and
// linked sign-ins are gone.
const StatusDeleted = "deleted"

// CreateInput is an admin's new user. Quota (units, ≥ 0) is credited as an admin adjustment, so the user's
// credits still add up to their balance.
type CreateInput struct {
	Username string  `json:"username"`
	Password string  `json:"password"`
	Email    string  `json:"email"`
	Role     string  `json:"role"`
	Group    string  `json:"group"`
	Quota    int64   `json:"quota"`
	Language string  `json:"language"`
	Reason   *string `json:"reason"`
}

// Create makes a user for an admin: the whole password policy applies, only root grants admin or root, the
// group must exist; no new-user gift (the admin names the starting balance). Audited as user.create.
func (s *Service) Create(ctx context.Context, actor *model.User, ip string, in CreateInput) (*model.User, error) {
	role := in.Role
	switch role {
	case "":
		role = model.RoleUser
	case model.RoleUser:
	case model.RoleAdmin, model.RoleRoot:
		if actor.Role != model.RoleRoot {
			return nil, apperr.New(http.StatusForbidden, "role_not_allowed", role)
		}
	default:
		return nil, apperr.Field("role", `must be "user", "admin" or "root"`)
	}
	group := in.Group
	if group == "" {
		group = "default"
	}
	if _, ok := s.groups.Get(group); !ok {
		return nil, apperr.New(http.StatusBadRequest, "group_not_found")
	}
	if in.Quota < 0 || in.Quota > 1<<53 {
		return nil, apperr.Field("quota", "between 0 and 2^53 units")
	}
	in.Email = normEmail(in.Email)
	if in.Email != "" {
		if err := s.emailFree(ctx, in.Email, 0); err != nil {
			return nil, err
		}
	}
	u, err := s.create(ctx, RegisterInput{Username: in.Username, Password: in.Password, Email: in.Email, Language: in.Language},
		role, group, 0, true)
	if err != nil {
		return nil, err
	}
	who := audit.Actor{ID: actor.ID, Name: actor.Username, IP: ip}
	s.audit.Record(ctx, who, "user.create", u.Username, map[string]any{"user_id": u.ID, "role": role, "group": group})
	if in.Quota > 0 {
		reason := "starting balance"
		if in.Reason != nil && *in.Reason != "" {
			reason = *in.Reason
		}
		if err := s.Credit(ctx, u.ID, in.Quota, CreditSource{Kind: model.CreditAdmin, Action: "user.quota", Target: u.Username,
			Actor: who, Note: reason, Detail: map[string]any{"delta": in.Quota, "reason": reason}}); err != nil {
			return nil, fmt.Errorf("starting balance of %s: %w", u.Username, err)
		}
	}
	return s.Get(ctx, u.ID)
}

// Delete closes a user's account for good. The row is kept and anonymised, not removed: its balance, credit
// rows and usage logs stay, so Σ credits − Σ logged cost = balance still holds for it and for the site (a
// removed row would leave credits and costs with no owner; a zeroed balance would be money that vanished without
// a credit row — an admin who wants it gone adjusts the balance first, which is written down). The username
// becomes "#deleted-<id>" (no sign-up can take a '#', so the old name is free again), e-mail, password, second
// factor and linked sign-ins are cleared, every session ends and every key stops at once (the relay admits only
// enabled users). Usage logs keep the name they were written with: they are the financial record, and
// retention removes them with the rest. Nobody deletes themselves or root; an admin deletes only users they
// manage. Audited as user.delete.
func (s *Service) Delete(ctx context.Context, actor *model.User, ip string, id int64) error {
	u, err := s.managed(ctx, actor, id)
	if err != nil {
		return err
	}
	if u.Status == StatusDeleted {
		return apperr.New(http.StatusNotFound, "user_not_found")
	}
	if actor.ID == u.ID {
		return apperr.New(http.StatusForbidden, "cannot_modify_self")
	}
	if u.Role == model.RoleRoot {
		return apperr.New(http.StatusForbidden, "cannot_delete_root")
	}
	name := "#deleted-" + strconv.FormatInt(id, 10)
	err = s.store.Transact(ctx, func(tx *gorm.DB) error {
		res := tx.Model(&model.User{}).Where("id = ? AND status <> ?", id, StatusDeleted).Updates(map[string]any{
			"username": name, "username_lower": name, "email": "", "password_hash": "", "status": StatusDeleted,
			"session_epoch": gorm.Expr("session_epoch + 1"), "totp_secret": "", "totp_enabled": false, "aff_code": nil,
		})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return apperr.New(http.StatusNotFound, "user_not_found")
		}
		if err := tx.Where("user_id = ?", id).Delete(&model.UserIdentity{}).Error; err != nil {
			return err
		}
		return tx.Where("user_id = ?", id).Delete(&model.BackupCode{}).Error
	})
	if err != nil {
		if _, ok := apperr.As(err); ok {
			return err
		}
		return fmt.Errorf("delete user %d: %w", id, err)
	}
	if _, err := s.endSessions(ctx, id, ""); err != nil {
		return fmt.Errorf("delete user %d: end sessions: %w", id, err)
	}
	s.audit.Record(ctx, audit.Actor{ID: actor.ID, Name: actor.Username, IP: ip}, "user.delete", u.Username,
		map[string]any{"user_id": id, "balance": s.View(ctx, u).Quota})
	s.changed(ctx, id)
	return nil
}

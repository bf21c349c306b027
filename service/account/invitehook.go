package account

import (
	"context"

	"tollgate/model"
)

// Invites is what sign-up needs of invites (implemented by service/invite): Inviter resolves the aff_code a
// sign-up carries before the user exists (0 for none; an error refuses the sign-up, nothing created), and
// Welcome runs once the user exists (gives them their own code, and pays the invite rewards).
type Invites interface {
	Inviter(ctx context.Context, code string) (int64, error)
	Welcome(ctx context.Context, u *model.User, ip string) error
}

// SetInvites plugs the invite service in (it is built after accounts, since it credits through them); nil:
// sign-up ignores aff_code.
func (s *Service) SetInvites(inv Invites) { s.invites = inv }

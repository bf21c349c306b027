package model

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Roles.
const (
	RoleUser  = "user"
	RoleAdmin = "admin"
	RoleRoot  = "root"
)

// Statuses shared by users, tokens and channels.
const (
	StatusEnabled      = "enabled"
	StatusDisabled     = "disabled"
	StatusAutoDisabled = "auto_disabled"
)

// User is an account: a reseller's customer, an admin or root.
type User struct {
	ID           int64  `gorm:"primaryKey" json:"id"`
	Username     string `gorm:"type:varchar(32);not null;uniqueIndex" json:"username"`
	Email        string `gorm:"type:varchar(191);not null;default:'';index" json:"email"`
	PasswordHash string `gorm:"type:varchar(100);not null" json:"-"`
	Role         string `gorm:"type:varchar(8);not null;default:'user'" json:"role"`
	Group        string `gorm:"column:user_group;type:varchar(64);not null;default:'default';index" json:"group"`
	// Tier is the user's price tier (its ratio multiplies prices on top of the group's); existing rows get
	// "default" (ratio 1) when the column is added, so nobody's price changes.
	Tier         string `gorm:"column:user_tier;type:varchar(64);not null;default:'default';index" json:"tier"`
	Status       string `gorm:"type:varchar(16);not null;default:'enabled'" json:"status"`
	Quota        int64  `gorm:"not null;default:0" json:"quota"`
	UsedQuota    int64  `gorm:"not null;default:0" json:"used_quota"`
	RequestCount int64  `gorm:"not null;default:0" json:"request_count"`
	SessionEpoch int64  `gorm:"not null;default:0" json:"-"`              // bumped on password change/disable: old JWTs die
	RPM          int    `gorm:"column:rpm;not null;default:0" json:"rpm"` // requests per minute over all the user's keys (0 = none; set by an admin)
	TPM          int64  `gorm:"column:tpm;not null;default:0" json:"tpm"` // tokens per minute over all the user's keys (0 = none; set by an admin)
	// BalanceAlert: e-mail the user once when the balance falls below this many units (0 = off; set on their
	// profile); Language is the language their e-mails are written in ("en" or "zh-CN"; empty = en).
	BalanceAlert int64  `gorm:"not null;default:0" json:"balance_alert"`
	Language     string `gorm:"type:varchar(8);not null;default:''" json:"language"`
	// AffCode is the user's invite code (NULL until made; unique); InviterID who invited them (0 = nobody).
	AffCode   *string   `gorm:"type:varchar(16);uniqueIndex" json:"aff_code,omitempty"`
	InviterID int64     `gorm:"not null;default:0;index" json:"inviter_id,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`

	// UsernameLower is the case-folded name; its unique index makes "Alice" and "alice" one account on both
	// stores (MySQL tables use a binary collation, SQLite compares case-sensitively). Filled by BeforeCreate.
	UsernameLower string `gorm:"type:varchar(64);not null;default:'';uniqueIndex:idx_users_username_lower" json:"-"`

	// TOTPSecret is the two-factor secret sealed with the keyring ("" = none; set but not enabled while the
	// user is enrolling); TOTPLastStep the last time step a code was accepted for (each step is used once).
	TOTPSecret   string `gorm:"column:totp_secret;type:varchar(255);not null;default:''" json:"-"`
	TOTPEnabled  bool   `gorm:"column:totp_enabled;not null;default:false" json:"totp_enabled"`
	TOTPLastStep int64  `gorm:"column:totp_last_step;not null;default:0" json:"-"`

	// Routing is the user's routing preferences from the profile (a key's and a request's override them).
	Routing JSON[RoutePrefs] `gorm:"type:text" json:"routing"`
}

// BeforeCreate fills the case-folded username so every insert path keeps the unique index meaningful.
func (u *User) BeforeCreate(*gorm.DB) error {
	u.UsernameLower = strings.ToLower(u.Username)
	return nil
}

// ManagedBy reports whether an admin actor may act on u (its profile, balance or keys): root acts on
// everyone, anyone on themselves, other admins only on users without admin rights.
func (u *User) ManagedBy(actor *User) bool {
	return !u.IsAdmin() || actor.Role == RoleRoot || actor.ID == u.ID
}

// IsAdmin reports whether the user has admin rights.
func (u *User) IsAdmin() bool { return u.Role == RoleAdmin || u.Role == RoleRoot }

// CreateUser inserts u; ErrDuplicate when the username is taken.
func (s *Store) CreateUser(ctx context.Context, u *User) error {
	return translate(s.DB.WithContext(ctx).Create(u).Error)
}

// UserByID loads one user.
func (s *Store) UserByID(ctx context.Context, id int64) (*User, error) {
	var u User
	if err := s.DB.WithContext(ctx).First(&u, id).Error; err != nil {
		return nil, translate(err)
	}
	return &u, nil
}

// UserByUsername loads one user by name, in any letter case. An exact match wins: rows that differed only in
// case before usernames became case-insensitive keep signing in with their exact name (see backfillUsernameLower).
func (s *Store) UserByUsername(ctx context.Context, name string) (*User, error) {
	var u User
	res := s.DB.WithContext(ctx).Where("username = ? OR username_lower = ?", name, strings.ToLower(name)).
		Order(clause.OrderBy{Expression: clause.Expr{SQL: "CASE WHEN username = ? THEN 0 ELSE 1 END, id", Vars: []any{name}}}).Limit(1).Find(&u)
	if res.Error != nil {
		return nil, translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return nil, ErrNotFound
	}
	return &u, nil
}

// CountUsers returns how many users exist.
func (s *Store) CountUsers(ctx context.Context) (int64, error) {
	var n int64
	err := s.DB.WithContext(ctx).Model(&User{}).Count(&n).Error
	return n, err
}

// UserFilter narrows ListUsers.
type UserFilter struct {
	Query, Role, Status string
}

// ListUsers pages through users, newest first.
func (s *Store) ListUsers(ctx context.Context, f UserFilter, p Page) ([]User, int64, error) {
	q := s.DB.WithContext(ctx).Model(&User{})
	if f.Query != "" {
		like := "%" + escapeLike(f.Query) + "%"
		q = q.Where("username LIKE ? ESCAPE '!' OR email LIKE ? ESCAPE '!'", like, like)
	}
	if f.Role != "" {
		q = q.Where("role = ?", f.Role)
	}
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	} else {
		q = q.Where("status <> ?", "deleted") // deleted accounts only when asked for (status=deleted)
	}
	return newestPage[User](q, p)
}

// UpdateUserFields writes the given columns of one user.
func (s *Store) UpdateUserFields(ctx context.Context, id int64, fields map[string]any) error {
	res := s.DB.WithContext(ctx).Model(&User{}).Where("id = ?", id).Updates(fields)
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// AddUserQuota changes a balance atomically; with floorZero it refuses to go below zero (ErrNotFound then
// means missing user or underflow — the caller checks which).
func (s *Store) AddUserQuota(ctx context.Context, tx *gorm.DB, id, delta int64, floorZero bool) (bool, error) {
	db := s.DB
	if tx != nil {
		db = tx
	}
	q := db.WithContext(ctx).Model(&User{}).Where("id = ?", id)
	if floorZero && delta < 0 {
		q = q.Where("quota >= ?", -delta)
	}
	res := q.UpdateColumn("quota", gorm.Expr("quota + ?", delta))
	return res.RowsAffected == 1, res.Error
}

// AddUserUsage charges a batch's cost and request count to a user's balance (the usage log writer, for every
// user of every batch: one prepared text, like AddTokenUsage).
func (s *Store) AddUserUsage(ctx context.Context, tx *gorm.DB, id, cost, requests int64) error {
	_, err := s.stmts.exec(ctx, tx.WithContext(ctx).Statement.ConnPool,
		"UPDATE users SET quota = quota - ?, used_quota = used_quota + ?, request_count = request_count + ? WHERE id = ?",
		cost, cost, requests, id)
	return err
}

// CountUsersInGroup counts users whose group is name.
func (s *Store) CountUsersInGroup(ctx context.Context, name string) (int64, error) {
	var n int64
	err := s.DB.WithContext(ctx).Model(&User{}).Where("user_group = ?", name).Count(&n).Error
	return n, err
}

func escapeLike(s string) string {
	// '!' as the escape character works the same in MySQL and SQLite (a backslash does not).
	r := strings.NewReplacer(`!`, `!!`, `%`, `!%`, `_`, `!_`)
	return r.Replace(s)
}

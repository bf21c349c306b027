package group

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/shopspring/decimal"

	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/sticky"
)

// Defaults of the failover policy when a group sets none (the sticky defaults are sticky.DefaultTTLs).
const (
	DefaultConsecutiveFailures = 3
	DefaultCooldownS           = 60
)

// Bounds of what a group may hold.
const (
	maxModels   = 1000
	maxRoutes   = 32
	maxChannels = 500
	maxAccess   = 1000
	maxTTL      = 7 * 24 * 3600
)

var routeNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// Input is the editable part of a group; nil fields are left unchanged on update.
type Input struct {
	Name             string                `json:"name"`
	DisplayName      *string               `json:"display_name"`
	Description      *string               `json:"description"`
	Status           *string               `json:"status"`
	Ratio            *string               `json:"ratio"`
	Selectable       *bool                 `json:"selectable"`
	Models           *[]string             `json:"models"`
	Access           *model.GroupAccess    `json:"access"`
	Sticky           *model.StickyPolicy   `json:"sticky"`
	Failover         *model.FailoverPolicy `json:"failover"`
	ReturnToPrimaryS *int                  `json:"return_to_primary_s"`
	Routes           *[]model.Route        `json:"routes"`
}

// apply validates in and writes it onto g; known says whether a channel id exists (nil: not checked).
func apply(g *model.Group, in Input, known func(int64) bool) error {
	if in.DisplayName != nil {
		if len(*in.DisplayName) > 128 {
			return apperr.Field("display_name", "at most 128 characters")
		}
		g.DisplayName = *in.DisplayName
	}
	if in.Description != nil {
		if len(*in.Description) > 255 {
			return apperr.Field("description", "at most 255 characters")
		}
		g.Description = *in.Description
	}
	if in.Status != nil {
		if *in.Status != model.StatusEnabled && *in.Status != model.StatusDisabled {
			return apperr.Field("status", "enabled or disabled")
		}
		g.Status = *in.Status
	}
	if in.Ratio != nil {
		r, err := decimal.NewFromString(*in.Ratio)
		if err != nil || r.IsNegative() || r.GreaterThan(decimal.NewFromInt(1000)) {
			return apperr.Field("ratio", "a decimal between 0 and 1000")
		}
		g.Ratio = r
	}
	if in.Selectable != nil {
		g.Selectable = *in.Selectable
		g.Access.V.All = *in.Selectable
	}
	if in.Models != nil {
		ms, err := names(*in.Models, maxModels, 128, nil, "models")
		if err != nil {
			return err
		}
		g.Models.V = ms
	}
	if in.Access != nil {
		if err := checkAccess(in.Access); err != nil {
			return err
		}
		g.Access.V = *in.Access
		g.Selectable = in.Access.All
	}
	if in.Sticky != nil {
		if err := checkSticky(in.Sticky); err != nil {
			return err
		}
		g.Sticky.V = *in.Sticky
	}
	if in.Failover != nil {
		if err := checkFailover(*in.Failover); err != nil {
			return err
		}
		g.Failover.V = *in.Failover
	}
	if in.ReturnToPrimaryS != nil {
		if *in.ReturnToPrimaryS < 0 || *in.ReturnToPrimaryS > 86400 {
			return apperr.Field("return_to_primary_s", "0 (off) to 86400 seconds")
		}
		g.ReturnToPrimaryS = *in.ReturnToPrimaryS
	}
	if in.Routes != nil {
		rs, err := checkRoutes(*in.Routes, known)
		if err != nil {
			return err
		}
		g.Routes.V = rs
	}
	return nil
}

// names checks a list of short names: at most max entries of at most width bytes, matching re when given,
// no duplicates; empty entries are an error.
func names(in []string, max, width int, re *regexp.Regexp, field string) ([]string, error) {
	if len(in) > max {
		return nil, apperr.Field(field, fmt.Sprintf("at most %d entries", max))
	}
	out := make([]string, 0, len(in))
	for _, n := range in {
		if n == "" || len(n) > width || (re != nil && !re.MatchString(n)) {
			return nil, apperr.Field(field, fmt.Sprintf("%q is not a valid name", n))
		}
		if slices.Contains(out, n) {
			return nil, apperr.Field(field, fmt.Sprintf("%q is listed twice", n))
		}
		out = append(out, n)
	}
	return out, nil
}

func checkAccess(a *model.GroupAccess) error {
	tiers, err := names(a.Tiers, maxAccess, 64, nameRE, "access.tiers")
	if err != nil {
		return err
	}
	a.Tiers = tiers
	if len(a.Users) > maxAccess {
		return apperr.Field("access.users", fmt.Sprintf("at most %d users", maxAccess))
	}
	seen := map[int64]bool{}
	for _, id := range a.Users {
		if id <= 0 || seen[id] {
			return apperr.Field("access.users", "positive user ids, each once")
		}
		seen[id] = true
	}
	return nil
}

func checkSticky(p *model.StickyPolicy) error {
	kinds := make([]string, len(sticky.Kinds))
	for i, k := range sticky.Kinds {
		kinds[i] = string(k)
	}
	for _, l := range p.Levels {
		if !slices.Contains(kinds, l) {
			return apperr.Field("sticky.levels", fmt.Sprintf("%q is not one of %v", l, kinds))
		}
	}
	if _, err := names(p.Levels, len(kinds), 32, nil, "sticky.levels"); err != nil {
		return err
	}
	for k, v := range p.TTLs {
		if !slices.Contains(kinds, k) {
			return apperr.Field("sticky.ttl_s", fmt.Sprintf("%q is not one of %v", k, kinds))
		}
		if v < 0 || v > maxTTL {
			return apperr.Field("sticky.ttl_s", fmt.Sprintf("0 to %d seconds", maxTTL))
		}
	}
	return nil
}

func checkFailover(f model.FailoverPolicy) error {
	switch {
	case f.ConsecutiveFailures < 0 || f.ConsecutiveFailures > 100:
		return apperr.Field("failover.consecutive_failures", "0 (default) to 100")
	case f.CooldownS < 0 || f.CooldownS > 86400:
		return apperr.Field("failover.cooldown_s", "0 (default) to 86400 seconds")
	case f.MaxAttempts < 0 || f.MaxAttempts > 20:
		return apperr.Field("failover.max_attempts", "0 (default) to 20")
	case f.DeadlineS < 0 || f.DeadlineS > 3600:
		return apperr.Field("failover.deadline_s", "0 (default) to 3600 seconds")
	}
	return nil
}

func checkRoutes(in []model.Route, known func(int64) bool) ([]model.Route, error) {
	if len(in) > maxRoutes {
		return nil, apperr.Field("routes", fmt.Sprintf("at most %d routes", maxRoutes))
	}
	out := make([]model.Route, 0, len(in))
	for i, r := range in {
		field := fmt.Sprintf("routes[%d]", i)
		if !routeNameRE.MatchString(r.Name) {
			return nil, apperr.Field(field+".name", "1-64 letters, digits, '_', '.', '-'")
		}
		if slices.ContainsFunc(out, func(o model.Route) bool { return o.Name == r.Name }) {
			return nil, apperr.Field(field+".name", fmt.Sprintf("%q is used twice", r.Name))
		}
		if r.Priority < -1_000_000 || r.Priority > 1_000_000 {
			return nil, apperr.Field(field+".priority", "-1000000 to 1000000")
		}
		if r.Weight < 0 || r.Weight > 10_000 {
			return nil, apperr.Field(field+".weight", "0 to 10000")
		}
		if r.Weight == 0 {
			r.Weight = 1
		}
		if len(r.Channels) == 0 || len(r.Channels) > maxChannels {
			return nil, apperr.Field(field+".channels", fmt.Sprintf("1 to %d channel ids", maxChannels))
		}
		seen := map[int64]bool{}
		for _, id := range r.Channels {
			if id <= 0 || seen[id] {
				return nil, apperr.Field(field+".channels", "positive channel ids, each once")
			}
			if known != nil && !known(id) {
				return nil, apperr.Field(field+".channels", fmt.Sprintf("channel %d does not exist", id))
			}
			seen[id] = true
		}
		r.Channels = slices.Clone(r.Channels)
		out = append(out, r)
	}
	return out, nil
}

package routing

import (
	"encoding/json"
	"strconv"
	"strings"

	"tollgate/model"
	"tollgate/service/apperr"
)

// Capabilities a preference may require.
var Capabilities = []string{"streaming", "tools", "vision"}

// Limits on what a preference may carry (a header is hostile input like any other).
const (
	maxPrefItems  = 16
	maxPrefHeader = 1024
)

// ParseHeader reads an X-Tollgate-Route value: "strategy=cost; avoid=tag:x,channel:3; max_price=5". Keys:
// strategy, prefer, avoid, max_price, min_success, max_p95_ms, require (lists comma-separated). Errors name
// the field.
func ParseHeader(v string) (model.RoutePrefs, error) {
	var p model.RoutePrefs
	if len(v) > maxPrefHeader {
		return p, apperr.Field("X-Tollgate-Route", "at most 1024 bytes")
	}
	seen := map[string]bool{}
	for _, part := range strings.Split(v, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, val, ok := strings.Cut(part, "=")
		k, val = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(val)
		if !ok || k == "" {
			return p, apperr.Field("X-Tollgate-Route", "key=value pairs separated by ';'")
		}
		if seen[k] {
			return p, apperr.Field(k, "given twice")
		}
		seen[k] = true
		list := func() []string {
			var out []string
			for _, x := range strings.Split(val, ",") {
				if x = strings.TrimSpace(x); x != "" {
					out = append(out, x)
				}
			}
			return out
		}
		num := func() (float64, error) {
			f, err := strconv.ParseFloat(val, 64)
			if err != nil {
				return 0, apperr.Field(k, "a number")
			}
			return f, nil
		}
		var err error
		switch k {
		case "strategy":
			p.Strategy = val
		case "prefer":
			p.Prefer = list()
		case "avoid":
			p.Avoid = list()
		case "require":
			p.Require = list()
		case "max_price":
			p.MaxPrice, err = num()
		case "min_success":
			p.MinSuccess, err = num()
		case "max_p95_ms":
			var f float64
			if f, err = num(); err == nil {
				if f != float64(int(f)) {
					err = apperr.Field(k, "whole milliseconds")
				}
				p.MaxP95Ms = int(f)
			}
		default:
			return p, apperr.Field(k, "unknown routing preference")
		}
		if err != nil {
			return p, err
		}
	}
	return p, Check(p)
}

// ParseBody reads the body field tollgate.route: a header-style string or an object like the key's routing.
func ParseBody(raw []byte) (model.RoutePrefs, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return ParseHeader(s)
	}
	var p model.RoutePrefs
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, apperr.Field("tollgate.route", "a string like the X-Tollgate-Route header, or an object of strategy, prefer, avoid, max_price, min_success, max_p95_ms, require")
	}
	return p, Check(p)
}

// Check validates preferences; errors name the field.
func Check(p model.RoutePrefs) error {
	if p.Strategy != "" && !knownStrategy(p.Strategy) {
		return apperr.Field("strategy", "one of priority, performance, cost, balanced, round_robin, least_busy")
	}
	for field, xs := range map[string][]string{"prefer": p.Prefer, "avoid": p.Avoid} {
		if len(xs) > maxPrefItems {
			return apperr.Field(field, "at most 16 entries")
		}
		for _, x := range xs {
			if _, _, ok := parseTarget(x); !ok {
				return apperr.Field(field, "entries are channel:<id> or tag:<tag>")
			}
		}
	}
	if len(p.Require) > len(Capabilities) {
		return apperr.Field("require", "streaming, tools, vision")
	}
	for _, x := range p.Require {
		ok := false
		for _, c := range Capabilities {
			ok = ok || c == x
		}
		if !ok {
			return apperr.Field("require", "streaming, tools, vision")
		}
	}
	if p.MaxPrice < 0 || p.MaxPrice > 1e6 || p.MaxPrice != p.MaxPrice {
		return apperr.Field("max_price", "0 … 1000000 USD per 1M tokens")
	}
	if p.MinSuccess < 0 || p.MinSuccess > 1 || p.MinSuccess != p.MinSuccess {
		return apperr.Field("min_success", "0 … 1")
	}
	if p.MaxP95Ms < 0 || p.MaxP95Ms > 3600000 {
		return apperr.Field("max_p95_ms", "0 … 3600000")
	}
	return nil
}

// parseTarget splits "channel:<id>" or "tag:<tag>".
func parseTarget(x string) (kind, val string, ok bool) {
	kind, val, ok = strings.Cut(x, ":")
	if !ok || val == "" || len(val) > 64 {
		return "", "", false
	}
	switch kind {
	case "channel":
		if id, err := strconv.ParseInt(val, 10, 64); err != nil || id <= 0 {
			return "", "", false
		}
	case "tag":
	default:
		return "", "", false
	}
	return kind, val, true
}

// Merge lays the levels over each other in order (profile, key, request): each later level's fields that are
// set replace the earlier ones.
func Merge(levels ...model.RoutePrefs) model.RoutePrefs {
	var out model.RoutePrefs
	for _, l := range levels {
		if l.Strategy != "" {
			out.Strategy = l.Strategy
		}
		if l.Prefer != nil {
			out.Prefer = l.Prefer
		}
		if l.Avoid != nil {
			out.Avoid = l.Avoid
		}
		if l.Require != nil {
			out.Require = l.Require
		}
		if l.MaxPrice > 0 {
			out.MaxPrice = l.MaxPrice
		}
		if l.MinSuccess > 0 {
			out.MinSuccess = l.MinSuccess
		}
		if l.MaxP95Ms > 0 {
			out.MaxP95Ms = l.MaxP95Ms
		}
	}
	return out
}

package account

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"tollgate/model"
	"tollgate/service/apperr"
	"tollgate/service/audit"
)

// A user's signed-in sessions. A session is a refresh-token family (one sign-in; each refresh rotates the
// token within it), so the list shows one row per live family: its id is the live row's, created_at the
// sign-in, last_seen the last sign-in or refresh (the console refreshes every AccessTTL while it is open).
// Ending one revokes the family in SQL and its access JWTs in the cache (endFamily), so it stops on every node
// at once.

type uaKey struct{}

// WithUserAgent returns ctx carrying the client's User-Agent, which a session opened under it records.
func WithUserAgent(ctx context.Context, ua string) context.Context {
	return context.WithValue(ctx, uaKey{}, ua)
}

func userAgentOf(ctx context.Context) string {
	ua, _ := ctx.Value(uaKey{}).(string)
	if len(ua) > 255 {
		ua = ua[:255]
	}
	return strings.ToValidUTF8(ua, "")
}

// SessionView is one signed-in session as GET /api/user/sessions shows it.
type SessionView struct {
	ID        int64     `json:"id"`
	Device    string    `json:"device"`
	UserAgent string    `json:"user_agent"`
	IP        string    `json:"ip"`
	CreatedAt time.Time `json:"created_at"`
	LastSeen  time.Time `json:"last_seen"`
	Current   bool      `json:"current"`
}

// Sessions lists a user's live sessions; the one access (the caller's JWT, may be "") belongs to is current.
func (s *Service) Sessions(ctx context.Context, userID int64, access string) ([]SessionView, error) {
	rows, err := s.store.LiveSessions(ctx, userID, s.opt.Now())
	if err != nil {
		return nil, err
	}
	cur := s.familyOf(access)
	out := make([]SessionView, 0, len(rows))
	for _, r := range rows {
		out = append(out, SessionView{ID: r.ID, Device: Device(r.UserAgent), UserAgent: r.UserAgent, IP: r.IP,
			CreatedAt: r.StartedAt, LastSeen: r.CreatedAt, Current: cur != "" && r.Family == cur})
	}
	return out, nil
}

func (s *Service) familyOf(access string) string {
	if access == "" {
		return ""
	}
	c, err := s.parse(access)
	if err != nil {
		return ""
	}
	return c.Sid
}

// EndSession ends one of the user's sessions (by the id the list shows; a row rotated since still names its
// family).
func (s *Service) EndSession(ctx context.Context, userID, id int64, ip string) error {
	sess, err := s.store.SessionOf(ctx, userID, id)
	if errors.Is(err, model.ErrNotFound) {
		return apperr.New(http.StatusNotFound, "session_not_found")
	} else if err != nil {
		return err
	}
	if _, err := s.endFamily(ctx, userID, sess.Family); err != nil {
		return err
	}
	s.audit.Record(ctx, audit.Actor{ID: userID, IP: ip}, "user.session_end", strconv.FormatInt(userID, 10),
		map[string]any{"session": id})
	return nil
}

// EndOtherSessions ends every session of the user but the one access belongs to, and says how many ended.
func (s *Service) EndOtherSessions(ctx context.Context, userID int64, access, ip string) (int, error) {
	keep := s.familyOf(access)
	n, err := s.endSessions(ctx, userID, keep)
	if err != nil {
		return 0, err
	}
	s.audit.Record(ctx, audit.Actor{ID: userID, IP: ip}, "user.sessions_end_others", strconv.FormatInt(userID, 10),
		map[string]any{"ended": n})
	return n, nil
}

// endSessions ends every live family of the user except keep ("" = none kept).
func (s *Service) endSessions(ctx context.Context, userID int64, keep string) (int, error) {
	rows, err := s.store.LiveSessions(ctx, userID, s.opt.Now())
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range rows {
		if keep != "" && r.Family == keep {
			continue
		}
		if _, err := s.endFamily(ctx, userID, r.Family); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// AdminSessions lists a user's sessions for an admin allowed to manage them.
func (s *Service) AdminSessions(ctx context.Context, actor *model.User, id int64) ([]SessionView, error) {
	if _, err := s.managed(ctx, actor, id); err != nil {
		return nil, err
	}
	return s.Sessions(ctx, id, "")
}

// AdminEndSessions ends every session of a user (an admin's action, audited) and says how many ended.
func (s *Service) AdminEndSessions(ctx context.Context, actor *model.User, ip string, id int64) (int, error) {
	u, err := s.managed(ctx, actor, id)
	if err != nil {
		return 0, err
	}
	n, err := s.endSessions(ctx, id, "")
	if err != nil {
		return 0, err
	}
	s.audit.Record(ctx, audit.Actor{ID: actor.ID, Name: actor.Username, IP: ip}, "user.sessions_end", u.Username,
		map[string]any{"user_id": id, "ended": n})
	return n, nil
}

func (s *Service) managed(ctx context.Context, actor *model.User, id int64) (*model.User, error) {
	u, err := s.store.UserByID(ctx, id)
	if errors.Is(err, model.ErrNotFound) {
		return nil, apperr.New(http.StatusNotFound, "user_not_found")
	} else if err != nil {
		return nil, err
	}
	if !u.ManagedBy(actor) {
		return nil, apperr.ErrForbidden
	}
	return u, nil
}

// Device names a browser and system from a User-Agent ("Chrome on macOS"); simple substring rules, enough
// for a person to recognise their own sessions.
func Device(ua string) string {
	if ua == "" {
		return "Unknown"
	}
	browser := "Browser"
	for _, b := range []struct{ needle, name string }{
		{"Edg/", "Edge"}, {"OPR/", "Opera"}, {"Firefox/", "Firefox"}, {"Chrome/", "Chrome"}, {"Safari/", "Safari"},
		{"curl/", "curl"}, {"Go-http-client", "Go client"}, {"python", "Python"},
	} {
		if strings.Contains(ua, b.needle) {
			browser = b.name
			break
		}
	}
	system := ""
	for _, o := range []struct{ needle, name string }{
		{"Android", "Android"}, {"iPhone", "iOS"}, {"iPad", "iPadOS"}, {"Windows", "Windows"},
		{"Mac OS X", "macOS"}, {"CrOS", "ChromeOS"}, {"Linux", "Linux"},
	} {
		if strings.Contains(ua, o.needle) {
			system = o.name
			break
		}
	}
	if system == "" {
		return browser
	}
	return browser + " on " + system
}

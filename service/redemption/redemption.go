// Package redemption is the book of redemption codes: an admin creates batches of codes worth a quota each
// (shown in clear once, and again only in the batch's CSV export), lists, disables and deletes them; a user
// redeems a code once, crediting the balance through account.Service.Credit, with guesses limited per user and
// per client network.
package redemption

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"tollgate/model"
	"tollgate/service/account"
	"tollgate/service/apperr"
	"tollgate/service/audit"
	"tollgate/service/cache"
	"tollgate/service/pricing"
	"tollgate/service/secret"
	"tollgate/service/token"
)

// MaxBatch is the most codes one batch may hold.
const MaxBatch = 10_000

// Service is the redemption-code book.
type Service struct {
	store    *model.Store
	keys     *secret.Keyring
	accounts *account.Service
	audit    *audit.Log
	guesses  guesses
	now      func() time.Time
}

// New builds the service; now nil means time.Now.
func New(store *model.Store, c cache.Cache, keys *secret.Keyring, accounts *account.Service, a *audit.Log, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{store: store, keys: keys, accounts: accounts, audit: a, guesses: guesses{cache: c, now: now}, now: now}
}

// View is a code as admins see it: never the code itself, its state derived (expired included).
type View struct {
	model.RedemptionRow
	Status string `json:"status"`
}

func (s *Service) view(r model.RedemptionRow, now time.Time) View {
	return View{RedemptionRow: r, Status: r.StateAt(now)}
}

// BatchInput is an admin's request for a batch of codes.
type BatchInput struct {
	Name      string             `json:"name"`
	Count     int                `json:"count"`
	Quota     int64              `json:"quota"`
	ExpiresAt token.OptionalTime `json:"expires_at"`
}

// Batch is a new batch with its codes in clear: the only answer that carries them besides the CSV export.
type Batch struct {
	BatchID   string     `json:"batch"`
	Name      string     `json:"name"`
	Count     int        `json:"count"`
	Quota     int64      `json:"quota"`
	ExpiresAt *time.Time `json:"expires_at"`
	Codes     []string   `json:"codes"`
}

// CreateBatch draws count codes worth quota units each and stores them hashed, sealed and hinted, in one
// transaction.
func (s *Service) CreateBatch(ctx context.Context, actor audit.Actor, in BatchInput) (*Batch, error) {
	name := strings.TrimSpace(in.Name)
	if name == "" || utf8.RuneCountInString(name) > 64 || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return nil, apperr.Field("name", "1-64 characters without control characters")
	}
	if in.Count < 1 || in.Count > MaxBatch {
		return nil, apperr.Field("count", fmt.Sprintf("must be between 1 and %d", MaxBatch))
	}
	if in.Quota < 1 || in.Quota > pricing.MaxCost {
		return nil, apperr.Field("quota", fmt.Sprintf("must be between 1 and %d units", int64(pricing.MaxCost)))
	}
	now := s.now().UTC()
	var expires *time.Time
	if e := in.ExpiresAt.V; e != nil {
		if !e.After(now) {
			return nil, apperr.Field("expires_at", "must be in the future")
		}
		u := e.UTC()
		expires = &u
	}
	batchID, err := secret.RandomBase62(12)
	if err != nil {
		return nil, err
	}
	out := &Batch{BatchID: batchID, Name: name, Count: in.Count, Quota: in.Quota, ExpiresAt: expires, Codes: make([]string, in.Count)}
	rows := make([]model.Redemption, in.Count)
	for i := range rows {
		code, err := newCode()
		if err != nil {
			return nil, err
		}
		sealed, err := s.keys.Encrypt(code)
		if err != nil {
			return nil, err
		}
		out.Codes[i] = code
		rows[i] = model.Redemption{BatchID: batchID, BatchName: name, CodeHash: s.keys.Hash(code), CodeCipher: sealed,
			Hint: hint(code), Quota: in.Quota, Status: model.RedemptionUnused, ExpiresAt: expires, CreatedBy: actor.ID, CreatedAt: now}
	}
	if err := s.store.CreateRedemptions(ctx, rows); err != nil {
		return nil, fmt.Errorf("create redemption batch: %w", err)
	}
	s.audit.Record(ctx, actor, "redemption.create", "batch "+batchID, map[string]any{
		"batch": batchID, "name": name, "count": in.Count, "quota": in.Quota, "expires_at": expires})
	return out, nil
}

var batchRE = regexp.MustCompile(`^[0-9A-Za-z]{1,32}$`)

// Filter narrows List: a batch id and a state (unused, used, expired, disabled), both optional.
type Filter struct {
	Batch  string
	Status string
}

func (s *Service) filter(f Filter) (model.RedemptionFilter, error) {
	if f.Batch != "" && !batchRE.MatchString(f.Batch) {
		return model.RedemptionFilter{}, apperr.Field("batch", "not a batch id")
	}
	switch f.Status {
	case "", model.RedemptionUnused, model.RedemptionUsed, model.RedemptionExpired, model.RedemptionDisabled:
	default:
		return model.RedemptionFilter{}, apperr.Field("status", `must be "unused", "used", "expired" or "disabled"`)
	}
	return model.RedemptionFilter{BatchID: f.Batch, Status: f.Status, Now: s.now().UTC()}, nil
}

// List pages through codes, newest first. A batch that does not exist lists nothing.
func (s *Service) List(ctx context.Context, f Filter, p model.Page) ([]View, int64, error) {
	mf, err := s.filter(f)
	if err != nil {
		return nil, 0, err
	}
	rows, total, err := s.store.ListRedemptions(ctx, mf, p)
	if err != nil {
		return nil, 0, err
	}
	out := make([]View, len(rows))
	for i, r := range rows {
		out[i] = s.view(r, mf.Now)
	}
	return out, total, nil
}

// Batches pages through batches with their counts, newest first.
func (s *Service) Batches(ctx context.Context, p model.Page) ([]model.RedemptionBatch, int64, error) {
	return s.store.ListRedemptionBatches(ctx, s.now().UTC(), p)
}

// ExportRow is one code of a batch in clear, for the CSV export.
type ExportRow struct {
	View
	Code string
}

// Export returns every code of a batch in clear, in creation order (404 for a batch with no codes). It is
// audited: it shows codes that are worth money.
func (s *Service) Export(ctx context.Context, actor audit.Actor, batch string) ([]ExportRow, error) {
	if batch == "" {
		return nil, apperr.Field("batch", "required")
	}
	mf, err := s.filter(Filter{Batch: batch})
	if err != nil {
		return nil, err
	}
	rows, err := s.store.BatchRedemptions(ctx, batch)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, apperr.New(http.StatusNotFound, "redemption_batch_not_found")
	}
	out := make([]ExportRow, len(rows))
	for i, r := range rows {
		code, err := s.keys.Decrypt(r.CodeCipher)
		if err != nil {
			return nil, fmt.Errorf("open redemption code %d: %w", r.ID, err)
		}
		out[i] = ExportRow{View: s.view(r, mf.Now), Code: code}
	}
	s.audit.Record(ctx, actor, "redemption.export", "batch "+batch, map[string]any{"batch": batch, "count": len(out)})
	return out, nil
}

// SetStatus disables a code that was not used, or enables a disabled one again (status "disabled" or
// "unused"); a used code is 409 redemption_used.
func (s *Service) SetStatus(ctx context.Context, actor audit.Actor, id int64, status string) (*View, error) {
	action := map[string]string{model.RedemptionDisabled: "redemption.disable", model.RedemptionUnused: "redemption.enable"}[status]
	if action == "" {
		return nil, apperr.Field("status", `must be "disabled" or "unused"`)
	}
	r, err := s.settled(ctx, id)
	if err != nil {
		return nil, err
	}
	for {
		changed, err := s.store.SetRedemptionStatus(ctx, id, status)
		if err != nil {
			return nil, err
		}
		if changed {
			s.audit.Record(ctx, actor, action, "redemption "+r.Hint, map[string]any{"id": id, "batch": r.BatchID, "status": status})
			r.Status = status
			break
		}
		// Nothing changed: the code was redeemed or deleted meanwhile (settled answers those), already has this
		// status, or another admin flipped it since it was read (then try again).
		if r, err = s.settled(ctx, id); err != nil {
			return nil, err
		}
		if r.Status == status {
			break
		}
	}
	v := s.view(model.RedemptionRow{Redemption: *r}, s.now())
	return &v, nil
}

// Delete removes a code that was never used (unused or disabled); a used code is 409 redemption_used.
func (s *Service) Delete(ctx context.Context, actor audit.Actor, id int64) error {
	r, err := s.settled(ctx, id)
	if err != nil {
		return err
	}
	deleted, err := s.store.DeleteRedemption(ctx, id)
	if err != nil {
		return err
	}
	if !deleted { // redeemed or deleted since it was read
		if _, err := s.settled(ctx, id); err != nil {
			return err
		}
		return apperr.New(http.StatusNotFound, "redemption_not_found")
	}
	s.audit.Record(ctx, actor, "redemption.delete", "redemption "+r.Hint, map[string]any{"id": id, "batch": r.BatchID, "status": r.Status})
	return nil
}

// settled loads a code an admin acts on: 404 when missing, 409 redemption_used once it was redeemed.
func (s *Service) settled(ctx context.Context, id int64) (*model.Redemption, error) {
	r, err := s.store.RedemptionByID(ctx, id)
	if errors.Is(err, model.ErrNotFound) {
		return nil, apperr.New(http.StatusNotFound, "redemption_not_found")
	} else if err != nil {
		return nil, err
	}
	if r.Status == model.RedemptionUsed {
		return nil, apperr.New(http.StatusConflict, "redemption_used")
	}
	return r, nil
}

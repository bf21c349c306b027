package channel

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"tollgate/service/apperr"
	"tollgate/service/secret"
)

// sealedPrefix marks a sealed header_override value in SQL. Keys were sealed from the first release and need
// no mark; header values were stored in clear before, so a value without the mark is a clear one from then.
const sealedPrefix = "tgs1:"

// sealHeaders seals every value of a clear header map for storage.
func (s *Service) sealHeaders(clear map[string]string) (map[string]string, error) {
	if len(clear) == 0 {
		return map[string]string{}, nil
	}
	out := make(map[string]string, len(clear))
	for k, v := range clear {
		enc, err := s.keys.Encrypt(v)
		if err != nil {
			return nil, err
		}
		out[k] = sealedPrefix + enc
	}
	return out, nil
}

// openHeaders returns the clear header map of a stored one. A value that no longer decrypts (SECRET_KEY
// changed) is dropped with an error log, like a channel key; an unmarked value is a clear one from before
// sealing and is used as it is.
func (s *Service) openHeaders(id int64, stored map[string]string) map[string]string {
	if len(stored) == 0 {
		return nil
	}
	out := make(map[string]string, len(stored))
	for k, v := range stored {
		sealed, ok := strings.CutPrefix(v, sealedPrefix)
		if !ok {
			out[k] = v
			continue
		}
		plain, err := s.keys.Decrypt(sealed)
		if err != nil {
			slog.Error("channel header_override value does not decrypt (SECRET_KEY changed?)", "channel", id, "header", k)
			continue
		}
		out[k] = plain
	}
	return out
}

// maskHeaders masks every value the way keys are masked: the values are often credentials.
func maskHeaders(clear map[string]string) map[string]string {
	out := make(map[string]string, len(clear))
	for k, v := range clear {
		out[k] = secret.Mask(v)
	}
	return out
}

// unmaskHeaders replaces a value sent back as its mask with the stored clear value of the same header (names
// compared case-insensitively, as HTTP does), so an admin form that round-trips the masked view changes
// nothing. A masked value that matches no stored value is refused: storing the mask would send "****"
// upstream.
func unmaskHeaders(in, old map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(in))
	for k, v := range in {
		if strings.ContainsAny(v, "\r\n") {
			return nil, apperr.Field("header_override", "header values cannot contain line breaks")
		}
		out[k] = v
		if !strings.Contains(v, "****") {
			continue
		}
		prev, ok := old[k]
		if !ok {
			for ok2, ov := range old {
				if strings.EqualFold(ok2, k) {
					prev, ok = ov, true
					break
				}
			}
		}
		if !ok || secret.Mask(prev) != v {
			return nil, apperr.Field("header_override", fmt.Sprintf("the masked value of %s does not match its stored value", k))
		}
		out[k] = prev
	}
	return out, nil
}

// SealHeaderOverrides seals header_override values still stored in clear (rows from before sealing). It runs
// at start before Load; every node may run it at once (each swap checks the row is unchanged). It returns how
// many channels it sealed.
func (s *Service) SealHeaderOverrides(ctx context.Context) (int, error) {
	rows, err := s.store.AllChannels(ctx)
	if err != nil {
		return 0, fmt.Errorf("seal header overrides: %w", err)
	}
	n := 0
	for _, r := range rows {
		stored := r.HeadersSealed.V
		clear := map[string]string{}
		for k, v := range stored {
			if !strings.HasPrefix(v, sealedPrefix) {
				clear[k] = v
			}
		}
		if len(clear) == 0 {
			continue
		}
		sealed, err := s.sealHeaders(clear)
		if err != nil {
			return n, err
		}
		next := make(map[string]string, len(stored))
		for k, v := range stored {
			next[k] = v
		}
		for k, v := range sealed {
			next[k] = v
		}
		ok, err := s.store.ReplaceChannelHeaders(ctx, r.ID, stored, next)
		if err != nil {
			return n, fmt.Errorf("seal header overrides of channel %d: %w", r.ID, err)
		}
		if !ok {
			slog.Warn("channel changed while its header_override was being sealed; sealed on its next save", "channel", r.ID)
			continue
		}
		n++
	}
	if n > 0 {
		slog.Info("sealed header_override values stored in clear", "channels", n)
	}
	return n, nil
}

package setting

import "tollgate/service/apperr"

// MaxUploadMB bounds the upload limits (4 GiB).
const MaxUploadMB = 4096

// Uploads are the size limits of multipart relay uploads, in MiB: image edits and variations (OpenAI takes
// up to 50 MB), audio transcriptions and translations (OpenAI: 25 MB). Uploads are spooled to disk, never
// held in memory, so a larger limit costs disk, not RAM.
type Uploads struct {
	ImageMB int `json:"image_mb"`
	AudioMB int `json:"audio_mb"`
}

// validateUploads checks the upload limits.
func validateUploads(s *Settings) error {
	if s.Uploads.ImageMB < 1 || s.Uploads.ImageMB > MaxUploadMB {
		return apperr.Field("uploads.image_mb", "MiB between 1 and 4096")
	}
	if s.Uploads.AudioMB < 1 || s.Uploads.AudioMB > MaxUploadMB {
		return apperr.Field("uploads.audio_mb", "MiB between 1 and 4096")
	}
	return nil
}

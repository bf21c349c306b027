package relay

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"strings"

	"github.com/gin-gonic/gin"

	"tollgate/relay/adaptor"
	"tollgate/relay/audiodur"
)

// maxUploadField bounds each small form field the gateway reads (model, n, size, quality, response_format).
const maxUploadField = 1 << 10

// uploadFields are the form fields the gateway reads; the rest pass through untouched.
var uploadFields = map[string]bool{"model": true, "n": true, "size": true, "quality": true, "response_format": true}

// upload is a multipart request spooled to a temporary file as it arrives, so it is never held in memory
// and every attempt (a retry on another channel too) can send it again. The spool holds every part but
// model, re-framed under a boundary of ours with each part's own headers and bytes unchanged; send puts the
// (mapped) model part in front.
type upload struct {
	spool    *os.File
	size     int64
	boundary string
	fields   map[string]string
	files    int
	audio    int64 // ms of audio read from the first file's headers (0: not readable)
}

// close removes the spool.
func (u *upload) close() {
	if u != nil && u.spool != nil {
		_ = u.spool.Close()
		_ = os.Remove(u.spool.Name())
	}
}

// body is what one attempt sends: the model part, then the spool, read from its start.
func (u *upload) body(model string) (io.Reader, int64, string) {
	head := "--" + u.boundary + "\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\n" + model + "\r\n"
	return io.MultiReader(strings.NewReader(head), io.NewSectionReader(u.spool, 0, u.size)),
		int64(len(head)) + u.size, "multipart/form-data; boundary=" + u.boundary
}

// uploadLimit is the size cap of an endpoint's uploads, from the settings.
func (r *Relay) uploadLimit(ep adaptor.Endpoint) int64 {
	up := r.Settings.Get().Uploads
	if adaptor.KindOf(ep) == adaptor.KindAudioIn {
		return int64(up.AudioMB) << 20
	}
	return int64(up.ImageMB) << 20
}

// readUpload spools a multipart body: each part's bytes go to disk as they arrive (through audiodur for the
// first file of an audio upload), only the small fields the gateway reads are kept. A body over the
// endpoint's limit is a 413; anything that is not one well-formed multipart/form-data body, a field the
// gateway reads sent twice or too long, or no file, a 400.
func (r *Relay) readUpload(c *gin.Context, ep adaptor.Endpoint) (*upload, *relayError) {
	limit := r.uploadLimit(ep)
	tooLarge := newErr(http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("%d MiB", limit>>20))
	if c.Request.ContentLength > limit {
		return nil, tooLarge
	}
	mt, params, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, newErr(http.StatusBadRequest, "upload_invalid", "the Content-Type is not multipart/form-data with a boundary")
	}
	f, err := os.CreateTemp(r.UploadDir, "tollgate-upload-*")
	if err != nil {
		return nil, newErr(http.StatusServiceUnavailable, "upload_invalid", "no room to receive the upload")
	}
	u := &upload{spool: f, fields: map[string]string{}}
	w := multipart.NewWriter(f)
	u.boundary = w.Boundary()
	mr := multipart.NewReader(http.MaxBytesReader(c.Writer, c.Request.Body, limit), params["boundary"])
	fail := func(rerr *relayError) (*upload, *relayError) {
		u.close()
		return nil, rerr
	}
	var mbe *http.MaxBytesError
	for {
		p, err := mr.NextRawPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if errors.As(err, &mbe) {
				return fail(tooLarge)
			}
			return fail(newErr(http.StatusBadRequest, "upload_invalid", "malformed multipart body"))
		}
		name := p.FormName()
		if name == "" {
			return fail(newErr(http.StatusBadRequest, "upload_invalid", "a part without a form-data name"))
		}
		// A field the gateway reads is read wherever it comes, a file part too: an upstream must not see a
		// second model (or size) the gateway did not bill.
		if key := strings.ToLower(name); uploadFields[key] {
			if _, dup := u.fields[key]; dup {
				return fail(newErr(http.StatusBadRequest, "duplicate_key", key))
			}
			v, err := io.ReadAll(io.LimitReader(p, maxUploadField+1))
			if errors.As(err, &mbe) {
				return fail(tooLarge)
			}
			if err != nil || len(v) > maxUploadField || bytes.ContainsAny(v, "\r\n") {
				return fail(newErr(http.StatusBadRequest, "validation_failed", key, "at most 1 KiB on one line"))
			}
			u.fields[key] = string(v)
			if key == "model" {
				continue // send writes the (mapped) model in front
			}
			if err := copyPart(w, p, bytes.NewReader(v)); err != nil {
				return fail(newErr(http.StatusServiceUnavailable, "upload_invalid", "no room to receive the upload"))
			}
			continue
		}
		var src io.Reader = p
		if p.FileName() != "" {
			u.files++
		}
		pw, err := w.CreatePart(p.Header)
		if err != nil {
			return fail(newErr(http.StatusServiceUnavailable, "upload_invalid", "no room to receive the upload"))
		}
		if p.FileName() != "" && u.files == 1 && adaptor.KindOf(ep) == adaptor.KindAudioIn {
			// The duration comes from the headers as the bytes stream past on their way to the spool.
			if d, _, ok := audiodur.Read(io.TeeReader(src, pw)); ok {
				u.audio = d.Milliseconds()
			}
		}
		if _, err := io.Copy(pw, src); err != nil {
			if errors.As(err, &mbe) {
				return fail(tooLarge)
			}
			return fail(newErr(http.StatusBadRequest, "upload_invalid", "the body ended inside a part"))
		}
	}
	if err := w.Close(); err != nil {
		return fail(newErr(http.StatusServiceUnavailable, "upload_invalid", "no room to receive the upload"))
	}
	if u.files == 0 {
		return fail(newErr(http.StatusBadRequest, "validation_failed", "file", "an upload needs a file part"))
	}
	st, err := f.Stat()
	if err != nil {
		return fail(newErr(http.StatusServiceUnavailable, "upload_invalid", "no room to receive the upload"))
	}
	u.size = st.Size()
	return u, nil
}

// copyPart writes one part with its own headers and the bytes of src.
func copyPart(w *multipart.Writer, p *multipart.Part, src io.Reader) error {
	pw, err := w.CreatePart(p.Header)
	if err != nil {
		return err
	}
	_, err = io.Copy(pw, src)
	return err
}

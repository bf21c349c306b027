package usagelog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"tollgate/model"
)

// ErrSpoolFull says the spool holds its byte bound: the writer keeps the batch in memory and retries.
var ErrSpoolFull = errors.New("usage log spool is full")

// Spool keeps log batches on disk while the log database is down: one file per batch (newline-delimited JSON,
// one row a line), named by a growing sequence number so they drain in the order they were written. A batch
// file is written to a temporary name, fsynced, renamed and the directory fsynced, so after a crash a batch is
// either whole or absent; a drained file is removed only after its rows are committed, and rows are inserted
// by request id (INSERT IGNORE), so a file drained twice writes nothing twice.
type Spool struct {
	dir string
	max int64

	mu    sync.Mutex
	files []spoolFile // oldest first
	bytes int64
	seq   uint64
}

type spoolFile struct {
	name string
	size int64
}

const spoolExt = ".ndjson"

// OpenSpool opens (creating, 0700) the spool directory, bounded to maxBytes of batch files.
func OpenSpool(dir string, maxBytes int64) (*Spool, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("spool dir: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("spool dir: %w", err)
	}
	s := &Spool{dir: dir, max: maxBytes}
	for _, e := range entries {
		name := e.Name()
		if strings.HasSuffix(name, ".tmp") {
			_ = os.Remove(filepath.Join(dir, name)) // a batch whose write never finished; its writer retried it
			continue
		}
		if !strings.HasSuffix(name, spoolExt) {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSuffix(name, spoolExt), 10, 64)
		if err != nil {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return nil, fmt.Errorf("spool file %s: %w", name, err)
		}
		s.files = append(s.files, spoolFile{name: name, size: info.Size()})
		s.bytes += info.Size()
		s.seq = max(s.seq, n)
	}
	sort.Slice(s.files, func(i, j int) bool { return s.files[i].name < s.files[j].name })
	return s, nil
}

// Len is how many batches wait on disk.
func (s *Spool) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.files)
}

// Bytes is how many bytes the waiting batches take.
func (s *Spool) Bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes
}

// Append writes one batch durably (fsync of the file and the directory) or refuses it with ErrSpoolFull.
func (s *Spool) Append(logs []model.UsageLog) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i := range logs {
		if err := enc.Encode(&logs[i]); err != nil {
			return fmt.Errorf("encode spooled log: %w", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bytes+int64(buf.Len()) > s.max {
		return ErrSpoolFull
	}
	s.seq++
	name := fmt.Sprintf("%020d%s", s.seq, spoolExt)
	tmp := filepath.Join(s.dir, name+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	_, werr := f.Write(buf.Bytes())
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("spool write: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(s.dir, name)); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("spool rename: %w", err)
	}
	if d, err := os.Open(s.dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	s.files = append(s.files, spoolFile{name: name, size: int64(buf.Len())})
	s.bytes += int64(buf.Len())
	return nil
}

// Oldest reads the oldest batch; ok is false when the spool is empty. A file that cannot be read as rows is
// moved aside (name.bad, logged) so one damaged file cannot stop the drain.
func (s *Spool) Oldest() (name string, logs []model.UsageLog, ok bool, err error) {
	s.mu.Lock()
	if len(s.files) == 0 {
		s.mu.Unlock()
		return "", nil, false, nil
	}
	name = s.files[0].name
	s.mu.Unlock()
	b, err := os.ReadFile(filepath.Join(s.dir, name))
	if err != nil {
		return name, nil, false, fmt.Errorf("spool read %s: %w", name, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var l model.UsageLog
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			slog.Error("usage log spool: damaged batch file moved aside", "file", name, "err", err)
			_ = os.Rename(filepath.Join(s.dir, name), filepath.Join(s.dir, name+".bad"))
			s.drop(name)
			return s.Oldest()
		}
		if string(l.Decision.V) == "null" { // no decision: NULL in SQL, as when written directly
			l.Decision.V = nil
		}
		logs = append(logs, l)
	}
	return name, logs, true, sc.Err()
}

// Remove deletes a drained batch.
func (s *Spool) Remove(name string) error {
	if err := os.Remove(filepath.Join(s.dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("spool remove %s: %w", name, err)
	}
	s.drop(name)
	return nil
}

func (s *Spool) drop(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.files {
		if f.name == name {
			s.bytes -= f.size
			s.files = append(s.files[:i], s.files[i+1:]...)
			return
		}
	}
}

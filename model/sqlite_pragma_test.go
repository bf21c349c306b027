package model_test

import (
	"path/filepath"
	"testing"

	"tollgate/model"
)

// The SQLite store keeps temporary data in memory: with the default (a file), every usage-log batch's
// statement journal spilled to an unlinked temp file, one pwrite per journalled page on top of the WAL's own.
func TestOpenSQLite_TempStoreInMemory(t *testing.T) {
	s, err := model.Open("", filepath.Join(t.TempDir(), "pragma.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var mode int
	if err := s.DB.Raw("PRAGMA temp_store").Scan(&mode).Error; err != nil {
		t.Fatal(err)
	}
	if mode != 2 { // 0 default, 1 file, 2 memory
		t.Fatalf("temp_store = %d, want 2 (memory)", mode)
	}
}

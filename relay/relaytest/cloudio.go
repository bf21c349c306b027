package relaytest

import (
	"bytes"
	"io"
)

func readAllLimit(r io.Reader) ([]byte, error) { return io.ReadAll(r) }

func newBody(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }

package middleware

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
)

// consoleMaxDepth bounds how deeply a console request body may nest (no console body needs more than a few
// levels; a deep one would only cost the decoder).
const consoleMaxDepth = 32

// errNotJSON: the body is not well-formed JSON.
var errNotJSON = errors.New("invalid json")

// shapeError is a well-formed body that the console refuses: a key twice in one object, or too deep.
type shapeError struct {
	dup   string // the repeated key
	depth bool
}

func (e *shapeError) Error() string { return "json shape" }

// checkShape walks a console body once, iteratively, and refuses a key that appears twice in one object —
// compared as encoding/json matches struct fields, ignoring letter case, so {"ratio":"1","Ratio":"9"} cannot
// mean one thing to a reviewer and another to the decoder — and nesting deeper than consoleMaxDepth.
func checkShape(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	type frame struct {
		object bool
		keys   map[string]bool
		key    bool // inside an object, the next token is a key
	}
	var stack []frame
	done := false // one whole value was read: nothing may follow
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			if len(stack) != 0 {
				return errNotJSON
			}
			return nil
		}
		if err != nil || done {
			return errNotJSON
		}
		top := len(stack) - 1
		if k, isKey := tok.(string); isKey && top >= 0 && stack[top].object && stack[top].key {
			fk := strings.ToLower(k)
			if stack[top].keys[fk] {
				return &shapeError{dup: k}
			}
			stack[top].keys[fk] = true
			stack[top].key = false
			continue
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if len(stack) >= consoleMaxDepth {
				return &shapeError{depth: true}
			}
			obj := tok == json.Delim('{')
			f := frame{object: obj, key: obj}
			if obj {
				f.keys = map[string]bool{}
			}
			stack = append(stack, f)
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:top]
		}
		if n := len(stack) - 1; n < 0 {
			done = true
		} else if stack[n].object {
			stack[n].key = true // a value ended: a key comes next
		}
	}
}

package tokencount

import (
	"container/heap"
	"math"
	"unicode/utf8"
)

// longPiece is where the merge switches from tiktoken's quadratic scan (fastest for the short pieces of
// prose) to a heap; a pre-tokenizer piece can be as long as the input (a base64 blob is one "word").
const longPiece = 128

const noRank = math.MaxInt

// vocab is one BPE vocabulary: the ranks of byte sequences, and the pre-tokenizer its pattern describes.
type vocab struct {
	ranks map[string]int
	next  func(s string, i int) int
}

// count returns the number of tokens of text, without building the token ids.
func (v *vocab) count(text string) int {
	var buf [64]part // most pieces are short: no allocation for them
	n := 0
	for i := 0; i < len(text); {
		e := v.next(text, i)
		if e <= i { // cannot happen with a correct splitter; never loop forever on one that is not
			_, size := utf8.DecodeRuneInString(text[i:])
			e = i + size
		}
		n += v.pieceTokens(text[i:e], buf[:0])
		i = e
	}
	return n
}

type part struct{ start, rank int }

// pieceTokens runs tiktoken's byte-pair merge (lowest rank first, leftmost on ties) and counts the result.
func (v *vocab) pieceTokens(p string, buf []part) int {
	if _, ok := v.ranks[p]; ok {
		return 1
	}
	if len(p) <= 1 {
		return len(p)
	}
	if len(p) > longPiece {
		return v.longPieceTokens(p)
	}
	parts := buf
	for i := 0; i <= len(p); i++ {
		parts = append(parts, part{start: i, rank: noRank})
	}
	// rankAt is the rank of merging parts i and i+1, i.e. of the bytes from parts[i] to parts[i+2].
	rankAt := func(i int) int {
		if i+2 < len(parts) {
			if r, ok := v.ranks[p[parts[i].start:parts[i+2].start]]; ok {
				return r
			}
		}
		return noRank
	}
	for i := 0; i+2 < len(parts); i++ {
		parts[i].rank = rankAt(i)
	}
	for len(parts) > 2 {
		minI, minR := -1, noRank
		for i := 0; i+1 < len(parts); i++ {
			if parts[i].rank < minR {
				minI, minR = i, parts[i].rank
			}
		}
		if minI < 0 {
			break
		}
		parts = append(parts[:minI+1], parts[minI+2:]...)
		parts[minI].rank = rankAt(minI)
		if minI > 0 {
			parts[minI-1].rank = rankAt(minI - 1)
		}
	}
	return len(parts) - 1
}

// longPieceTokens is the same merge in O(n log n): the parts form a linked list and candidate pairs sit in a
// heap ordered by (rank, position), which is "lowest rank, leftmost on ties". Entries made stale by a merge
// are skipped when popped rather than removed.
func (v *vocab) longPieceTokens(p string) int {
	n := len(p)
	next := make([]int, n) // next[i]: start of the part after the part starting at i; n at the end
	prev := make([]int, n) // prev[i]: start of the part before; -1 at the start
	alive := make([]bool, n)
	for i := range n {
		next[i], prev[i], alive[i] = i+1, i-1, true
	}
	h := make(pairHeap, 0, n)
	push := func(left int) {
		right := next[left]
		if right >= n {
			return
		}
		end := next[right]
		if r, ok := v.ranks[p[left:end]]; ok {
			h = append(h, pair{rank: r, left: left, end: end})
		}
	}
	for i := range n - 1 {
		push(i)
	}
	heap.Init(&h)
	parts := n
	for h.Len() > 0 {
		c := heap.Pop(&h).(pair)
		right := next[c.left]
		if !alive[c.left] || right >= n || next[right] != c.end {
			continue // one of its parts has merged since
		}
		alive[right] = false
		next[c.left] = c.end
		if c.end < n {
			prev[c.end] = c.left
		}
		parts--
		for _, l := range []int{prev[c.left], c.left} {
			if l >= 0 {
				if r, ok := v.rankOfPair(p, l, next); ok {
					heap.Push(&h, pair{rank: r, left: l, end: next[next[l]]})
				}
			}
		}
	}
	return parts
}

func (v *vocab) rankOfPair(p string, left int, next []int) (int, bool) {
	right := next[left]
	if right >= len(p) {
		return 0, false
	}
	r, ok := v.ranks[p[left:next[right]]]
	return r, ok
}

type pair struct{ rank, left, end int }

type pairHeap []pair

func (h pairHeap) Len() int { return len(h) }
func (h pairHeap) Less(i, j int) bool {
	return h[i].rank < h[j].rank || (h[i].rank == h[j].rank && h[i].left < h[j].left)
}
func (h pairHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pairHeap) Push(x any)   { *h = append(*h, x.(pair)) }
func (h *pairHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

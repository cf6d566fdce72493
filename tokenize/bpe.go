package tokenize

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// noRank marks a pair that is not in the vocabulary.
const noRank = math.MaxUint32

// smallPiece is the longest piece merged with the quadratic scan on a
// stack buffer; longer pieces use the heap merge.
const smallPiece = 256

// loadRanks reads the byte sequence of every token of enc from the
// vocabulary file OpenAI publishes for it (base64 token, space, rank, one
// per line, ranks dense from 0), embedded in the binary by
// pkoukk/tiktoken-go-loader's assets package (data only: no code of it
// runs), and returns the rank table (token bytes -> id) and the ranks of
// the two-byte tokens by their bytes.
func loadRanks(enc Encoding) (*rankTable, *[1 << 16]uint32, error) {
	name, size := "cl100k_base.tiktoken", 100256
	if enc == O200kBase {
		name, size = "o200k_base.tiktoken", 199998
	}
	data, err := assets.Assets.ReadFile(name)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v: %v", ErrUnknownEncoding, enc, err)
	}
	pairs := new([1 << 16]uint32)
	for i := range pairs {
		pairs[i] = noRank
	}
	tokens := make([]string, size)
	// One buffer holds every decoded token and tokens[id] are views of it:
	// decoding never yields more than 3/4 of its input, so buf never grows
	// past its capacity and the views stay put.
	buf := make([]byte, 0, len(data)*3/4)
	for line, n := 1, 0; len(data) > 0; line++ {
		var l []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			l, data = data, nil
		}
		if len(l) == 0 {
			continue
		}
		sp := bytes.IndexByte(l, ' ')
		if sp <= 0 {
			return nil, nil, fmt.Errorf("%w: %v: line %d has no rank", ErrVocabulary, enc, line)
		}
		id, err := strconv.Atoi(string(l[sp+1:]))
		if err != nil || id != n || id >= size {
			return nil, nil, fmt.Errorf("%w: %v: line %d: rank %q, want %d", ErrVocabulary, enc, line, l[sp+1:], n)
		}
		at := len(buf)
		buf, err = base64.StdEncoding.AppendDecode(buf, l[:sp])
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v: token %d: %v", ErrVocabulary, enc, id, err)
		}
		if len(buf) == at {
			return nil, nil, fmt.Errorf("%w: %v: token %d is empty", ErrVocabulary, enc, id)
		}
		tok := unsafe.String(&buf[at], len(buf)-at)
		tokens[id] = tok
		if len(tok) == 2 {
			pairs[pairIndex(tok)] = uint32(id)
		}
		n++
	}
	if tokens[size-1] == "" {
		return nil, nil, fmt.Errorf("%w: %v: fewer than %d tokens", ErrVocabulary, enc, size)
	}
	table, dup := newRankTable(tokens)
	if dup >= 0 {
		return nil, nil, fmt.Errorf("%w: %v: token %d repeats an earlier one", ErrVocabulary, enc, dup)
	}
	return table, pairs, nil
}

// piece encodes one pre-tokenized piece: it returns the number of tokens
// and, when ids is non-nil, appends their ids to *ids.
func (c *Counter) piece(p string, ids *[]uint) int {
	if !utf8.ValidString(p) {
		// The reference reads text as runes: each invalid byte becomes
		// U+FFFD before merging. Rare; this copy is the only allocation.
		p = toRunes(p)
	}
	if id := c.ranks.get(p); id != noRank {
		if ids != nil {
			*ids = append(*ids, uint(id))
		}
		return 1
	}
	if len(p) <= smallPiece {
		return c.mergeSmall(p, ids)
	}
	return c.mergeLarge(p, ids)
}

// toRunes returns s with every invalid byte replaced by U+FFFD.
func toRunes(s string) string { return string([]rune(s)) }

func pairIndex(s string) int { return int(s[0])<<8 | int(s[1]) }

// rank returns the rank of token bytes s, or noRank.
func (c *Counter) rank(s string) uint32 {
	return c.ranks.get(s)
}

// mergeSmall is byte-pair merging as tiktoken does it: repeatedly merge the
// adjacent pair of lowest rank, the leftmost of equal ones.
func (c *Counter) mergeSmall(p string, ids *[]uint) int {
	type part struct {
		start int
		rank  uint32
	}
	var buf [smallPiece + 1]part
	parts := buf[:len(p)+1]
	for i := range parts {
		parts[i] = part{start: i, rank: noRank}
	}
	for i := 0; i+2 <= len(p); i++ {
		parts[i].rank = c.pairs[pairIndex(p[i:])]
	}
	pairRank := func(i int) uint32 {
		if i+2 < len(parts) {
			return c.rank(p[parts[i].start:parts[i+2].start])
		}
		return noRank
	}
	for len(parts) > 1 {
		best, at := uint32(noRank), -1
		for i := 0; i < len(parts)-1; i++ {
			if parts[i].rank < best {
				best, at = parts[i].rank, i
			}
		}
		if at < 0 {
			break
		}
		// Merge parts[at] and parts[at+1]: drop the boundary at+1.
		copy(parts[at+1:], parts[at+2:])
		parts = parts[:len(parts)-1]
		parts[at].rank = pairRank(at)
		if at > 0 {
			parts[at-1].rank = pairRank(at - 1)
		}
	}
	if ids != nil {
		for i := 0; i+1 < len(parts); i++ {
			*ids = append(*ids, uint(c.rank(p[parts[i].start:parts[i+1].start])))
		}
	}
	return len(parts) - 1
}

// mergeScratch is the working memory of mergeLarge, pooled.
type mergeScratch struct {
	next, prev []int32
	ver        []uint32
	heap       mergeHeap
}

var scratchPool = sync.Pool{New: func() any { return new(mergeScratch) }}

type mergeCand struct {
	rank uint32
	at   int32 // start of the left part; ties go to the leftmost
	ver  uint32
}

type mergeHeap []mergeCand

func (h mergeHeap) less(a, b int) bool {
	return h[a].rank < h[b].rank || (h[a].rank == h[b].rank && h[a].at < h[b].at)
}

func (h *mergeHeap) push(x mergeCand) {
	*h = append(*h, x)
	s := *h
	for i := len(s) - 1; i > 0; {
		up := (i - 1) / 2
		if !s.less(i, up) {
			break
		}
		s[i], s[up] = s[up], s[i]
		i = up
	}
}

func (h *mergeHeap) pop() mergeCand {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l := 2*i + 1
		if l >= len(s) {
			break
		}
		m := l
		if r := l + 1; r < len(s) && s.less(r, l) {
			m = r
		}
		if !s.less(m, i) {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

// mergeLarge gives the same merges as mergeSmall in O(n log n): parts are
// a linked list over byte offsets and candidate pairs sit in a min-heap
// ordered by (rank, offset); stale candidates are skipped by version.
func (c *Counter) mergeLarge(p string, ids *[]uint) int {
	n := len(p)
	sc := scratchPool.Get().(*mergeScratch)
	defer scratchPool.Put(sc)
	if cap(sc.next) < n+1 {
		sc.next = make([]int32, n+1)
		sc.prev = make([]int32, n+1)
		sc.ver = make([]uint32, n+1)
	}
	next, prev, ver := sc.next[:n+1], sc.prev[:n+1], sc.ver[:n+1]
	sc.heap = sc.heap[:0]
	for i := 0; i <= n; i++ {
		next[i], prev[i], ver[i] = int32(i+1), int32(i-1), 0
	}
	for i := 0; i+2 <= n; i++ {
		if r := c.pairs[pairIndex(p[i:])]; r != noRank {
			sc.heap.push(mergeCand{rank: r, at: int32(i)})
		}
	}
	// pairRank is the rank of the part at a merged with the one after it.
	pairRank := func(a int32) uint32 {
		b := next[a]
		if int(b) >= n {
			return noRank
		}
		return c.rank(p[a:next[b]])
	}
	parts := n
	for len(sc.heap) > 0 {
		cand := sc.heap.pop()
		a := cand.at
		if cand.ver != ver[a] || next[a] < 0 {
			continue
		}
		b := next[a]
		// Drop b: the part at a now runs to next[b].
		next[a] = next[b]
		if int(next[b]) <= n {
			prev[next[b]] = a
		}
		next[b] = -1
		parts--
		ver[a]++
		if r := pairRank(a); r != noRank {
			sc.heap.push(mergeCand{rank: r, at: a, ver: ver[a]})
		}
		if pa := prev[a]; pa >= 0 {
			ver[pa]++
			if r := pairRank(pa); r != noRank {
				sc.heap.push(mergeCand{rank: r, at: pa, ver: ver[pa]})
			}
		}
	}
	if ids != nil {
		for a := int32(0); int(a) < n; a = next[a] {
			*ids = append(*ids, uint(c.rank(p[a:next[a]])))
		}
	}
	return parts
}

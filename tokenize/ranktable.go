package tokenize

import (
	"math/bits"
	"strings"
)

// rankTable maps token bytes to token ids (merge ranks): an open-addressing
// hash table over one string holding every token's bytes. It is built once
// per encoding and only read afterwards, so it needs no locking; a look-up
// hashes the key inline and usually probes one slot, cheaper than a general
// map for the short keys of byte-pair merging.
type rankTable struct {
	slots []rankSlot
	shift uint // 64 - log2(len(slots))
	mask  uint64
	blob  string // all token bytes, back to back
}

type rankSlot struct {
	tag uint32 // low bits of the key's hash
	id  uint32
	off uint32 // key = blob[off : off+n]
	n   uint32 // 0 marks an empty slot (no token is empty)
}

const hashMul = 0x9e3779b97f4a7c15

// hashKey hashes s by 8-byte words and a multiply-xorshift finish.
func hashKey(s string) uint64 {
	h := uint64(len(s)) * hashMul
	for len(s) >= 8 {
		w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		h = bits.RotateLeft64((h^w)*hashMul, 31)
		s = s[8:]
	}
	var w uint64
	for i := len(s) - 1; i >= 0; i-- {
		w = w<<8 | uint64(s[i])
	}
	h = (h ^ w) * hashMul
	return h ^ h>>29
}

// newRankTable builds the table of tokens[id] -> id, sized for a load of
// at most 1/2. It returns the id of a repeated token, or -1.
func newRankTable(tokens []string) (*rankTable, int) {
	size := 1
	for size < 2*len(tokens) {
		size <<= 1
	}
	t := &rankTable{
		slots: make([]rankSlot, size),
		shift: uint(64 - bits.TrailingZeros(uint(size))),
		mask:  uint64(size - 1),
	}
	var blob strings.Builder
	for _, tok := range tokens {
		blob.WriteString(tok)
	}
	t.blob = blob.String()
	off := 0
	for id, tok := range tokens {
		h := hashKey(tok)
		i := h >> t.shift
		for sl := &t.slots[i]; sl.n != 0; sl = &t.slots[i] {
			if sl.tag == uint32(h) && t.blob[sl.off:sl.off+sl.n] == tok {
				return nil, id
			}
			i = (i + 1) & t.mask
		}
		t.slots[i] = rankSlot{tag: uint32(h), id: uint32(id), off: uint32(off), n: uint32(len(tok))}
		off += len(tok)
	}
	return t, -1
}

// get returns the id of token bytes s, or noRank.
func (t *rankTable) get(s string) uint32 {
	h := hashKey(s)
	for i := h >> t.shift; ; i = (i + 1) & t.mask {
		sl := &t.slots[i]
		if sl.n == 0 {
			return noRank
		}
		if sl.tag == uint32(h) && int(sl.n) == len(s) && t.blob[sl.off:sl.off+sl.n] == s {
			return sl.id
		}
	}
}

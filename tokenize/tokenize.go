package tokenize

import (
	"errors"
	"fmt"
	"sync"
)

// Encoding names a tiktoken encoding.
type Encoding uint8

const (
	// Cl100kBase is the encoding of GPT-4 and GPT-3.5-turbo.
	Cl100kBase Encoding = iota + 1
	// O200kBase is the encoding of gpt-4o, gpt-4.1, o1/o3/o4 and the gpt-5 family.
	O200kBase
)

// ErrUnknownEncoding is returned for an encoding name or value that this
// package does not support. Typically it means a typo in a flag or config.
var ErrUnknownEncoding = errors.New("tokenize: unknown encoding")

// ErrCount is the error class of counting failures. Counting itself never
// fails since the pre-tokenizer is a plain scanner (no regular-expression
// engine, no time-outs) and every byte sequence has a token; the sentinel
// stays for callers that test for it.
var ErrCount = errors.New("tokenize: count failed")

// ErrVocabulary is returned by Get when the compiled-in vocabulary of an
// encoding cannot be read completely. Typically it means a dependency
// upgrade changed the vocabulary tables.
var ErrVocabulary = errors.New("tokenize: vocabulary incomplete")

// String returns the tiktoken name of e, e.g. "o200k_base".
func (e Encoding) String() string {
	switch e {
	case Cl100kBase:
		return "cl100k_base"
	case O200kBase:
		return "o200k_base"
	}
	return fmt.Sprintf("Encoding(%d)", uint8(e))
}

// ParseEncoding returns the encoding with the tiktoken name s.
func ParseEncoding(s string) (Encoding, error) {
	switch s {
	case "cl100k_base", "cl100k":
		return Cl100kBase, nil
	case "o200k_base", "o200k":
		return O200kBase, nil
	}
	return 0, fmt.Errorf("%w: %q", ErrUnknownEncoding, s)
}

// Counter counts tokens exactly for one encoding. It is safe for concurrent
// use. Obtain one with Get; counters are shared per encoding.
type Counter struct {
	enc Encoding
	// ranks maps token bytes to token id (= merge rank).
	ranks *rankTable
	// pairs is the rank of every two-byte token, indexed by its bytes:
	// the first round of every merge without map look-ups.
	pairs *[1 << 16]uint32
	// next returns the end of the pre-tokenizer piece that starts at s[i].
	next func(s string, i int) int
}

var (
	countersMu sync.Mutex
	counters   [3]*Counter
)

// Get returns the shared Counter for enc. The first call per encoding
// builds the rank table (about 50 ms for cl100k_base, 120 ms for
// o200k_base); call it at start-up to keep that off the first request.
func Get(enc Encoding) (*Counter, error) {
	if enc != Cl100kBase && enc != O200kBase {
		return nil, fmt.Errorf("%w: %v", ErrUnknownEncoding, enc)
	}
	countersMu.Lock()
	defer countersMu.Unlock()
	if c := counters[enc]; c != nil {
		return c, nil
	}
	ranks, pairs, err := loadRanks(enc)
	if err != nil {
		return nil, err
	}
	c := &Counter{enc: enc, ranks: ranks, pairs: pairs, next: nextCl100k}
	if enc == O200kBase {
		c.next = nextO200k
	}
	counters[enc] = c
	return c, nil
}

// MustGet is Get for package-level initialisation; it panics on an
// unsupported encoding.
func MustGet(enc Encoding) *Counter {
	c, err := Get(enc)
	if err != nil {
		panic(err)
	}
	return c
}

// Encoding returns the encoding c counts.
func (c *Counter) Encoding() Encoding { return c.enc }

// Count returns the number of tokens of s, as tiktoken's encode_ordinary
// would produce them (special-token text is counted as ordinary text).
// Invalid UTF-8 counts as if each invalid byte were U+FFFD, as in the Go
// ports that read text as runes. The error is always nil; it is kept for
// API stability. Count allocates nothing for valid UTF-8.
func (c *Counter) Count(s string) (int, error) {
	n := 0
	for i := 0; i < len(s); {
		e := c.next(s, i)
		n += c.piece(s[i:e], nil)
		i = e
	}
	return n, nil
}

// CountBytes is Count for a byte slice. It neither copies nor keeps b:
// counting only reads its argument during the call.
func (c *Counter) CountBytes(b []byte) (int, error) {
	return c.Count(b2s(b))
}

// Encode returns the token ids of s. It allocates the result; use Count when
// only the number matters.
func (c *Counter) Encode(s string) ([]uint, error) {
	ids := make([]uint, 0, len(s)/4+1)
	for i := 0; i < len(s); {
		e := c.next(s, i)
		c.piece(s[i:e], &ids)
		i = e
	}
	return ids, nil
}

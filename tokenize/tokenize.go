package tokenize

import (
	"errors"
	"fmt"
	"sync"

	"github.com/tiktoken-go/tokenizer"
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

// ErrCount is returned when the underlying tokenizer fails on an input.
// Typically this means a regular-expression engine failure (a time-out on a
// pathological input); the text itself is never rejected.
var ErrCount = errors.New("tokenize: count failed")

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
	enc   Encoding
	codec tokenizer.Codec
}

var (
	countersMu sync.Mutex
	counters   [3]*Counter
)

// Get returns the shared Counter for enc. The first call per encoding
// builds the vocabulary (a few milliseconds to a few tens of milliseconds);
// call it at start-up to keep that off the first request.
func Get(enc Encoding) (*Counter, error) {
	if enc != Cl100kBase && enc != O200kBase {
		return nil, fmt.Errorf("%w: %v", ErrUnknownEncoding, enc)
	}
	countersMu.Lock()
	defer countersMu.Unlock()
	if c := counters[enc]; c != nil {
		return c, nil
	}
	var name tokenizer.Encoding = tokenizer.Cl100kBase
	if enc == O200kBase {
		name = tokenizer.O200kBase
	}
	codec, err := tokenizer.Get(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %v: %v", ErrUnknownEncoding, enc, err)
	}
	c := &Counter{enc: enc, codec: codec}
	// Warm the lazily built vocabulary now, not on the first real call.
	if _, err := codec.Count("warm up"); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCount, err)
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
func (c *Counter) Count(s string) (int, error) {
	n, err := c.codec.Count(s)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrCount, err)
	}
	return n, nil
}

// CountBytes is Count for a byte slice. It copies b once into a string.
func (c *Counter) CountBytes(b []byte) (int, error) {
	return c.Count(string(b))
}

// Encode returns the token ids of s. It allocates the result; use Count when
// only the number matters.
func (c *Counter) Encode(s string) ([]uint, error) {
	ids, _, err := c.codec.Encode(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCount, err)
	}
	return ids, nil
}

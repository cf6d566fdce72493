package repair

import (
	"errors"
	"strconv"
)

// Profile selects how undecided tool-call arguments are decided.
type Profile uint8

const (
	// ProfileExtended (the default) repairs everything ProfileOpenClaw
	// repairs, the same way, plus the real-world quirks; it never closes
	// truncated input.
	ProfileExtended Profile = iota
	// ProfileOpenClaw reproduces OpenClaw 2026.9.6 over pi-ai's streaming
	// parse, including what it does not repair.
	ProfileOpenClaw
	// ProfileOff does no repair: malformed arguments are an error.
	ProfileOff
)

var profileNames = [...]string{"extended", "openclaw", "off"}

// String returns the profile's flag spelling ("extended", "openclaw", "off").
func (p Profile) String() string {
	if int(p) < len(profileNames) {
		return profileNames[p]
	}
	return "Profile(" + strconv.Itoa(int(p)) + ")"
}

// ParseProfile parses a profile name as String spells it. The empty string
// is the default, ProfileExtended.
func ParseProfile(s string) (Profile, bool) {
	switch s {
	case "extended", "":
		return ProfileExtended, true
	case "openclaw":
		return ProfileOpenClaw, true
	case "off":
		return ProfileOff, true
	}
	return ProfileExtended, false
}

// Kind is the kind of an OpenClaw repair result, as OpenClaw names it.
type Kind uint8

const (
	// KindNone: no usable arguments were found.
	KindNone Kind = iota
	// KindPreserved: the whole buffer was a JSON object and is kept as is.
	KindPreserved
	// KindRepaired: the object was extracted from around metadata or
	// parsed from smart quotes.
	KindRepaired
)

// String returns "none", "preserved" or "repaired".
func (k Kind) String() string {
	switch k {
	case KindPreserved:
		return "preserved"
	case KindRepaired:
		return "repaired"
	}
	return "none"
}

// PiHow says which stage of pi-ai's parseStreamingJson produced a value.
type PiHow uint8

const (
	// PiValid: the text was valid JSON and is returned as is.
	PiValid PiHow = iota
	// PiEscapes: valid after repairing control characters and invalid escapes.
	PiEscapes
	// PiPartial: the lossy partial-JSON parse produced the value.
	PiPartial
	// PiEmpty: nothing parsed; the value is {}.
	PiEmpty
)

// String returns "valid", "escapes", "partial" or "empty".
func (h PiHow) String() string {
	switch h {
	case PiValid:
		return "valid"
	case PiEscapes:
		return "escapes"
	case PiPartial:
		return "partial"
	}
	return "empty"
}

// Fix is a set of repairs Extended applied. Each bit has a stable token
// (Fix.String) suitable for metrics.
type Fix uint32

const (
	FixLeadingText    Fix = 1 << iota // metadata or prose before the object was dropped
	FixTrailingText                   // a short suffix after the object was dropped
	FixCodeFence                      // one surrounding markdown fence was removed
	FixTrailingComma                  // commas before } or ] were removed
	FixDoubleEncoded                  // a JSON string holding an object was unwrapped
	FixPythonLiteral                  // True/False/None outside strings became true/false/null
	FixSingleQuote                    // single-quoted strings became JSON strings
	FixConcatenated                   // identical concatenated objects were merged into one
	FixSmartQuote                     // typographic quotes delimiting keys/values were read
	FixEscapes                        // control characters / invalid escapes in strings were escaped
	FixEmpty                          // empty text or null became {}
	FixUnquotedKey                    // bare identifier keys were quoted
	FixStrayEscape                    // literal \n, \r, \t between tokens were dropped
	FixRedundantBrace                 // a doubled opening brace ({{...} or {{...}}) was removed
	fixEnd
)

var fixTokens = [...]string{
	"leading-text", "trailing-text", "code-fence", "trailing-comma",
	"double-encoded", "python-literal", "single-quote", "concatenated",
	"smart-quote", "escapes", "empty", "unquoted-key", "stray-escape",
	"redundant-brace",
}

// Has reports whether every bit of g is in f.
func (f Fix) Has(g Fix) bool { return f&g == g }

// AppendTokens appends the tokens of f, comma separated, in bit order.
func (f Fix) AppendTokens(dst []byte) []byte {
	first := true
	for i, t := range fixTokens {
		if f&(1<<i) == 0 {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, t...)
	}
	return dst
}

// String returns the comma separated tokens of f ("" when empty).
func (f Fix) String() string { return string(f.AppendTokens(nil)) }

// Result reports what Extended did. The zero Result means the input was a
// valid JSON object (or whitespace around one) and was returned byte for
// byte.
type Result struct {
	Fixes    Fix // the repairs applied
	Leading  int // text dropped before the object, in UTF-16 code units (as OpenClaw logs it)
	Trailing int // text dropped after the object, in UTF-16 code units
}

// Repaired reports whether the output differs from the input.
func (r Result) Repaired() bool { return r.Fixes != 0 || r.Leading != 0 || r.Trailing != 0 }

// ErrTruncated is returned by Extended when the arguments end inside an
// unclosed string, object or array. Typically this means the stream was cut
// (end of stream, a length stop, an output limit); the call must not be
// executed with a guessed completion.
var ErrTruncated = errors.New("repair: tool-call arguments are truncated")

// Error tokens (Error.Kind). They are stable: metrics and tests key on them.
const (
	ErrKindSyntax    = "syntax"     // not JSON and no known quirk explains it
	ErrKindNotObject = "not-object" // a valid JSON value that is not an object (array, number, ...)
	ErrKindTooDeep   = "too-deep"   // nesting deeper than MaxDepth
	ErrKindTooLarge  = "too-large"  // input longer than MaxInput
	ErrKindAmbiguous = "ambiguous"  // several different concatenated objects
	ErrKindProse     = "prose"      // text around the object that is not droppable metadata
	ErrKindDuplicate = "duplicate-key"
)

// MaxDepth is the deepest nesting Valid and the repairers accept, as
// encoding/json.
const MaxDepth = 10000

// MaxInput is the longest argument text Extended repairs (valid input of
// any length is accepted by the validity fast path).
const MaxInput = 16 << 20

// Error is an unrepairable argument text.
type Error struct {
	Kind   string // a stable token, one of the ErrKind constants
	Offset int    // byte offset in the input where the problem was found
}

func (e *Error) Error() string {
	return "repair: unrepairable tool-call arguments (" + e.Kind + ") at byte " + strconv.Itoa(e.Offset)
}

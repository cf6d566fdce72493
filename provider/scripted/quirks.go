package scripted

import (
	"strings"
	"unicode/utf8"

	"github.com/ocbench/ocbench/llm"
)

// Quirk is one malformation of the catalogue in the wire-format spec
// (§1.5), applied to valid tool-call arguments or to a tool name by
// Malform and MalformName. The index quirks (a reused index with a new id,
// a missing index) are Call.ReuseIndex and Call.NoIndex, and truncation of
// the body inside a call is Call.Cut.
type Quirk uint8

const (
	QuirkNone          Quirk = iota
	QuirkTrailingComma       // {"a":1,}  (Q5)
	QuirkFence               // ```json\n{...}\n```  (Q8)
	QuirkDoubleEncode        // "{\"a\":1}"  (Q4)
	QuirkPython              // True / False / None outside strings  (Q9)
	QuirkSingleQuotes        // {'a': 'b'}  (Q9)
	QuirkConcat              // {...}{...}  (Q7)
	QuirkHTMLEntities        // &quot; &amp; &lt; &gt; inside strings  (Q1)
	QuirkTruncate            // the first two thirds of the text  (Q6)
	QuirkNull                // the text null  (Q10)
	QuirkEmpty               // no text at all  (Q10)
	QuirkPadName             // " name "  (Q2, names)
	QuirkNamespace           // "functions.name"  (Q3, names)
	numQuirks
)

var quirkNames = [numQuirks]string{"", "trailing_comma", "fence", "double_encode", "python", "single_quotes",
	"concat", "html_entities", "truncate", "null", "empty", "pad_name", "namespace"}

func (q Quirk) String() string {
	if q < numQuirks {
		return quirkNames[q]
	}
	return "unknown"
}

// ParseQuirk is the inverse of Quirk.String.
func ParseQuirk(s string) (Quirk, bool) {
	for i := Quirk(1); i < numQuirks; i++ {
		if quirkNames[i] == s {
			return i, true
		}
	}
	return QuirkNone, false
}

// Malform returns args with the argument quirks applied in order. Name
// quirks leave args unchanged.
func Malform(args string, quirks ...Quirk) string {
	for _, q := range quirks {
		switch q {
		case QuirkTrailingComma:
			args = trailingComma(args)
		case QuirkFence:
			args = "```json\n" + args + "\n```"
		case QuirkDoubleEncode:
			args = string(llm.AppendJSONString(nil, args))
		case QuirkPython:
			args = pythonLiterals(args)
		case QuirkSingleQuotes:
			args = singleQuotes(args)
		case QuirkConcat:
			args += args
		case QuirkHTMLEntities:
			args = htmlEntities(args)
		case QuirkTruncate:
			n := len(args) * 2 / 3
			for n > 0 && n < len(args) && !utf8.RuneStart(args[n]) {
				n--
			}
			args = args[:n]
		case QuirkNull:
			args = "null"
		case QuirkEmpty:
			args = ""
		}
	}
	return args
}

// MalformName returns name with the name quirks applied in order.
func MalformName(name string, quirks ...Quirk) string {
	for _, q := range quirks {
		switch q {
		case QuirkPadName:
			name = " " + name + " "
		case QuirkNamespace:
			name = "functions." + name
		}
	}
	return name
}

// trailingComma inserts a comma before the last closing bracket.
func trailingComma(s string) string {
	i := strings.LastIndexAny(s, "}]")
	if i < 0 {
		return s + ","
	}
	return s[:i] + "," + s[i:]
}

// scanJSON calls outside for each byte outside string literals and inside
// for each string literal (with its quotes), in order.
func scanJSON(s string, outside func(b *strings.Builder, c byte, rest string) int, inside func(b *strings.Builder, lit string)) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		if s[i] == '"' {
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(s))
			inside(&b, s[i:j])
			i = j
			continue
		}
		i += outside(&b, s[i], s[i:])
	}
	return b.String()
}

func keepLiteral(b *strings.Builder, lit string) { b.WriteString(lit) }

func pythonLiterals(s string) string {
	return scanJSON(s, func(b *strings.Builder, c byte, rest string) int {
		for _, r := range [...][2]string{{"true", "True"}, {"false", "False"}, {"null", "None"}} {
			if strings.HasPrefix(rest, r[0]) {
				b.WriteString(r[1])
				return len(r[0])
			}
		}
		b.WriteByte(c)
		return 1
	}, keepLiteral)
}

func singleQuotes(s string) string {
	return scanJSON(s, func(b *strings.Builder, c byte, _ string) int {
		b.WriteByte(c)
		return 1
	}, func(b *strings.Builder, lit string) {
		body := strings.TrimSuffix(strings.TrimPrefix(lit, `"`), `"`)
		body = strings.ReplaceAll(body, `\"`, `"`)
		body = strings.ReplaceAll(body, `'`, `\'`)
		b.WriteByte('\'')
		b.WriteString(body)
		b.WriteByte('\'')
	})
}

var entityReplacer = strings.NewReplacer(`&`, `&amp;`, `\"`, `&quot;`, `<`, `&lt;`, `>`, `&gt;`)

func htmlEntities(s string) string {
	return scanJSON(s, func(b *strings.Builder, c byte, _ string) int {
		b.WriteByte(c)
		return 1
	}, func(b *strings.Builder, lit string) {
		if len(lit) < 2 {
			b.WriteString(lit)
			return
		}
		b.WriteByte('"')
		b.WriteString(entityReplacer.Replace(lit[1 : len(lit)-1]))
		b.WriteByte('"')
	})
}
